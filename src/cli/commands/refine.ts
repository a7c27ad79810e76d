import type { Command } from 'commander';
import { addUsage, emptyUsage, type Usage } from '../../engine/usage.js';
import { RubricateError, exitCodes, toRubricateError } from '../../errors.js';
import { defaultFilterOptions, describeAction, isFatal } from '../../generation/decompose-filter.js';
import { addGeneratorOptions } from '../generator-options.js';
import { readPromptRecords, readResponsesFile, type PromptRecord } from '../../generation/inputs.js';
import { mapInOrder } from '../../util/ordered-stream.js';
import { promptVersions } from '../../generation/prompts.js';
import { formatRefineSummary, refineRubric, type RefineOutcome } from '../../generation/refine.js';
import { mean, round } from '../../statistics/descriptive.js';
import { rubricateVersion } from '../../version.js';
import { quietHelp, reportInputError, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { addJudgeOptions, parseNumber, parsePositiveInteger } from '../judge-options.js';
import { runSpecOf } from '../run-spec-flags.js';
import { checkRepeatCount, type RunSpec } from '../../spec/run-spec.js';
import { addModelCallOptions, costLine, drain, generatorSummary, prepareModelCalls, type ModelCallFlags, type ModelCalls, type PlannedDryRun } from '../model-calls.js';
import type { Grader } from '../../pipeline/grader.js';
import { syntheticTextTokens } from '../../batch/dry-run.js';
import { storeFilesOf } from '../store-options.js';
import { reportingLintRepair } from '../lint-repair.js';
import { checkFiles, JsonLinesWriter, writeFileAtomic } from '../../util/files.js';
import { existsSync } from 'node:fs';
import { addDeprecatedFlags, deprecatedValue } from '../deprecated-flags.js';
import type { InvalidRecord } from '../../rubric/records.js';

interface RefineFlags extends ModelCallFlags {
  input: string;
  referenceField: string;
  /** A responses file; a bare number here is the deprecated form of --responses-per-prompt. */
  responses?: string;
  responsesPerPrompt?: number;
  responseTemperature: number;
  responseMaxTokens: number;
  iterations: number;
  filter?: boolean;
  passRateHigh: number;
  passRateLow: number;
  correlationThreshold: number;
  clusterThreshold: number;
  textSimilarity: number;
  out: string;
  summary?: string;
  /** Each rubric the generator writes is linted before it is graded; criteria with lint errors dropped, each said. */
  lint?: boolean;
}

const defaultResponses = 8;

export function registerRefineCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('refine')
    .description('refine rubrics until they tell the best responses apart: grade N responses, ask the generator to separate the top two, repeat')
    .requiredOption('--input <file>', 'items or prompts JSONL: {id, prompt, rubric?, reference?, chosen?, rejected?} (no rubric: one is generated first)')
    .option('--reference-field <name>', 'field of --input lines holding a reference answer', 'reference')
    .option('--responses <file>', 'responses JSONL: {id, response} lines or {id, responses: [...]} (instead of sampling)')
    .option('--responses-per-prompt <n>', `responses per prompt: sampled from the generator model (default ${defaultResponses}), or the first n of --responses`, parsePositiveInteger('responses-per-prompt'))
    .option('--response-temperature <t>', 'sampling temperature of the responses', parseNumber('response-temperature', 0), 1)
    .option('--response-max-tokens <n>', 'max tokens per sampled response', parsePositiveInteger('response-max-tokens'), 1024)
    .option('--iterations <i>', 'refinement rounds', parsePositiveInteger('iterations'), 2)
    .option('--filter', 'decompose and filter each round (split criteria nearly all/none meet, drop misaligned and redundant ones, weight correlated clusters)')
    .option('--pass-rate-high <rate>', 'with --filter: split criteria met by at least this share', parseNumber('pass-rate-high', 0), defaultFilterOptions.passRateHigh)
    .option('--pass-rate-low <rate>', 'with --filter: split criteria met by at most this share', parseNumber('pass-rate-low', 0), defaultFilterOptions.passRateLow)
    .option('--correlation-threshold <phi>', 'with --filter: drop one of two criteria whose verdicts correlate at least this much', parseNumber('correlation-threshold', -1), defaultFilterOptions.correlationThreshold)
    .option('--cluster-threshold <phi>', 'with --filter: criteria correlating at least this much share their weight', parseNumber('cluster-threshold', -1), defaultFilterOptions.clusterThreshold)
    .option('--text-similarity <jaccard>', 'with --filter: drop one of two criteria whose wording overlaps at least this much', parseNumber('text-similarity', 0), defaultFilterOptions.textSimilarityThreshold)
    .requiredOption('--out <file>', 'refined items JSONL: {id, prompt, rubric, reference?, metadata}')
    .option('--summary <file>', 'write the per-round separation summary (JSON) here')
    .option('--lint', 'lint each rubric the generator writes (the starting one, each refinement) before it is graded: drop the criteria with lint errors, each said with its rule; a refinement no drop fixes stops that prompt\'s rounds')
    .option('--quiet', quietHelp);
  addGeneratorOptions(command);
  addJudgeOptions(command);
  addModelCallOptions(command);
  addDeprecatedFlags(command, context);
  organizeHelp(command, [
    'rubricate refine --input examples/items.jsonl --responses-per-prompt 4 --generator openai:gpt-4.1 --judge openai:gpt-4.1-mini --out refined.jsonl',
    'rubricate refine --input examples/items.jsonl --responses-per-prompt 4 --generator scripted --judge scripted --iterations 2 --filter --out refined.jsonl',
  ]);
  command.action(async (flags: RefineFlags, self: Command) => {
    context.exitCode = await runRefine(flags, runSpecOf(self), context);
  });
}

