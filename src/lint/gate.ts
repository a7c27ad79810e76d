/**
 * The `--lint` gate of a long-lived service (`serve --lint`): every rubric a request brings is
 * linted once (remembered by its hash, a bounded number of them), and a request whose rubric has
 * lint errors is refused whole with RUBRIC_LINT_FAILED, before admission or any judge call: a
 * trainer never receives a reward from a rubric that cannot score as written.
 */
import { RubricateError } from '../errors.js';
import { memoizedRubricHash } from '../rubric/hashing.js';
import type { Rubric } from '../rubric/schema.js';
import { lintRubric } from './lint.js';
import type { LintFinding } from './types.js';

/** Lint errors named in a refusal before "and N more". */
const namedErrors = 3;

export class RubricLintGate {
  /** Lint errors by rubric hash (an empty list: the rubric passed), least recently used first. */
  private readonly seen = new Map<string, LintFinding[]>();

  constructor(private readonly capacity = 4096) {}

  /** Throws RUBRIC_LINT_FAILED naming the first rubric with lint errors, if any. */
  refuse(rubrics: Iterable<Rubric>): void {
    for (const rubric of rubrics) {
      const errors = this.errorsOf(rubric);
      if (errors.length === 0) continue;
      const named = errors.slice(0, namedErrors).map((finding) => `[${finding.rule}] ${finding.message}`).join('; ');
      const more = errors.length > namedErrors ? `; and ${errors.length - namedErrors} more` : '';
      throw new RubricateError('RUBRIC_LINT_FAILED', `the rubric has ${errors.length} lint error${errors.length === 1 ? '' : 's'} (serve --lint): ${named}${more}`, { field: 'rubric' });
    }
  }

  private errorsOf(rubric: Rubric): LintFinding[] {
    const hash = memoizedRubricHash(rubric);
    const known = this.seen.get(hash);
    if (known) {
      this.seen.delete(hash);
      this.seen.set(hash, known);
      return known;
    }
    const errors = lintRubric(rubric, null).filter((finding) => finding.severity === 'error');
    if (this.seen.size >= this.capacity) this.seen.delete(this.seen.keys().next().value!);
    this.seen.set(hash, errors);
    return errors;
  }
}
