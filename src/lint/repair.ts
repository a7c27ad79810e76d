/**
 * Lint applied to a rubric a model wrote (`generate --lint`): each criterion a lint error names is
 * dropped (of a pair, the later one), one at a time, until none is left; an error about the rubric
 * as a whole (no positive points left) cannot be fixed by dropping, and the rubric is refused.
 */
import type { Rubric } from '../rubric/schema.js';
import { lintRubric } from './lint.js';
import type { LintFinding, LintOptions } from './types.js';

export interface LintRepair {
  /** The rubric without the dropped criteria; undefined when an error remains that no drop fixes. */
  rubric: Rubric | undefined;
  /** The error each dropped criterion was dropped for, in order. */
  dropped: LintFinding[];
  /** Errors left (the rubric is then refused). */
  unresolved: LintFinding[];
  /** Warnings of the rubric kept, for the user to read. */
  warnings: LintFinding[];
}

export function dropLintErrors(rubric: Rubric, options: LintOptions = {}): LintRepair {
  let current = rubric;
  const dropped: LintFinding[] = [];
  // Each round drops one criterion, so there are at most as many rounds as criteria.
  for (let round = 0; round <= rubric.criteria.length; round += 1) {
    const findings = lintRubric(current, null, options);
    const errors = findings.filter((finding) => finding.severity === 'error');
    const droppable = errors.find((finding) => finding.criterion_id !== null);
    if (droppable === undefined || current.criteria.length === 1) {
      return { rubric: errors.length === 0 ? current : undefined, dropped, unresolved: errors, warnings: findings.filter((finding) => finding.severity === 'warning') };
    }
    dropped.push(droppable);
    current = { ...current, criteria: current.criteria.filter((criterion) => criterion.id !== droppable.criterion_id) };
  }
  return { rubric: undefined, dropped, unresolved: lintRubric(current, null, options).filter((finding) => finding.severity === 'error'), warnings: [] };
}