type Outcome = { kind: 'invalid'; read: InvalidRecord } | { kind: 'ok'; record: PromptRecord; outcome: RefineOutcome; responses: number } | { kind: 'error'; record: PromptRecord; error: RubricateError };

type FilterSettings = Exclude<RefineSettings['filter'], undefined>;
type RefineSettings = Parameters<typeof refineRubric>[1];
type PromptReport = Omit<RefineOutcome, 'rubric' | 'judge_usage'> & { responses: number };

/** What every step of one `refine` run reads: its flags (deprecated forms resolved), models and inputs. */
interface RefineRun {
  flags: RefineFlags;
  context: CommandContext;
  models: ModelCalls;
  /** Responses per prompt from --responses-per-prompt; undefined takes all of a file, or the default when sampling. */
  perPrompt: number | undefined;
  responsesFromFile: Map<string, string[]> | undefined;
  filter: FilterSettings;
}

/** What the write pass gathered, for the summary file and the closing lines. */
interface RefineTally {
  reports: PromptReport[];
  judgeUsage: Usage;
  counts: { ok: number; failed: number; invalid: number };
}

async function runRefine(flags: RefineFlags, spec: RunSpec, context: CommandContext): Promise<number> {
  const checked = checkRefineFlags(flags, spec, context);
  const responsesFromFile = checked.responses ? await readResponsesFile(checked.responses) : undefined;
  const models = await prepareModelCalls(checked, spec, context, { out: checked.out, grading: true });
  const run: RefineRun = { flags: checked, context, models, perPrompt: checked.responsesPerPrompt, responsesFromFile, filter: filterSettingsOf(checked) };
  if (models.dryRun) return estimateRefine(run, models.dryRun);
  const grader = models.grader();
  const tally = await writeRefinedRubrics(run);
  if (tally === 'interrupted') return exitCodes.interrupted;
  models.finish();
  await models.close();
  const aggregate = summarize(tally.reports);
  const cost = { generator: models.costOf('generator', models.generator.usage), judge: models.costOf('judge', tally.judgeUsage) };
  if (checked.summary) await writeRefineSummary(checked.summary, run, grader, tally, aggregate, cost);
  if (!checked.quiet) printRefineTotals(run, tally, aggregate, cost);
  return tally.counts.failed + tally.counts.invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
}

