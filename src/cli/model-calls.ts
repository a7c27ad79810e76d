/**
 * How `generate` and `refine` call their two models, the generator and the judge: directly,
 * through the providers' Batch APIs (`--batch`: every call of both goes by batch, one ledger),
 * or not at all (`--dry-run`: the run is planned and its cost printed, nothing is sent or written).
 */
import type { Command } from 'commander';
import { expectedExplanationWords, syntheticCriterionWords, syntheticTextTokens, type DryRunAnswers, type DryRunTotals, type PlanningDryRunJudge } from '../batch/dry-run.js';
import { costOf, defaultPrices, loadPriceTable, priceFor, type Usage } from '../engine/usage.js';
import type { RubricGenerator } from '../generation/generator.js';
import { buildRubricGenerator } from '../generation/generator-options.js';
import type { Judge } from '../judges/types.js';
import { Grader } from '../pipeline/grader.js';
import type { RunSpec } from '../spec/run-spec.js';
import type { ReplyStore } from '../store/types.js';
import { addBatchOptions, batchEngineOptions } from './batch-options.js';
import type { CommandContext } from './context.js';
import { addDryRunOption, combinedTotals, printPlannedDryRun, type PlannedRole } from './dry-run-options.js';
import { generatorOptionsFrom, type GeneratorFlags } from './generator-options.js';
import { withConfiguredModel } from './judge-options.js';
import { modelFromFlags, refuseUnreadModelFlags } from './run-spec-flags.js';
import { openRunSession, type SessionFlags } from './session.js';

export interface ModelCallFlags extends GeneratorFlags, SessionFlags {
  prices?: string;
}

export function addModelCallOptions(command: Command): Command {
  addBatchOptions(command);
  command.option('--prices <file>', 'price table (JSON/YAML {model: {input, cached_input, output}} in USD per 1M tokens)');
  return addDryRunOption(
    command,
    'send nothing and write nothing: print the generator and judge calls (exact where no answer is needed, else planned on synthetic answers), their tokens, the cache hits and the cost at synchronous, batch and prompt-cached prices',
  );
}

export interface ModelCalls {
  generator: RubricGenerator;
  /** The reply store both models share (read-only in a dry run). */
  store: ReplyStore | undefined;
  /** Records (or pair groups) in flight at once: all of them with --batch, so each stage fills its batches. */
  window: number;
  /** A Grader over the command's judges (built on first use), with the engine settings --batch needs. */
  grader(): Grader;
  dryRun?: PlannedDryRun;
  /** Cost of one model's usage at its price (batch-answered tokens at the batch price), or null when unpriced. */
  costOf(role: 'generator' | 'judge', usage: Usage): number | null;
  /** After a run that completed: the batches it read are delivered (an interrupted run leaves them for the rerun to attach to), a run-only journal removed. */
  finish(): void;
  close(): Promise<void>;
}

export interface PlannedDryRun {
  /**
   * Drains the command's pipeline once with no call answered (what is counted is exact), then,
   * when later calls depend on answers, once more with synthetic answers; prints the estimate.
   */
  estimate(pass: (answers: DryRunAnswers) => Promise<void>, options: { command: string; planned: boolean; assumptions: readonly string[] }): Promise<void>;
}

/**
 * The generator and (when the command grades) the judges of `generate` and `refine`, through one
 * session: the same store, batch ledger and dry-run planning for both models.
 */
