/**
 * Arithmetic exactly as the reference scorers do it, so a parity scoring gives the same
 * bits: NumPy's pairwise `np.sum`/`np.mean`, `np.std` (population) and `round` (scale,
 * round half to even, unscale), and Python's float formatting. Python's left-to-right
 * `sum(values) / len(values)` is `mean` in `descriptive.ts`.
 */

/**
 * NumPy's pairwise summation (the `pairwise_sum` loop of its add reduction): blocks of up to
 * 128 summed with 8 accumulators, larger runs split in two at a multiple of 8.
 */
function pairwiseSum(values: readonly number[], start: number, count: number): number {
  if (count < 8) {
    let total = 0;
    for (let index = 0; index < count; index += 1) total += values[start + index];
    return total;
  }
  if (count <= 128) {
    const partial = [values[start], values[start + 1], values[start + 2], values[start + 3], values[start + 4], values[start + 5], values[start + 6], values[start + 7]];
    let index = 8;
    for (; index < count - (count % 8); index += 8) {
      for (let lane = 0; lane < 8; lane += 1) partial[lane] += values[start + index + lane];
    }
    let total = partial[0] + partial[1] + (partial[2] + partial[3]) + (partial[4] + partial[5] + (partial[6] + partial[7]));
    for (; index < count; index += 1) total += values[start + index];
    return total;
  }
  let half = Math.floor(count / 2);
  half -= half % 8;
  return pairwiseSum(values, start, half) + pairwiseSum(values, start + half, count - half);
}

/** `np.sum` of a float64 vector (contiguous, fewer than 8192 elements per buffer). */
export function numpySum(values: readonly number[]): number {
  if (values.length === 0) return 0;
  return pairwiseSum(values, 0, values.length);
}

/** `np.mean` of a float64 vector. */
export function numpyMean(values: readonly number[]): number {
  return numpySum(values) / values.length;
}

/** `np.std` (ddof = 0): mean of squared deviations from `np.mean`, both summed pairwise. */
export function numpyStd(values: readonly number[]): number {
  const average = numpyMean(values);
  return Math.sqrt(numpySum(values.map((value) => (value - average) * (value - average))) / values.length);
}

/**
 * NumPy's `round(x, digits)` (what `round()` does to a NumPy float): multiply by 10^digits,
 * round half to even, divide. Not correctly rounded for every input, by design: ProfBench's
 * printed figures (its scores and its judges' bias index) went through it. (`round` in
 * `descriptive.ts` rounds halves up, for our own report figures.)
 */
export function numpyRound(value: number, digits: number): number {
  const scale = 10 ** digits;
  const scaled = value * scale;
  const floor = Math.floor(scaled);
  const difference = scaled - floor;
  let rounded: number;
  if (difference > 0.5) rounded = floor + 1;
  else if (difference < 0.5) rounded = floor;
  else rounded = floor % 2 === 0 ? floor : floor + 1;
  return rounded / scale;
}

/**
 * Python's `f"{value:.{digits}f}"`: the exact binary value rounded half to even at `digits`
 * decimals (JavaScript's `toFixed` rounds exact ties away from zero instead).
 */
export function pythonFixed(value: number, digits: number): string {
  if (!Number.isFinite(value) || Math.abs(value) >= 1e21) return value.toFixed(digits);
  const exact = Math.abs(value).toFixed(100);
  const point = exact.indexOf('.');
  const kept = exact.slice(0, point + 1 + digits);
  const rest = exact.slice(point + 1 + digits);
  const first = rest.charCodeAt(0) - 48;
  const tail = rest.slice(1);
  const lastDigit = Number(kept.replace('.', '').slice(-1));
  const roundUp = first > 5 || (first === 5 && (/[1-9]/.test(tail) || lastDigit % 2 === 1));
  let text = kept.endsWith('.') ? kept.slice(0, -1) : kept;
  if (roundUp) {
    const scaled = BigInt(text.replace('.', '')) + 1n;
    const raw = scaled.toString().padStart(digits + 1, '0');
    text = digits === 0 ? raw : `${raw.slice(0, raw.length - digits)}.${raw.slice(raw.length - digits)}`;
  }
  const negative = value < 0 || Object.is(value, -0);
  return negative ? `-${text}` : text;
}

/**
 * Python's `repr` of a float (shortest round-tripping digits, always with a decimal point or
 * exponent), so figures can be compared with files written by Python's `str.format`.
 */
export function pythonFloatRepr(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Number.POSITIVE_INFINITY) return 'inf';
  if (value === Number.NEGATIVE_INFINITY) return '-inf';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const exponential = value.toExponential();
  const [mantissa, exponentText] = exponential.split('e');
  const exponent = Number(exponentText);
  // Python switches to scientific notation below 1e-4 and from 1e16 up.
  if (exponent < -4 || exponent >= 16) {
    const sign = exponent < 0 ? '-' : '+';
    const magnitude = String(Math.abs(exponent)).padStart(2, '0');
    return `${mantissa}e${sign}${magnitude}`;
  }
  const digits = mantissa.replace('-', '').replace('.', '');
  const negative = value < 0;
  let text: string;
  if (exponent >= 0) {
    const integerDigits = exponent + 1;
    text =
      digits.length <= integerDigits
        ? `${digits.padEnd(integerDigits, '0')}.0`
        : `${digits.slice(0, integerDigits)}.${digits.slice(integerDigits)}`;
  } else {
    text = `0.${'0'.repeat(-exponent - 1)}${digits}`;
  }
  return negative ? `-${text}` : text;
}