/** Refuses contradictory flags and unbounded counts before anything is read; returns the flags with `--responses N` resolved. */
function checkRefineFlags(flags: RefineFlags, spec: RunSpec, context: CommandContext): RefineFlags {
  if (flags.passRateLow >= flags.passRateHigh) throw new RubricateError('CONFIG_INVALID', '--pass-rate-low must be below --pass-rate-high', { field: 'pass-rate-low' });
  // `--responses 8` once meant eight sampled responses; a number that is not a file still does, with a notice.
  if (flags.responses !== undefined && /^\d+$/.test(flags.responses) && !existsSync(flags.responses)) {
    if (flags.responsesPerPrompt !== undefined) throw new RubricateError('CONFIG_INVALID', '--responses N is the old form of --responses-per-prompt N: give only --responses-per-prompt', { field: 'responses' });
    deprecatedValue(context, `--responses ${flags.responses}`, `--responses-per-prompt ${flags.responses}`);
    flags = { ...flags, responsesPerPrompt: parsePositiveInteger('responses')(flags.responses), responses: undefined };
  }
  checkRepeatCount(spec.limits, '--iterations', flags.iterations);
  if (flags.responsesPerPrompt !== undefined) checkRepeatCount(spec.limits, '--responses-per-prompt', flags.responsesPerPrompt);
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input }, { flag: 'responses', path: flags.responses }, { flag: 'prices', path: flags.prices }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'summary', path: flags.summary }],
    keep: storeFilesOf(flags),
  });
  return flags;
}

function filterSettingsOf(flags: RefineFlags): FilterSettings {
  if (!flags.filter) return false;
  return {
    passRateHigh: flags.passRateHigh,
    passRateLow: flags.passRateLow,
    correlationThreshold: flags.correlationThreshold,
    clusterThreshold: flags.clusterThreshold,
    textSimilarityThreshold: flags.textSimilarity,
  };
}

/** A prompt's responses: the first --responses-per-prompt of the file's, or that many sampled from the generator. */
async function collectResponses(run: RefineRun, record: PromptRecord): Promise<string[]> {
  const { flags, perPrompt, responsesFromFile } = run;
  if (responsesFromFile) {
    const given = responsesFromFile.get(record.id) ?? [];
    return perPrompt !== undefined ? given.slice(0, perPrompt) : given;
  }
  const count = perPrompt ?? defaultResponses;
  // Every sample is asked before a failed one fails the prompt (its calls are paid, and a dry run counts them all).
  const sampled = await Promise.allSettled(
    Array.from({ length: count }, (_, index) => run.models.generator.sampleResponse(record.prompt, { sample: index, temperature: flags.responseTemperature, maxTokens: flags.responseMaxTokens })),
  );
  const failed = sampled.find((result) => result.status === 'rejected');
  if (failed) throw failed.reason;
  return sampled.map((result) => (result as PromiseFulfilledResult<string>).value);
}

/** One prompt refined; a failure of its own becomes an error outcome, a fatal one (or an interrupt) stops the run. */
async function refinePrompt(run: RefineRun, grader: Grader, record: PromptRecord): Promise<Outcome> {
  try {
    const responses = await collectResponses(run, record);
    if (responses.length < 2) {
      throw new RubricateError('INPUT_INVALID', `${responses.length} response${responses.length === 1 ? '' : 's'} for this prompt; refinement needs at least 2`, {
        field: 'responses',
      });
    }
    const outcome = await refineRubric(
      { id: record.id, prompt: record.prompt, rubric: record.rubric, reference: record.reference, responses, pairs: record.pairs },
      { generator: run.models.generator, grader, iterations: run.flags.iterations, filter: run.filter, ...(run.flags.lint ? { repair: reportingLintRepair(run.context, { criteriaDropped: 0, rubricsRefused: 0 }, (at: { id: string; iteration: number }) => `id ${at.id} round ${at.iteration}`) } : {}) },
    );
    return { kind: 'ok', record, outcome, responses: responses.length };
  } catch (error) {
    if (isFatal(error) || run.context.signal.aborted) throw error;
    return { kind: 'error', record, error: toRubricateError(error) };
  }
}

