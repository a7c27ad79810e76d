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
import { addModelCallOptions, costLine, drain, generatorSummary, prepareModelCalls, type ModelCallFlags } from '../model-calls.js';
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

async function runRefine(flags: RefineFlags, spec: RunSpec, context: CommandContext): Promise<number> {
  if (flags.passRateLow >= flags.passRateHigh) throw new RubricateError('CONFIG_INVALID', '--pass-rate-low must be below --pass-rate-high', { field: 'pass-rate-low' });
  // `--responses 8` once meant eight sampled responses; a number that is not a file still does, with a notice.
  if (flags.responses !== undefined && /^\d+$/.test(flags.responses) && !existsSync(flags.responses)) {
    if (flags.responsesPerPrompt !== undefined) throw new RubricateError('CONFIG_INVALID', '--responses N is the old form of --responses-per-prompt N: give only --responses-per-prompt', { field: 'responses' });
    deprecatedValue(context, `--responses ${flags.responses}`, `--responses-per-prompt ${flags.responses}`);
    flags = { ...flags, responsesPerPrompt: parsePositiveInteger('responses')(flags.responses), responses: undefined };
  }
  const perPrompt = flags.responsesPerPrompt;
  checkRepeatCount(spec.limits, '--iterations', flags.iterations);
  if (perPrompt !== undefined) checkRepeatCount(spec.limits, '--responses-per-prompt', perPrompt);
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input }, { flag: 'responses', path: flags.responses }, { flag: 'prices', path: flags.prices }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'summary', path: flags.summary }],
    keep: storeFilesOf(flags),
  });
  const responsesFromFile = flags.responses ? await readResponsesFile(flags.responses) : undefined;
  const models = await prepareModelCalls(flags, spec, context, { out: flags.out, grading: true });
  const { generator } = models;
  const filter = flags.filter
    ? {
        passRateHigh: flags.passRateHigh,
        passRateLow: flags.passRateLow,
        correlationThreshold: flags.correlationThreshold,
        clusterThreshold: flags.clusterThreshold,
        textSimilarityThreshold: flags.textSimilarity,
      }
    : false;

  const collectResponses = async (record: PromptRecord): Promise<string[]> => {
    if (responsesFromFile) {
      const given = responsesFromFile.get(record.id) ?? [];
      return perPrompt !== undefined ? given.slice(0, perPrompt) : given;
    }
    const count = perPrompt ?? defaultResponses;
    // Every sample is asked before a failed one fails the prompt (its calls are paid, and a dry run counts them all).
    const sampled = await Promise.allSettled(
      Array.from({ length: count }, (_, index) => generator.sampleResponse(record.prompt, { sample: index, temperature: flags.responseTemperature, maxTokens: flags.responseMaxTokens })),
    );
    const failed = sampled.find((result) => result.status === 'rejected');
    if (failed) throw failed.reason;
    return sampled.map((result) => (result as PromiseFulfilledResult<string>).value);
  };

  const refineAll = () => {
    const grader = models.grader();
    return mapInOrder(readPromptRecords(flags.input, { referenceField: flags.referenceField, acceptRubric: true }), async (read): Promise<Outcome> => {
      if (read.kind === 'invalid') return { kind: 'invalid', read };
      const { record } = read;
      try {
        const responses = await collectResponses(record);
        if (responses.length < 2) {
          throw new RubricateError('INPUT_INVALID', `${responses.length} response${responses.length === 1 ? '' : 's'} for this prompt; refinement needs at least 2`, {
            field: 'responses',
          });
        }
        const outcome = await refineRubric(
          { id: record.id, prompt: record.prompt, rubric: record.rubric, reference: record.reference, responses, pairs: record.pairs },
          { generator, grader, iterations: flags.iterations, filter, ...(flags.lint ? { repair: reportingLintRepair(context, { criteriaDropped: 0, rubricsRefused: 0 }, (at: { id: string; iteration: number }) => `id ${at.id} round ${at.iteration}`) } : {}) },
        );
        return { kind: 'ok', record, outcome, responses: responses.length };
      } catch (error) {
        if (isFatal(error) || context.signal.aborted) throw error;
        return { kind: 'error', record, error: toRubricateError(error) };
      }
    }, { window: models.window });
  };

  if (models.dryRun) {
    try {
      await models.dryRun.estimate(() => drain(refineAll()), {
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
      await models.close();
    }
  }

  const grader = models.grader();
  const writer = new JsonLinesWriter(flags.out);
  const reports: Array<Omit<RefineOutcome, 'rubric' | 'judge_usage'> & { responses: number }> = [];
  const judgeUsage: Usage = emptyUsage();
  const counts = { ok: 0, failed: 0, invalid: 0 };

  const closeAll = async () => {
    await writer.close();
    await models.close();
  };
  try {
    const outcomes = refineAll();
    for await (const result of outcomes) {
      if (result.kind === 'invalid') {
        counts.invalid += 1;
        reportInputError(context, result.read.error);
        continue;
      }
      if (result.kind === 'error') {
        counts.failed += 1;
        context.stderr(`failed: ${flags.input}:${result.record.line} id ${result.record.id}: [${result.error.code}] ${result.error.message}`);
        continue;
      }
      const { record, outcome } = result;
      counts.ok += 1;
      addUsage(judgeUsage, outcome.judge_usage);
      const first = outcome.iterations[0];
      const last = outcome.iterations[outcome.iterations.length - 1];
      const line: Record<string, unknown> = {
        id: record.id,
        prompt: record.promptInput,
        rubric: outcome.rubric,
        ...(record.reference !== undefined ? { reference: record.reference } : {}),
        metadata: {
          ...record.metadata,
          refinement: {
            prompt_version: promptVersions.refine,
            responses: result.responses,
            rounds: outcome.iterations.length - 1,
            filter: Boolean(filter),
            separation_start: first.separation,
            separation_end: outcome.final.separation,
            ...(last.error ? { stopped: last.error } : {}),
          },
        },
      };
      await writer.write(line);
      const { rubric: _rubric, judge_usage: _usage, ...report } = outcome;
      reports.push({ ...report, responses: result.responses });
      if (!flags.quiet) {
        context.stderr(formatRefineSummary(outcome));
        const actions = [...outcome.iterations.flatMap((iteration) => iteration.filter ?? []), ...(outcome.final.filter ?? [])];
        for (const action of actions.slice(0, 12)) context.stderr(`    ${describeAction(action)}`);
        if (actions.length > 12) context.stderr(`    … ${actions.length - 12} more filter actions in the report`);
      }
    }
  } catch (error) {
    await closeAll();
    if (context.signal.aborted) {
      context.stderr('interrupted: refined rubrics written so far are complete; rerun the same command to finish (answers already paid for come from the cache)');
      return exitCodes.interrupted;
    }
    throw error;
  }
  await writer.close();
  models.finish();
  await models.close();

  const aggregate = summarize(reports);
  const cost = { generator: models.costOf('generator', generator.usage), judge: models.costOf('judge', judgeUsage) };
  if (flags.summary) {
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
      usage: { generator: { ...generator.usage, cost_usd: cost.generator }, judge: { ...judgeUsage, cost_usd: cost.judge } },
      prompts: reports,
    };
    await writeFileAtomic(flags.summary, `${JSON.stringify(document, null, 2)}\n`);
  }
  if (flags.quiet) return counts.failed + counts.invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
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
  return counts.failed + counts.invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
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
