/**
 * One CLI session: what a command that calls models opens, in one order, and closes in the
 * reverse order from one place. The judges the run spec names (fleet limits applied), wrapped
 * for `--batch` or `--dry-run`, then the reply store (read-only in a dry run), then the grader's
 * settings from the spec's groups. `grade`, `compare`, `worker`, `serve`, `probe`, `meta` and
 * the model calls of `generate` and `refine` all start here.
 */
import { createDryRunJudge, createPlanningDryRunJudge, readOnlyStore, type PlanningDryRunJudge } from '../batch/dry-run.js';
import { RubricateError } from '../errors.js';
import type { Judge } from '../judges/types.js';
import { checkAgenticSettings, withAgenticTools } from '../judges/agentic/setup.js';
import { checkRunnerFor } from '../pipeline/check-runner.js';
import type { GraderOptions } from '../pipeline/grader.js';
import { defaultScoringName } from '../pipeline/defaults.js';
import { getScoring } from '../scoring/registry.js';
import { withFailedAsZero } from '../scoring/failed-as-zero.js';
import type { Credentials, RunSpec } from '../spec/run-spec.js';
import type { ReplyStore } from '../store/types.js';
import { batchEngineOptions, describeBatchEvent, judgeModelOf, openBatching, type BatchedModel, type BatchFlags, type Batching } from './batch-options.js';
import type { CommandContext } from './context.js';
import { buildJudges } from './judge-options.js';
import { openStore, type StoreFlags } from './store-options.js';

export interface SessionFlags extends StoreFlags, BatchFlags {
  dryRun?: boolean;
  quiet?: boolean;
}

export interface SessionOptions {
  context: CommandContext;
  /** The output the run writes: where a `--no-cache` journal and a batch ledger go (none in a dry run). */
  out?: string;
  /** Workers call the judge (`grade --queue`): no fleet limits or batches here, only the run's identity. */
  queued?: boolean;
  /** A server answers at once while a Redis store is away instead of waiting for it. */
  failFast?: boolean;
  /** Replies the SQLite store keeps parsed in memory (default 20,000; a batch run wants few, see `batchRecentReplies`). */
  recentReplies?: number;
  /** Builds the judges instead of the spec's own rule (a pool of replicas). */
  judges?: () => Promise<Judge[]>;
  /** Judges may be none (`--judge none`): a command that needs one says so. */
  needsJudge?: string;
  /**
   * A dry run plans later calls on synthetic answers (`generate`, `refine`: their later calls
   * depend on earlier answers) instead of refusing every call.
   */
  planning?: boolean;
}

export interface RunSession {
  readonly spec: RunSpec;
  /** The judges calls go to: wrapped for batches or a dry run as the flags ask. */
  readonly judges: Judge[];
  readonly judge: Judge | undefined;
  /** The counting judges of a dry run. */
  readonly dryRun: PlanningDryRunJudge[] | undefined;
  /** The cascade's later judges (counting judges in a dry run), in order. */
  readonly cascadeJudges: Judge[];
  /** The judges' store: read-only in a dry run, where `storeHits` counts what it answers. */
  readonly store: ReplyStore | undefined;
  readonly storeHits: { count: number };
  /** Another view of the store for another model (the generator), with hits of its own in a dry run. */
  storeFor(hits: { count: number }): ReplyStore | undefined;
  readonly batching: Batching | undefined;
  /** The grader's settings: the spec's groups whole, its scoring, the store and the check runner (callers add events and signals). */
  graderOptions(): GraderOptions;
  /** Wraps another model the command calls (the generator) as the judges are wrapped: for batches, or a dry run. */
  wrap(model: Judge, batched: BatchedModel): Judge;
  /** Closes a model built outside the session with it (in reverse order of opening). */
  adopt(model: Judge): void;
  /** After a run that completed: its batches are delivered and its run-only journal removed. */
  finish(): void;
  close(): Promise<void>;
}

