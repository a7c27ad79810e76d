/**
 * Importance classes → points, for rubrics written with classes instead of numbers.
 * RaR (Essential / Important / Optional / Pitfall), ProfBench (Critical 4 / Major 3 /
 * Minor 2 / Additional 1) and PRBench's six classes (each a range of integer weights; a
 * PRBench criterion carries its own weight in `annotations`, which is the truth — the class
 * midpoint here is only the fallback when that weight is missing).
 */
import { RubricateError } from '../errors.js';

export const importanceSchemes = {
  rar: { essential: 5, important: 3, optional: 1, pitfall: -2 },
  profbench: { critical: 4, major: 3, minor: 2, additional: 1 },
  prbench: {
    'critically important': 9,
    important: 5.5,
    'slightly important': 2,
    'slightly detrimental': -2,
    detrimental: -5.5,
    'critically detrimental': -9,
  },
} as const satisfies Record<string, Record<string, number>>;

export type ImportanceScheme = keyof typeof importanceSchemes;

/** Points for an importance label under a scheme, with optional per-rubric overrides. */
export function pointsForImportance(label: string, scheme: ImportanceScheme = 'rar', overrides?: Record<string, number>): number {
  const key = label.trim().toLowerCase().replace(/\s+criteria$/, '');
  const override = overrides && Object.entries(overrides).find(([name]) => name.trim().toLowerCase() === key);
  if (override) return override[1];
  const table = importanceSchemes[scheme] as Record<string, number>;
  // Own keys only: "constructor" or "__proto__" must not find Object.prototype's members.
  if (Object.hasOwn(table, key)) return table[key];
  throw new RubricateError('INPUT_INVALID', `unknown importance "${label}" for scheme ${scheme} (known: ${Object.keys(table).join(', ')})`, { field: 'importance' });
}
