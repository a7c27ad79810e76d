/**
 * `generate --lint` and `refine --lint` on a rubric a model just wrote: the criteria lint errors name
 * are dropped (`src/lint/repair.ts`), each drop said on stderr with its rule id; a rubric no drop
 * fixes is refused (undefined), said with the errors left. Never silent.
 */
import { dropLintErrors } from '../lint/repair.js';
import type { Rubric } from '../rubric/schema.js';
import type { CommandContext } from './context.js';

export interface LintRepairCounts {
  /** Criteria dropped, over every rubric repaired. */
  criteriaDropped: number;
  /** Rubrics refused. */
  rubricsRefused: number;
}

/** A repair that reports on stderr, naming each rubric by `where(context)` (a pair and attempt, a prompt and round). */
export function reportingLintRepair<T>(context: CommandContext, counts: LintRepairCounts, where: (at: T) => string): (rubric: Rubric, at: T) => Rubric | undefined {
  return (rubric, at) => {
    const repair = dropLintErrors(rubric);
    counts.criteriaDropped += repair.dropped.length;
    for (const finding of repair.dropped) context.stderr(`lint: ${where(at)}: dropped criterion ${finding.criterion_id ?? ''} [${finding.rule}] ${finding.message}`);
    if (repair.rubric === undefined) {
      counts.rubricsRefused += 1;
      context.stderr(`lint: ${where(at)}: [RUBRIC_LINT_FAILED] refused: ${repair.unresolved.map((finding) => `[${finding.rule}] ${finding.message}`).join('; ')}`);
    }
    return repair.rubric;
  };
}
