/**
 * The rubrics of a command's input, linted: what `rubricate lint` prints and what `--lint` on
 * `grade` checks before anything is opened. Items are read as rubric-only records (no response
 * needed); a rubric shared by many items is linted once, under the first item that carries it.
 */
import { RubricateError } from '../errors.js';
import { lintRubric } from '../lint/lint.js';
import type { LintFinding, LintOptions } from '../lint/types.js';
import { memoizedRubricHash } from '../rubric/hashing.js';
import { getItemImporter } from '../formats/index.js';
import type { ImportOptions } from '../formats/types.js';
import type { Rubric } from '../rubric/schema.js';
import type { CommandContext } from './context.js';
import { reportInputError } from './context.js';
import { loadRubrics } from './rubrics-file.js';

/** `--format rubrics`: the input is a rubrics file (JSONL or a JSON list, each rubric with an id). */
export const rubricsFormat = 'rubrics';

export interface LintTally {
  rubrics: number;
  criteria: number;
  errors: number;
  warnings: number;
  /** Input records that could not be read (reported on stderr as they come). */
  invalid: number;
}

/** Each distinct rubric of the input with the first item that carries it (null from a rubrics file). */
async function* rubricsOf(format: string, input: string, options: ImportOptions, context: CommandContext, tally: LintTally): AsyncGenerator<{ rubric: Rubric; itemId: string | null }> {
  if (format === rubricsFormat) {
    for (const rubric of (await loadRubrics(input)).values()) yield { rubric, itemId: null };
    return;
  }
  const seen = new Set<string>();
  for await (const record of getItemImporter(format).read(input, { ...options, withoutResponses: true })) {
    if (record.kind === 'invalid') {
      tally.invalid += 1;
      reportInputError(context, record.error);
      continue;
    }
    const hash = memoizedRubricHash(record.item.rubric);
    if (seen.has(hash)) continue;
    seen.add(hash);
    yield { rubric: record.item.rubric, itemId: record.item.id };
  }
}

/** Lints every rubric of the input, handing each finding to `onFinding` as it is found; returns the counts. */
export async function lintInput(
  source: { format: string; input: string; options: ImportOptions },
  context: CommandContext,
  lintOptions: LintOptions,
  onFinding: (finding: LintFinding) => void | Promise<void>,
  /** Called with each rubric after its static findings (`lint --meta` grades it there). */
  onRubric?: (rubric: Rubric, itemId: string | null) => Promise<void>,
): Promise<LintTally> {
  const tally: LintTally = { rubrics: 0, criteria: 0, errors: 0, warnings: 0, invalid: 0 };
  for await (const { rubric, itemId } of rubricsOf(source.format, source.input, source.options, context, tally)) {
    tally.rubrics += 1;
    tally.criteria += rubric.criteria.length;
    for (const finding of lintRubric(rubric, itemId, lintOptions)) {
      if (finding.severity === 'error') tally.errors += 1;
      else tally.warnings += 1;
      await onFinding(finding);
    }
    await onRubric?.(rubric, itemId);
  }
  return tally;
}

/** How many lint errors `--lint` names in its refusal before "and N more". */
const namedInRefusal = 5;

/**
 * `--lint` on `grade`: refuse to start when a rubric of the input has lint errors, naming them.
 * Warnings are printed and do not stop the run.
 */
export async function refuseOnLintErrors(source: { format: string; input: string; options: ImportOptions }, context: CommandContext, lintOptions: LintOptions & { quiet?: boolean }): Promise<void> {
  const errors: LintFinding[] = [];
  const tally = await lintInput(source, context, lintOptions, (finding) => {
    if (finding.severity === 'error') {
      if (errors.length < namedInRefusal) errors.push(finding);
    } else if (!lintOptions.quiet) context.stderr(`lint warning [${finding.rule}] ${finding.message}`);
  });
  if (tally.errors === 0) return;
  const named = errors.map((finding) => `[${finding.rule}] ${finding.message}`).join('; ');
  const more = tally.errors > errors.length ? `; and ${tally.errors - errors.length} more` : '';
  throw new RubricateError('RUBRIC_LINT_FAILED', `--lint: ${tally.errors} lint error${tally.errors === 1 ? '' : 's'} in the input's rubrics: ${named}${more}. Nothing was graded: run rubricate lint with the same input flags for each fix`, {
    field: 'lint',
    file: source.input,
  });
}
