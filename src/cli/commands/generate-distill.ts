/**
 * `rubricate generate --distill`: one general (query-agnostic) rubric distilled from labelled
 * preference pairs and their prompts' rubrics (`src/generation/distill.ts`), linted before it is
 * written; every lint drop is said with its rule.
 */
import type { Command } from 'commander';
import { RubricateError, exitCodes } from '../../errors.js';
import { readPreferencePairs, type PreferencePair } from '../../generation/contrastive.js';
import { defaultDistillLimits, distillRubric, type DistillLimits, type DistillReport } from '../../generation/distill.js';
import { readPromptRecords } from '../../generation/inputs.js';
import { dropLintErrors } from '../../lint/repair.js';
import type { Message, Rubric } from '../../rubric/schema.js';
import type { RunSpec } from '../../spec/run-spec.js';
import { writeFileAtomic } from '../../util/files.js';
import { canonicalJson } from '../../util/json.js';
import { reportInputError, type CommandContext } from '../context.js';
import { parsePositiveInteger } from '../judge-options.js';
import { costLine, prepareModelCalls, type ModelCallFlags } from '../model-calls.js';

export interface DistillFlags extends ModelCallFlags {
  input: string;
  format: string;
  out: string;
  summary?: string;
  quiet?: boolean;
  distillRubrics?: string;
  distillPrompts: number;
  distillPairs: number;
  distillCandidates: number;
  distillSize: number;
  distillHardenPairs: number;
  distillSamples: number;
}

export function addDistillOptions(command: Command): Command {
  const limit = (name: string) => parsePositiveInteger(name);
  return command
    .option('--distill', 'distill one general (query-agnostic) rubric from labelled pairs (--format pairs or a pairwise benchmark): propose, evaluate on the pairs, revise, harden, select by coding rate; written as a rubrics file')
    .option('--distill-rubrics <file>', '--distill: items or prompts JSONL whose lines carry a rubric for a prompt of the pairs (matched on the prompt); prompts without one get a contrastive rubric from their first pair')
    .option('--distill-prompts <n>', '--distill: prompts read (their rubrics are what the proposal generalises)', limit('distill-prompts'), defaultDistillLimits.prompts)
    .option('--distill-pairs <n>', '--distill: labelled pairs each candidate criterion is graded on (spread over the prompts)', limit('distill-pairs'), defaultDistillLimits.pairs)
    .option('--distill-candidates <n>', '--distill: criteria each proposal may hold', limit('distill-candidates'), defaultDistillLimits.candidates)
    .option('--distill-size <n>', '--distill: criteria in the distilled rubric at most', limit('distill-size'), defaultDistillLimits.selected)
    .option('--distill-harden-pairs <n>', '--distill: pairs of strong responses (both pass every aligned criterion) to write stricter criteria from; 0 for none', parseCount('distill-harden-pairs'), defaultDistillLimits.hardenPairs)
    .option('--distill-samples <n>', '--distill: proposals asked of the generator, merged (duplicates keep the higher points)', limit('distill-samples'), 1);
}

function parseCount(name: string): (value: string) => number {
  return (value) => {
    const parsed = Number(value);
    if (!Number.isInteger(parsed) || parsed < 0) throw new RubricateError('CONFIG_INVALID', `--${name}: expected a whole number ≥ 0, got "${value}"`, { field: name });
    return parsed;
  };
}

