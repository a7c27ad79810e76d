/**
 * Rank correlations between two scorings of the same things: Spearman's ρ (the Pearson
 * correlation of average ranks, as `scipy.stats.spearmanr`) and Kendall's τ-b (ties in either
 * ranking corrected, as `scipy.stats.kendalltau`'s default). Both are null where undefined: fewer
 * than two pairs, or a ranking with no spread (scipy gives NaN).
 */

/** 1-based ranks, ties given the mean of the ranks they span (scipy's `rankdata(method="average")`). */
export function averageRanks(values: readonly number[]): number[] {
  const order = values.map((value, index) => ({ value, index })).sort((left, right) => left.value - right.value);
  const ranks = new Array<number>(values.length);
  for (let start = 0; start < order.length; ) {
    let end = start;
    while (end + 1 < order.length && order[end + 1].value === order[start].value) end += 1;
    // Positions start..end (0-based) hold ranks start+1..end+1: their mean.
    const rank = (start + end) / 2 + 1;
    for (let position = start; position <= end; position += 1) ranks[order[position].index] = rank;
    start = end + 1;
  }
  return ranks;
}

function pearson(x: readonly number[], y: readonly number[]): number | null {
  const n = x.length;
  let sumX = 0;
  let sumY = 0;
  for (let index = 0; index < n; index += 1) {
    sumX += x[index];
    sumY += y[index];
  }
  const meanX = sumX / n;
  const meanY = sumY / n;
  let covariance = 0;
  let varianceX = 0;
  let varianceY = 0;
  for (let index = 0; index < n; index += 1) {
    const dx = x[index] - meanX;
    const dy = y[index] - meanY;
    covariance += dx * dy;
    varianceX += dx * dx;
    varianceY += dy * dy;
  }
  if (varianceX === 0 || varianceY === 0) return null;
  return covariance / Math.sqrt(varianceX * varianceY);
}

function checkLengths(x: readonly number[], y: readonly number[]): void {
  if (x.length !== y.length) throw new RangeError(`two rankings of different lengths (${x.length} and ${y.length})`);
}

/** Spearman's ρ in [−1, 1]; null with fewer than two pairs or a constant ranking. */
export function spearmanRho(x: readonly number[], y: readonly number[]): number | null {
  checkLengths(x, y);
  if (x.length < 2) return null;
  return pearson(averageRanks(x), averageRanks(y));
}

/**
 * Kendall's τ-b in [−1, 1]: (concordant − discordant) ÷ √((n₀ − tiesX)(n₀ − tiesY)) over all
 * n₀ = n(n−1)/2 pairs; null with fewer than two pairs or a constant ranking. Quadratic in n
 * (rubric-quality sets are tens of responses).
 */
export function kendallTauB(x: readonly number[], y: readonly number[]): number | null {
  checkLengths(x, y);
  const n = x.length;
  if (n < 2) return null;
  let concordant = 0;
  let discordant = 0;
  let tiedX = 0;
  let tiedY = 0;
  for (let first = 0; first < n; first += 1) {
    for (let second = first + 1; second < n; second += 1) {
      const dx = Math.sign(x[first] - x[second]);
      const dy = Math.sign(y[first] - y[second]);
      if (dx === 0) tiedX += 1;
      if (dy === 0) tiedY += 1;
      if (dx !== 0 && dy !== 0) {
        if (dx === dy) concordant += 1;
        else discordant += 1;
      }
    }
  }
  const pairs = (n * (n - 1)) / 2;
  const denominator = Math.sqrt((pairs - tiedX) * (pairs - tiedY));
  return denominator === 0 ? null : (concordant - discordant) / denominator;
}
