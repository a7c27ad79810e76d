/**
 * Ridge regression with an unpenalised intercept: each feature is standardised on the training
 * rows (mean 0, population standard deviation 1; a constant feature is only centred), then
 * β = (XᵀX + λI)⁻¹ Xᵀ(y − ȳ) by a Cholesky factorisation, and the model is mapped back to the
 * raw features. λ is on the standardised scale, so one grid serves features of any unit.
 */

export interface RidgeModel {
  intercept: number;
  /** One coefficient per feature, on the raw (unstandardised) scale. */
  coefficients: number[];
  lambda: number;
}

/** The standardised normal equations of a data set, which every penalty shares. */
export interface RidgeSystem {
  width: number;
  centre: Float64Array;
  scale: Float64Array;
  targetMean: number;
  /** XᵀX of the standardised features (lower triangle), and Xᵀ(y − ȳ). */
  gram: Float64Array;
  moment: Float64Array;
}

/** Fits ridge regression of `targets` on the rows of `features` (every row the same length). */
export function fitRidge(features: ReadonlyArray<readonly number[]>, targets: readonly number[], lambda: number): RidgeModel {
  return solveRidge(ridgeSystem(features, targets), lambda);
}

/** The normal equations of a data set, built once for any number of penalties (`solveRidge`). */
export function ridgeSystem(features: ReadonlyArray<readonly number[]>, targets: readonly number[]): RidgeSystem {
  const rows = features.length;
  if (rows === 0 || rows !== targets.length) throw new RangeError('fitRidge: needs as many targets as rows, and at least one');
  const width = features[0].length;
  const centre = new Float64Array(width);
  const scale = new Float64Array(width);
  for (const row of features) {
    if (row.length !== width) throw new RangeError('fitRidge: every row must have the same number of features');
    for (let column = 0; column < width; column += 1) centre[column] += row[column] / rows;
  }
  for (const row of features) for (let column = 0; column < width; column += 1) scale[column] += (row[column] - centre[column]) ** 2 / rows;
  for (let column = 0; column < width; column += 1) scale[column] = scale[column] > 0 ? Math.sqrt(scale[column]) : 1;
  let targetMean = 0;
  for (const target of targets) targetMean += target / rows;
  const gram = new Float64Array(width * width);
  const moment = new Float64Array(width);
  const standard = new Float64Array(width);
  for (let index = 0; index < rows; index += 1) {
    for (let column = 0; column < width; column += 1) standard[column] = (features[index][column] - centre[column]) / scale[column];
    const residual = targets[index] - targetMean;
    for (let first = 0; first < width; first += 1) {
      moment[first] += standard[first] * residual;
      for (let second = 0; second <= first; second += 1) gram[first * width + second] += standard[first] * standard[second];
    }
  }
  return { width, centre, scale, targetMean, gram, moment };
}

/** The ridge model of a system at one penalty. */
export function solveRidge(system: RidgeSystem, lambda: number): RidgeModel {
  if (!(lambda >= 0)) throw new RangeError('fitRidge: lambda must be non-negative');
  const { width, centre, scale, targetMean, moment } = system;
  const gram = Float64Array.from(system.gram);
  for (let column = 0; column < width; column += 1) gram[column * width + column] += lambda;
  const beta = solveSymmetric(gram, moment, width);
  const coefficients = Array.from(beta, (value, column) => value / scale[column]);
  let intercept = targetMean;
  for (let column = 0; column < width; column += 1) intercept -= coefficients[column] * centre[column];
  return { intercept, coefficients, lambda };
}

/** Solves A x = b for A symmetric positive definite (its lower triangle filled) by Cholesky. */
function solveSymmetric(matrix: Float64Array, right: Float64Array, size: number): Float64Array {
  const lower = new Float64Array(size * size);
  for (let row = 0; row < size; row += 1) {
    for (let column = 0; column <= row; column += 1) {
      let sum = matrix[row * size + column];
      for (let k = 0; k < column; k += 1) sum -= lower[row * size + k] * lower[column * size + k];
      if (row === column) {
        // A singular system (λ = 0 and collinear features) has no unique answer.
        if (!(sum > 1e-12)) throw new RangeError('fitRidge: the features are collinear; use a positive lambda');
        lower[row * size + row] = Math.sqrt(sum);
      } else lower[row * size + column] = sum / lower[column * size + column];
    }
  }
  const forward = new Float64Array(size);
  for (let row = 0; row < size; row += 1) {
    let sum = right[row];
    for (let k = 0; k < row; k += 1) sum -= lower[row * size + k] * forward[k];
    forward[row] = sum / lower[row * size + row];
  }
  const solution = new Float64Array(size);
  for (let row = size - 1; row >= 0; row -= 1) {
    let sum = forward[row];
    for (let k = row + 1; k < size; k += 1) sum -= lower[k * size + row] * solution[k];
    solution[row] = sum / lower[row * size + row];
  }
  return solution;
}

/** The model's prediction for one row of raw features. */
export function predictRidge(model: RidgeModel, row: readonly number[]): number {
  let value = model.intercept;
  for (let column = 0; column < row.length; column += 1) value += model.coefficients[column] * row[column];
  return value;
}