/** Every prompt of --input refined, in input order, a window at a time. */
function refineAll(run: RefineRun): AsyncIterable<Outcome> {
  const grader = run.models.grader();
  const reads = readPromptRecords(run.flags.input, { referenceField: run.flags.referenceField, acceptRubric: true });
  return mapInOrder(reads, async (read): Promise<Outcome> => (read.kind === 'invalid' ? { kind: 'invalid', read } : refinePrompt(run, grader, read.record)), { window: run.models.window });
}

async function estimateRefine(run: RefineRun, dryRun: PlannedDryRun): Promise<number> {
  const { flags, responsesFromFile, perPrompt, filter } = run;
  try {
    await dryRun.estimate(() => drain(refineAll(run)), {
      command: 'refine',
      planned: true,
      assumptions: [
        `every one of the --iterations ${flags.iterations} round(s) runs, grading every response with that round's rubric; a prompt without a rubric gets one generated first`,
        ...(responsesFromFile ? [] : [`${perPrompt ?? defaultResponses} responses per prompt are sampled from the generator, each of ${Math.min(flags.responseMaxTokens, syntheticTextTokens)} tokens`]),
        ...(filter ? [`--filter: every verdict being "met", each round splits as many criteria as it may (${defaultFilterOptions.maxDecompositions}): an upper bound on the decompositions`] : []),
      ],
    });
    return exitCodes.success;
  } finally {
    await run.models.close();
  }
}

/** The refine pass: each refined rubric written as it completes; on an interrupt what was written stays, and the rerun finishes it. */
async function writeRefinedRubrics(run: RefineRun): Promise<RefineTally | 'interrupted'> {
  const { flags, context } = run;
  const writer = new JsonLinesWriter(flags.out);
  const tally: RefineTally = { reports: [], judgeUsage: emptyUsage(), counts: { ok: 0, failed: 0, invalid: 0 } };
  try {
    for await (const result of refineAll(run)) {
      if (result.kind === 'invalid') {
        tally.counts.invalid += 1;
        reportInputError(context, result.read.error);
      } else if (result.kind === 'error') {
        tally.counts.failed += 1;
        context.stderr(`failed: ${flags.input}:${result.record.line} id ${result.record.id}: [${result.error.code}] ${result.error.message}`);
      } else {
        await keepRefined(run, writer, tally, result);
      }
    }
  } catch (error) {
    await writer.close();
    await run.models.close();
    if (context.signal.aborted) {
      context.stderr('interrupted: refined rubrics written so far are complete; rerun the same command to finish (answers already paid for come from the cache)');
      return 'interrupted';
    }
    throw error;
  }
  await writer.close();
  return tally;
}

/** A refined prompt: its line written, its report and judge usage kept, its rounds printed. */
async function keepRefined(run: RefineRun, writer: JsonLinesWriter, tally: RefineTally, result: Extract<Outcome, { kind: 'ok' }>): Promise<void> {
  const { outcome } = result;
  tally.counts.ok += 1;
  addUsage(tally.judgeUsage, outcome.judge_usage);
  await writer.write(refinedLine(result, Boolean(run.filter)));
  const { rubric: _rubric, judge_usage: _usage, ...report } = outcome;
  tally.reports.push({ ...report, responses: result.responses });
  if (!run.flags.quiet) printRefineRounds(run.context, outcome);
}

/** The output line: the input's prompt, reference and metadata, the refined rubric, and how the refinement went. */
function refinedLine({ record, outcome, responses }: Extract<Outcome, { kind: 'ok' }>, filtered: boolean): Record<string, unknown> {
  const first = outcome.iterations[0];
  const last = outcome.iterations[outcome.iterations.length - 1];
  return {
    id: record.id,
    prompt: record.promptInput,
    rubric: outcome.rubric,
    ...(record.reference !== undefined ? { reference: record.reference } : {}),
    metadata: {
      ...record.metadata,
      refinement: {
        prompt_version: promptVersions.refine,
        responses,
        rounds: outcome.iterations.length - 1,
        filter: filtered,
        separation_start: first.separation,
        separation_end: outcome.final.separation,
        ...(last.error ? { stopped: last.error } : {}),
      },
    },
  };
}

