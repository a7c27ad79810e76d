/**
 * MCR²'s coding rate and the greedy subset selection Auto-Rubric builds on it: the coding rate of
 * n vectors of dimension d (the columns of Z) at distortion ε is
 *
 *   R(Z, ε) = ½ · log det(I + d / (n·ε²) · Z·Zᵀ)
 *
 * the number of bits needed to code them up to ε: it grows with the volume the vectors span, so a
 * vector that repeats one already chosen adds nothing, and one orthogonal to them adds the most.
 * Selection starts empty and adds, at each step, the candidate with the largest rate gain,
 * stopping when no candidate gains more than `minGain` or `maxSelected` are chosen.
 *
 * By Sylvester's identity det(I_d + α·Z·Zᵀ) = det(I_n + α·Zᵀ·Z), so the rate is computed on the
 * n×n Gram matrix (n is small: the selected set), with a Cholesky factor for the log-determinant.
 */
import { RubricateError } from '../errors.js';

/** R(Z, ε) for the vectors given (each of the same dimension d); 0 for none. */
export function codingRate(vectors: ReadonlyArray<readonly number[]>, epsilon: number): number {
  const count = vectors.length;
  if (count === 0) return 0;
  const dimension = vectors[0].length;
  if (vectors.some((vector) => vector.length !== dimension)) throw new RubricateError('INTERNAL', 'coding rate: vectors of different dimensions');
  const scale = dimension / (count * epsilon * epsilon);
  const matrix = vectors.map((row, i) => vectors.map((column, j) => (i === j ? 1 : 0) + scale * dot(row, column)));
  return 0.5 * logDetPositiveDefinite(matrix);
}

export interface CodingRateSelection {
  /** Indices of the chosen vectors, in the order chosen. */
  selected: number[];
  /** The rate gain of each choice, in the same order. */
  gains: number[];
  /** R of the chosen set. */
  rate: number;
}

export interface CodingRateOptions {
  /** Distortion ε (default 0.5). */
  epsilon?: number;
  /** Most vectors chosen. */
  maxSelected: number;
  /** A candidate is added only if it raises the rate by more than this (default 1e-6: a duplicate adds 0). */
  minGain?: number;
}

/**
 * Greedy coding-rate selection. Vectors are scaled to unit length first (a zero vector is never
 * chosen: it spans nothing). Ties go to the lower index, so callers order candidates by preference.
 */
export function selectByCodingRate(vectors: ReadonlyArray<readonly number[]>, options: CodingRateOptions): CodingRateSelection {
  const epsilon = options.epsilon ?? 0.5;
  const minGain = options.minGain ?? 1e-6;
  const units = vectors.map(unit);
  const selected: number[] = [];
  const gains: number[] = [];
  let rate = 0;
  while (selected.length < options.maxSelected) {
    let best: { index: number; rate: number } | undefined;
    for (let index = 0; index < units.length; index += 1) {
      if (selected.includes(index) || units[index] === undefined) continue;
      const candidateRate = codingRate([...selected.map((chosen) => units[chosen]!), units[index]!], epsilon);
      if (best === undefined || candidateRate > best.rate + 1e-12) best = { index, rate: candidateRate };
    }
    if (best === undefined || best.rate - rate <= minGain) break;
    selected.push(best.index);
    gains.push(best.rate - rate);
    rate = best.rate;
  }
  return { selected, gains, rate };
}

function dot(first: readonly number[], second: readonly number[]): number {
  let total = 0;
  for (let index = 0; index < first.length; index += 1) total += first[index] * second[index];
  return total;
}

function unit(vector: readonly number[]): number[] | undefined {
  const length = Math.sqrt(dot(vector, vector));
  return length === 0 ? undefined : vector.map((value) => value / length);
}

/** log det of a symmetric positive definite matrix, by its Cholesky factor (I + α·G always is one). */
function logDetPositiveDefinite(matrix: readonly number[][]): number {
  const size = matrix.length;
  const lower = Array.from({ length: size }, () => new Array<number>(size).fill(0));
  let logDet = 0;
  for (let i = 0; i < size; i += 1) {
    for (let j = 0; j <= i; j += 1) {
      let sum = matrix[i][j];
      for (let k = 0; k < j; k += 1) sum -= lower[i][k] * lower[j][k];
      if (i === j) {
        if (!(sum > 0)) throw new RubricateError('INTERNAL', 'coding rate: matrix is not positive definite');
        lower[i][i] = Math.sqrt(sum);
        logDet += 2 * Math.log(lower[i][i]);
      } else {
        lower[i][j] = sum / lower[j][j];
      }
    }
  }
  return logDet;
}
