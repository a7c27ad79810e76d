/**
 * Adjusting p-values when several hypotheses are tested at once (one per tag, say): Holm's
 * step-down method (controls the family-wise error rate) and Benjamini–Hochberg's step-up
 * method (controls the false discovery rate). Both return adjusted p-values in the input's
 * order, capped at 1, and monotone in the raw p-values as statsmodels' `multipletests` gives them.
 */

function ascendingOrder(pValues: readonly number[]): number[] {
  for (const value of pValues) if (!(value >= 0 && value <= 1)) throw new RangeError(`p-values must be in [0, 1], got ${value}`);
  return pValues.map((_, index) => index).sort((left, right) => pValues[left] - pValues[right] || left - right);
}

/** Holm: the i-th smallest of m p-values becomes max over j ≤ i of min(1, (m − j + 1)·p₍ⱼ₎). */
export function holmAdjust(pValues: readonly number[]): number[] {
  const order = ascendingOrder(pValues);
  const count = pValues.length;
  const adjusted = new Array<number>(count);
  let running = 0;
  order.forEach((index, rank) => {
    running = Math.max(running, Math.min(1, (count - rank) * pValues[index]));
    adjusted[index] = running;
  });
  return adjusted;
}

/** Benjamini–Hochberg: the i-th smallest becomes min over j ≥ i of min(1, m·p₍ⱼ₎ ÷ j). */
export function benjaminiHochbergAdjust(pValues: readonly number[]): number[] {
  const order = ascendingOrder(pValues);
  const count = pValues.length;
  const adjusted = new Array<number>(count);
  let running = 1;
  for (let rank = count - 1; rank >= 0; rank -= 1) {
    const index = order[rank];
    running = Math.min(running, (count * pValues[index]) / (rank + 1));
    adjusted[index] = Math.min(1, running);
  }
  return adjusted;
}