export async function runDistill(flags: DistillFlags, spec: RunSpec, context: CommandContext): Promise<number> {
  if (flags.format === 'prompts') throw new RubricateError('CONFIG_INVALID', '--distill reads labelled pairs: give --format pairs or a pairwise benchmark (llmbar, pandalm, autoj, judgebench, hhh)', { field: 'format' });
  if (flags.dryRun || flags.batch) throw new RubricateError('CONFIG_INVALID', `--distill does not run with --${flags.dryRun ? 'dry-run' : 'batch'} yet: its later stages depend on the verdicts of the earlier ones`, { field: flags.dryRun ? 'dry-run' : 'batch' });
  const { pairs, summary } = await readPreferencePairs(flags.input, flags.format, (message) => context.stderr(`warning: ${message}`));
  for (const error of summary.invalid.slice(0, 20)) reportInputError(context, error);
  if (pairs.length === 0) throw new RubricateError('INPUT_INVALID', 'no usable preference pairs (ties and unlabelled pairs are skipped)', { file: flags.input });
  const rubrics = flags.distillRubrics ? await readGivenRubrics(flags.distillRubrics, pairs, context) : [];
  const limits: DistillLimits = { prompts: flags.distillPrompts, pairs: flags.distillPairs, candidates: flags.distillCandidates, selected: flags.distillSize, hardenPairs: flags.distillHardenPairs };
  const models = await prepareModelCalls(flags, spec, context, { out: flags.out, grading: true });
  let result: Awaited<ReturnType<typeof distillRubric>>;
  try {
    result = await distillRubric(
      { pairs, rubrics },
      {
        generators: [models.generator],
        grader: models.grader(),
        limits,
        samples: flags.distillSamples,
        repair: (rubric) => dropLintErrors(rubric, { generic: true }),
        onNotice: (message) => context.stderr(`warning: ${message}`),
      },
    );
  } catch (error) {
    await models.close();
    if (context.signal.aborted) {
      context.stderr('interrupted: nothing written; rerun the same command to finish (answers already paid for come from the cache)');
      return exitCodes.interrupted;
    }
    throw error;
  }
  models.finish();
  await models.close();
  if (result.rubric) await writeFileAtomic(flags.out, `${JSON.stringify({ ...result.rubric, id: result.rubric.id })}\n`);
  const cost = { generator: models.costOf('generator', result.report.usage.generator), judge: models.costOf('judge', result.report.usage.judge) };
  if (flags.summary) {
    const usage = { generator: { ...result.report.usage.generator, cost_usd: cost.generator }, judge: { ...result.report.usage.judge, cost_usd: cost.judge } };
    await writeFileAtomic(flags.summary, `${JSON.stringify({ ...result.report, usage }, null, 2)}\n`);
  }
  if (!flags.quiet) context.stderr(`${distillSummaryLines(result.report).join('\n')}\n${costLine(cost)}\n${result.rubric ? `rubric: ${flags.out}` : 'rubric: none written'}${flags.summary ? `\nsummary: ${flags.summary}` : ''}`);
  return result.rubric ? exitCodes.success : exitCodes.itemsFailed;
}

/** Rubrics given for the pairs' prompts: only lines whose prompt is one of the pairs' (the first per prompt), so what is kept is bounded by the pairs. */
async function readGivenRubrics(file: string, pairs: readonly PreferencePair[], context: CommandContext): Promise<Array<{ prompt: Message[]; rubric: Rubric }>> {
  const wanted = new Set(pairs.map((pair) => canonicalJson(pair.prompt)));
  const found = new Map<string, { prompt: Message[]; rubric: Rubric }>();
  for await (const read of readPromptRecords(file, { acceptRubric: true })) {
    if (read.kind === 'invalid') {
      reportInputError(context, read.error);
      continue;
    }
    const key = canonicalJson(read.record.prompt);
    if (read.record.rubric && wanted.has(key) && !found.has(key)) found.set(key, { prompt: read.record.prompt, rubric: read.record.rubric });
  }
  return [...found.values()];
}

function distillSummaryLines(report: DistillReport): string[] {
  const count = (status: string) => report.candidates.filter((candidate) => candidate.status === status).length;
  const percent = (value: number | null | undefined) => (value === null || value === undefined ? 'n/a' : `${(value * 100).toFixed(1)}%`);
  return [
    `pairs: ${report.input.pairs} read over ${report.input.prompts} prompts; ${report.input.prompts_used} prompts and ${report.input.pairs_used} pairs used (--distill-prompts ${report.limits.prompts}, --distill-pairs ${report.limits.pairs})`,
    `prompt rubrics: ${report.input.rubrics_given} given, ${report.input.rubrics_generated} generated, ${report.input.rubrics_failed} failed`,
    `candidates: ${report.merge.proposed} proposed, ${report.merge.duplicates} merged as duplicates, ${report.merge.clamped} clamped; ${report.candidates.length} evaluated (${count('revised')} revised, ${report.hardening.proposed} from hardening on ${report.hardening.pairs_used} of ${report.hardening.saturated_pairs} saturated pairs)`,
    `not kept: ${count('misaligned')} misaligned, ${count('undecided')} told no pair apart, ${count('redundant')} redundant (no coding-rate gain or over --distill-size), ${count('lint_dropped')} dropped by lint`,
    `distilled: ${report.selection.selected} criteria (coding rate ${report.selection.rate ?? 'n/a'}, ε ${report.selection.epsilon}); pairs ordered correctly (in-sample): ${percent(report.ordering.distilled?.accuracy)} distilled, ${percent(report.ordering.all_aligned?.accuracy)} all aligned candidates`,
  ];
}
