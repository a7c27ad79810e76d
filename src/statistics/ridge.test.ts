import { describe, expect, it } from 'vitest';
import { fitRidge, predictRidge } from './ridge.js';

describe('ridge regression', () => {
  const features = [
    [1, 0.5],
    [2, -1],
    [3, 2],
    [4, 0],
    [5, 1.5],
  ];
  const targets = features.map(([a, b]) => 0.5 + 2 * a - 3 * b);

  it('recovers an exact linear relation without a penalty', () => {
    const model = fitRidge(features, targets, 0);
    expect(model.intercept).toBeCloseTo(0.5, 10);
    expect(model.coefficients[0]).toBeCloseTo(2, 10);
    expect(model.coefficients[1]).toBeCloseTo(-3, 10);
    expect(predictRidge(model, [10, 1])).toBeCloseTo(17.5, 9);
  });

  it('solves the penalised normal equations on the standardised features, and shrinks as λ grows', () => {
    const noisy = targets.map((value, index) => value + [0.3, -0.2, 0.1, -0.4, 0.2][index]);
    const lambda = 2.5;
    const model = fitRidge(features, noisy, lambda);
    // Gradient of Σ(y − ŷ)² + λ Σ (β_j s_j)² vanishes at the fit: Σ (y − ŷ)·x_j = λ β_j s_j² for each feature.
    const spreads = [0, 1].map((column) => {
      const values = features.map((row) => row[column]);
      const centre = values.reduce((sum, value) => sum + value, 0) / values.length;
      return Math.sqrt(values.reduce((sum, value) => sum + (value - centre) ** 2, 0) / values.length);
    });
    for (const column of [0, 1]) {
      const gradient = features.reduce((sum, row, index) => sum + (noisy[index] - predictRidge(model, row)) * row[column], 0);
      expect(gradient).toBeCloseTo(lambda * model.coefficients[column] * spreads[column] ** 2, 9);
    }
    expect(Math.abs(fitRidge(features, noisy, 100).coefficients[0])).toBeLessThan(Math.abs(model.coefficients[0]));
  });

  it('keeps a constant feature at zero weight and refuses collinear features without a penalty', () => {
    expect(fitRidge([[1, 7], [2, 7], [3, 7]], [1, 2, 3], 0.1).coefficients[1]).toBe(0);
    expect(() => fitRidge([[1, 2], [2, 4], [3, 6]], [1, 2, 3], 0)).toThrow(/collinear/);
  });
});