export async function prepareModelCalls(flags: ModelCallFlags, spec: RunSpec, context: CommandContext, options: { out: string; grading: boolean }): Promise<ModelCalls> {
  const prices = flags.prices ? loadPriceTable(flags.prices) : defaultPrices;
  const session = await openRunSession(options.grading ? spec : { ...spec, judges: [{ model: 'none' }] }, modelFromFlags(flags, 'judge').credentials, flags, { context, out: options.out, planning: true });
  try {
    const generatorHits = { count: 0 };
    const given = modelFromFlags(flags, 'generator');
    const generatorModel = { ...given, models: given.models.map((model) => withConfiguredModel(model, 'generator')) };
    refuseUnreadModelFlags(generatorModel.models, generatorModel.credentials, 'generator');
    let generatorPlanning: PlanningDryRunJudge | undefined;
    const built = await buildRubricGenerator({
      ...generatorOptionsFrom(flags, spec),
      model: generatorModel.models[0],
      credentials: generatorModel.credentials,
      ...(session.batching ? batchEngineOptions : {}),
      store: session.storeFor(generatorHits),
      signal: context.signal,
      wrap: (judge) => {
        const wrapped = session.wrap(judge, { role: 'generator', model: generatorModel.models[0], credentials: generatorModel.credentials });
        if (session.dryRun) generatorPlanning = wrapped as PlanningDryRunJudge;
        return wrapped;
      },
    });
    session.adopt(built.judge);
    const generator = built.generator;
    let grader: Grader | undefined;
    const priceOf = (members: ReadonlyArray<Pick<Judge, 'provenance'>>) => {
      const model = members[0]?.provenance.model;
      return model !== undefined && members.every((member) => member.provenance.model === model) ? priceFor(model, prices) : undefined;
    };
    const models: ModelCalls = {
      generator,
      store: session.store,
      window: session.batching ? batchEngineOptions.concurrency : (spec.calls.concurrency ?? defaultWindow),
      grader: () => (grader ??= new Grader({ ...session.graderOptions(), signal: context.signal })),
      costOf(role, usage) {
        return costOf(usage, priceOf(role === 'generator' ? [generator] : session.judges));
      },
      finish: () => session.finish(),
      close: () => session.close(),
    };
    const judgePlanning = session.dryRun ?? [];
    if (session.dryRun) {
      models.dryRun = {
        async estimate(pass, estimateOptions) {
          const generatorSide = generatorPlanning ? [generatorPlanning] : [];
          const runPass = async (answers: DryRunAnswers) => {
            for (const judge of [...generatorSide, ...judgePlanning]) judge.startPass(answers);
            generatorHits.count = 0;
            session.storeHits.count = 0;
            // Each pass plans with a Grader of its own (no engine state carried over).
            grader = undefined;
            await pass(answers);
            const totals = (members: readonly PlanningDryRunJudge[]): DryRunTotals => combinedTotals(members.map((member) => member.totals));
            return { generator: totals(generatorSide), judge: totals(judgePlanning), hits: { generator: generatorHits.count, judge: session.storeHits.count } };
          };
          const exact = await runPass('none');
          const total = estimateOptions.planned ? await runPass('synthetic') : exact;
          const roles: PlannedRole[] = [{ role: 'generator', judges: generatorSide, exact: exact.generator, total: total.generator, cacheHits: total.hits.generator }];
          if (options.grading) roles.push({ role: 'judge', judges: judgePlanning, exact: exact.judge, total: total.judge, cacheHits: total.hits.judge });
          const assumptions = [...baseAssumptions(flags, estimateOptions.planned), ...estimateOptions.assumptions];
          printPlannedDryRun(context, roles, prices, { command: estimateOptions.command, batch: Boolean(flags.batch), assumptions });
        },
      };
    }
    return models;
  } catch (error) {
    await session.close();
    throw error;
  }
}

/** Records in flight when no --concurrency is given: the engine's default. */
const defaultWindow = 16;

/** What every dry-run estimate of `generate` and `refine` assumes, whatever the command. */
function baseAssumptions(flags: GeneratorFlags, planned: boolean): string[] {
  const criteria = Math.round((flags.minCriteria + flags.maxCriteria) / 2);
  return [
    'calls are those a run makes now, without retries: the cache answers the others (cache_hits)',
    `expected_output_tokens and cost_usd are estimates: replies that follow each request's schema, a generated rubric with ${criteria} criteria (the mean of --min-criteria and --max-criteria) of ${syntheticCriterionWords} words, explanations of ${expectedExplanationWords} words, plain-text replies of at most ${syntheticTextTokens} tokens`,
    ...(planned
      ? ['exact_calls are counted exactly: the calls the run makes before it needs an answer the cache does not hold; the other calls are planned on synthetic answers of that shape, in which every verdict is "met"']
      : []),
  ];
}

/** Drains a pipeline's outcomes: a dry run only counts the calls made on the way. */
export async function drain(outcomes: AsyncIterable<unknown>): Promise<void> {
  for await (const _outcome of outcomes) {
    // nothing to keep
  }
}

const dollars = (cost: number | null) => (cost === null ? 'unknown (model not in the price table)' : `$${cost.toFixed(4)}`);

/** One model's usage on one line, with its cost (batch-answered calls at the batch price). */
export function usageLine(label: string, usage: Usage, cost: number | null): string {
  const batch = usage.batch ? ` (${usage.batch.calls} answered by batch, at the batch price)` : '';
  return `${label}: ${usage.calls} calls (${usage.retries} retries)${batch}, ${usage.cache_hits} cache hits, ${usage.prompt_tokens} input tokens, ${usage.completion_tokens} output tokens, cost ${dollars(cost)}`;
}

/** What a run of both models cost, per model and in total. */
export function costLine(cost: { generator: number | null; judge: number | null }): string {
  const total = cost.generator === null || cost.judge === null ? null : Math.round((cost.generator + cost.judge) * 1e6) / 1e6;
  return `cost: generator ${dollars(cost.generator)}, judge ${dollars(cost.judge)}, total ${dollars(total)}`;
}

/** The generator as a run summary names it. */
export function generatorSummary(generator: RubricGenerator): { id: string; model: string; temperature: number; max_tokens: number } {
  return { id: generator.provenance.id, model: generator.provenance.model, temperature: generator.sampling.temperature, max_tokens: generator.sampling.maxTokens };
}