export async function openRunSession(spec: RunSpec, credentials: Credentials, flags: SessionFlags, options: SessionOptions): Promise<RunSession> {
  const closers: Array<() => unknown> = [];
  const close = async () => {
    // Reverse order of opening: the store first, then the wrappers, then the models.
    for (const closer of closers.splice(0).reverse()) await closer();
  };
  try {
    if (flags.batch && options.queued) throw new RubricateError('CONFIG_INVALID', '--batch and --queue are two ways of sending the calls: give one of them', { field: 'batch' });
    // With --queue the workers call the judge (and hold the fleet limits); here it only names the run.
    // Judges that call tools before their verdicts (--judge-tools): the settings checked before anything is built.
    checkAgenticSettings(spec, { batch: Boolean(flags.batch) });
    const built = await withAgenticTools(options.judges ? await options.judges() : await buildJudges(spec, credentials, flags, { fleetLimits: !options.queued }), spec);
    // Each wrapper closes the judge it wraps: only the outermost judges are closed, after the batch ledger they write to.
    let judges = built;
    closers.push(() => Promise.all(judges.map((judge) => judge.close?.())));
    if (options.needsJudge && built.length === 0) throw new RubricateError('CONFIG_INVALID', options.needsJudge, { field: 'judge' });
    // A cascade's later judges take their keys from their providers' variables: a --judge-api-key is never sent to another provider.
    const cascadeSpecs = spec.cascade.judges ?? [];
    let cascadeJudges = cascadeSpecs.length > 0 ? await buildJudges({ judges: cascadeSpecs, fleet: spec.fleet }, {}, flags, { fleetLimits: !options.queued }) : [];
    closers.push(() => Promise.all(cascadeJudges.map((judge) => judge.close?.())));
    if (flags.batch && cascadeJudges.length > 0) throw new RubricateError('CONFIG_INVALID', '--batch sends one judge\'s calls: a cascade decides which calls its later judges get as replies arrive; drop --batch or --cascade-judge', { field: 'batch' });
    const dry = Boolean(flags.dryRun);
    const batching =
      flags.batch && !dry && options.out !== undefined
        ? openBatching(flags, options.out, (event) => {
            const line = describeBatchEvent(event);
            if (line && !flags.quiet) options.context.stderr(line);
          })
        : undefined;
    if (batching) closers.unshift(() => batching.close());
    // A command that only generates has no judge to send by batch (its generator is wrapped by `wrap`).
    if (batching && built.length > 0) {
      if (built.length !== 1) {
        throw new RubricateError('CONFIG_INVALID', '--batch needs one openai:MODEL, azure:DEPLOYMENT or anthropic:MODEL judge (their Batch APIs); juries and other judges are not supported', { field: 'batch' });
      }
      judges = [batching.wrap(built[0], judgeModelOf(spec.judges[0] ?? {}, credentials))];
    }
    const dryRunWrapper = options.planning ? createPlanningDryRunJudge : createDryRunJudge;
    const dryRun = dry ? judges.map((judge) => dryRunWrapper(judge)) : undefined;
    if (dryRun) judges = dryRun;
    if (dry) cascadeJudges = cascadeJudges.map((judge) => dryRunWrapper(judge));
    // A dry run writes nothing, not even a --no-cache journal beside the output.
    const opened = await openStore(flags, spec, dry ? undefined : options.out, { failFast: options.failFast, recentReplies: options.recentReplies });
    closers.push(() => opened.close());
    const storeFor = (hits: { count: number }) => (dry ? readOnlyStore(opened.store, hits) : opened.store);
    const storeHits = { count: 0 };
    const store = storeFor(storeHits);
    return {
      spec,
      judges,
      judge: judges[0],
      dryRun,
      cascadeJudges,
      store,
      storeHits,
      storeFor,
      batching,
      graderOptions: () => graderOptionsOf(spec, { judges, cascadeJudges, store, batched: batching !== undefined, dry }),
      wrap: (model, batched) => (batching ? batching.wrap(model, batched) : dry ? dryRunWrapper(model) : model),
      // Closed with the judges, before the ledger a batch-wrapped model writes to.
      adopt: (model) => closers.splice(1, 0, () => model.close?.()),
      finish() {
        batching?.finish();
        opened.finish();
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The grader's settings for a session: the spec's groups whole, its scoring, the store, the check runner and the cascade (callers add events and signals). */
function graderOptionsOf(spec: RunSpec, parts: { judges: Judge[]; cascadeJudges: Judge[]; store: ReplyStore | undefined; batched: boolean; dry: boolean }): GraderOptions {
  const { judges, cascadeJudges, store, dry } = parts;
  return {
    judges,
    plan: spec.plan,
    // Every call waits in a batch: the engine hands over all it has (the window bounds memory) and waits up to the 24 h window.
    calls: parts.batched ? { ...spec.calls, ...batchEngineOptions } : spec.calls,
    jury: spec.jury,
    omitText: spec.omitText,
    keepRequests: spec.keepRequests,
    checkMode: spec.scoring.checkMode,
    scoring: spec.scoring.failedAsZero ? withFailedAsZero(getScoring(spec.scoring.name ?? defaultScoringName)) : spec.scoring.name,
    ...(spec.scoring.calibration ? { calibration: spec.scoring.calibration } : {}),
    store,
    checkRunner: checkRunnerFor(),
    guard: spec.guard,
    limits: spec.limits,
    ...(cascadeJudges.length > 0 || spec.cascade.band || spec.cascade.escalateOn
      ? {
          cascade: {
            judges: cascadeJudges,
            ...(spec.cascade.band ? { band: spec.cascade.band } : {}),
            // A dry run's calls all fail (JUDGE_DRY_RUN): every judged criterion escalates, so the later judges are counted as an upper bound.
            ...(dry ? { escalateOn: ['error' as const] } : spec.cascade.escalateOn ? { escalateOn: spec.cascade.escalateOn } : {}),
          },
        }
      : {}),
  };
}