/** The rounds' summary and the first filter actions (the rest are in the summary file). */
function printRefineRounds(context: CommandContext, outcome: RefineOutcome): void {
  context.stderr(formatRefineSummary(outcome));
  const actions = [...outcome.iterations.flatMap((iteration) => iteration.filter ?? []), ...(outcome.final.filter ?? [])];
  for (const action of actions.slice(0, 12)) context.stderr(`    ${describeAction(action)}`);
  if (actions.length > 12) context.stderr(`    … ${actions.length - 12} more filter actions in the report`);
}

type RefineCost = { generator: number | null; judge: number | null };

async function writeRefineSummary(file: string, run: RefineRun, grader: Grader, tally: RefineTally, aggregate: ReturnType<typeof summarize>, cost: RefineCost): Promise<void> {
  const { flags, filter } = run;
  const { generator } = run.models;
  const document = {
    rubricate_version: rubricateVersion,
    method: 'refine',
    prompt_version: promptVersions.refine,
    generator: generatorSummary(generator),
    judge: grader.judgeInfo ?? null,
    scoring: grader.scoring.name,
    iterations: flags.iterations,
    filter: filter || null,
    responses_source: flags.responses ? 'file' : 'sampled',
    summary: aggregate,
    usage: { generator: { ...generator.usage, cost_usd: cost.generator }, judge: { ...tally.judgeUsage, cost_usd: cost.judge } },
    prompts: tally.reports,
  };
  await writeFileAtomic(file, `${JSON.stringify(document, null, 2)}\n`);
}

function printRefineTotals(run: RefineRun, tally: RefineTally, aggregate: ReturnType<typeof summarize>, cost: RefineCost): void {
  const { flags, context } = run;
  const { counts, judgeUsage } = tally;
  const { generator } = run.models;
  const format = (value: number | null) => (value === null ? 'n/a' : value.toFixed(4));
  context.stderr(
    [
      `${counts.ok + counts.failed + counts.invalid} prompts: ${counts.ok} refined, ${counts.failed} failed, ${counts.invalid} invalid`,
      `mean score std: ${format(aggregate.std_start)} → ${format(aggregate.std_end)}; mean top-2 gap: ${format(aggregate.top2_gap_start)} → ${format(aggregate.top2_gap_end)}; unique best response: ${aggregate.unique_top_start} → ${aggregate.unique_top_end} of ${counts.ok}`,
      `generator: ${generator.usage.calls} calls, ${generator.usage.cache_hits} cache hits; judge: ${judgeUsage.calls} calls, ${judgeUsage.cache_hits} cache hits`,
      costLine(cost),
      `rubrics: ${flags.out}${flags.summary ? `\nsummary: ${flags.summary}` : ''}`,
    ].join('\n'),
  );
}

/** Means over prompts of the first and final separation figures. */
function summarize(reports: ReadonlyArray<Pick<RefineOutcome, 'iterations' | 'final'>>) {
  const pick = (values: Array<number | null>) => {
    const present = values.filter((value): value is number => value !== null);
    return present.length > 0 ? round(mean(present)) : null;
  };
  return {
    prompts: reports.length,
    std_start: pick(reports.map((report) => report.iterations[0].separation.std)),
    std_end: pick(reports.map((report) => report.final.separation.std)),
    range_start: pick(reports.map((report) => report.iterations[0].separation.range)),
    range_end: pick(reports.map((report) => report.final.separation.range)),
    top2_gap_start: pick(reports.map((report) => report.iterations[0].separation.top2_gap)),
    top2_gap_end: pick(reports.map((report) => report.final.separation.top2_gap)),
    unique_top_start: reports.filter((report) => report.iterations[0].separation.top_ties === 1).length,
    unique_top_end: reports.filter((report) => report.final.separation.top_ties === 1).length,
  };
}
