/**
 * Importance levels of generated criteria (Rubrics as Rewards: Essential, Important,
 * Optional, Pitfall) and the points each level is worth. Pitfalls describe undesirable
 * behaviour and carry negative points; the other levels carry positive points.
 */
import { RubricateError } from '../errors.js';

export const importanceLevels = ['Essential', 'Important', 'Optional', 'Pitfall'] as const;
export type Importance = (typeof importanceLevels)[number];
export type ImportancePoints = Readonly<Record<Importance, number>>;

export const defaultImportancePoints: ImportancePoints = { Essential: 5, Important: 3, Optional: 1, Pitfall: -2 };

/** The tag a generated criterion carries, so scores can be broken down by importance. */
export function importanceTag(importance: Importance): string {
  return `importance:${importance.toLowerCase()}`;
}

/**
 * Reads `Essential=5,Important=3,Optional=1,Pitfall=-2` (any subset; the rest keep their
 * defaults). Pitfall points must be negative and the others positive, or the meaning of
 * "met" would flip.
 */
export function parseImportancePoints(text: string, defaults: ImportancePoints = defaultImportancePoints): ImportancePoints {
  const points: Record<Importance, number> = { ...defaults };
  for (const part of text.split(',').map((entry) => entry.trim()).filter(Boolean)) {
    const match = /^([A-Za-z]+)\s*=\s*(-?\d+(?:\.\d+)?)$/.exec(part);
    if (!match) {
      throw new RubricateError('CONFIG_INVALID', `--importance-points: expected LEVEL=NUMBER, got "${part}"`, { field: 'importance-points' });
    }
    const level = importanceLevels.find((name) => name.toLowerCase() === match[1].toLowerCase());
    if (!level) {
      throw new RubricateError('CONFIG_INVALID', `--importance-points: unknown level "${match[1]}" (known: ${importanceLevels.join(', ')})`, { field: 'importance-points' });
    }
    points[level] = Number(match[2]);
  }
  for (const level of importanceLevels) {
    const value = points[level];
    const valid = level === 'Pitfall' ? value < 0 : value > 0;
    if (!Number.isFinite(value) || !valid) {
      throw new RubricateError('CONFIG_INVALID', `--importance-points: ${level} must be ${level === 'Pitfall' ? 'negative' : 'positive'}, got ${value}`, {
        field: 'importance-points',
      });
    }
  }
  return points;
}
