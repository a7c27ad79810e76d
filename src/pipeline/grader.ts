/**
 * The one grading pipeline the CLI, the library and the HTTP server share:
 * items → strategy tasks → engine (checks, store, dedupe, limiter, judge, parse) →
 * verdicts → scoring → result records. Juries run one engine per member and merge.
 */
import { GradingEngine, type EngineOptions, type GradedItem, type GradedRecord } from '../engine/engine.js';
import { RubricateError } from '../errors.js';
import { holisticItem } from '../grading/holistic.js';
import { createBatchedStrategy, createPerCriterionStrategy } from '../grading/strategies.js';
import { createPrometheusAbsoluteStrategy } from '../grading/prometheus.js';
import type { GradingStrategy, SamplingOptions } from '../grading/types.js';
import { assertValidSampling } from '../grading/sampling.js';
import type { Judge } from '../judges/types.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Item } from '../rubric/schema.js';
import { getScoring } from '../scoring/registry.js';
import type { Scoring } from '../scoring/types.js';
import { callPolicySchema, gradingPlanSchema, jurySchema, parseWith, type ExplanationLength, type GradingPlan, type RunSpec } from '../spec/run-spec.js';
import { JuryAgreement, mergeJury, type JuryAggregate, type JuryCriterionResult, type JuryMemberInfo } from './jury.js';
import { judgeInfoFor, toResultRecord, type JudgeInfo, type ResultRecord } from '../results/results.js';
import { defaultCheckRunner, defaultScoringName, withDefaultSampling } from './defaults.js';
import { mapInOrder } from '../util/ordered-stream.js';

export type GradingMode = NonNullable<GradingPlan['mode']>;

/**
 * A Grader's options: the judges, the run spec's groups it reads (each whole: `plan`, `calls`,
 * `jury`, scoring), and what a run provides at run time (store, events, signals).
 *
 * @example
 * ```ts
 * const grader = new Grader({ judge, plan: { criteriaPerCall: 'all', explanation: 'short' }, calls: { concurrency: 32 }, scoring: 'weighted_mean' });
 * ```
 */
export interface GraderOptions extends Partial<Pick<RunSpec, 'plan' | 'calls' | 'jury' | 'omitText'>>, Pick<EngineOptions, 'store' | 'checkRunner' | 'checkMode' | 'onEvent' | 'signal' | 'stopSignal'> {
  judge?: Judge;
  /** Several judges form a jury (each criterion decided by their majority or mean). */
  judges?: Judge[];
  /** A scoring name or object (default `weighted_mean`, as `rubricate grade --format items`). */
  scoring?: string | Scoring;
  /**
   * A grading strategy of your own, used instead of the one the plan chooses (pairwise
   * comparison passes its own).
   */
  strategy?: GradingStrategy;
}

/**
 * Grading plan for embedded (llama.cpp) judges, chosen from `rubricate bench-local` figures on
 * 2 cores (docs/benchmarks.md): per-criterion calls that reuse the item's KV prefix, with
 * short explanations. Endpoints keep full explanations.
 */
export const localJudgeDefaults = { explanation: 'short' as ExplanationLength };

export function isLocalJudge(judge: Judge | undefined): boolean {
  return judge?.provenance.id.startsWith('gguf:') ?? false;
}

/** The mode a plan grades in: batched as soon as more than one criterion goes into a call. */
export function modeOf(plan: GradingPlan): GradingMode {
  return plan.mode ?? (plan.criteriaPerCall !== undefined && plan.criteriaPerCall !== 1 ? 'batched' : 'per-criterion');
}

/** The strategy a plan's calls follow (holistic items are per-criterion calls on one Likert criterion). */
export function createStrategy(plan: GradingPlan, sampling: SamplingOptions = withDefaultSampling(plan.sampling)): GradingStrategy {
  assertValidSampling(sampling);
  const mode = modeOf(plan);
  if (plan.protocol === 'prometheus') {
    if (mode !== 'per-criterion' || plan.verdict === 'probability') {
      throw new RubricateError('CONFIG_INVALID', `--judge-protocol prometheus grades one criterion per call with a [RESULT] score: ${mode === 'holistic' ? 'it has no holistic mode' : 'drop --criteria-per-call, --mode and --verdict probability'}`, { field: 'judge-protocol' });
    }
    return createPrometheusAbsoluteStrategy({ sampling });
  }
  if (mode === 'batched') {
    if (plan.verdict === 'probability') {
      throw new RubricateError('CONFIG_INVALID', 'probability verdicts need one criterion per call (drop --criteria-per-call)', { field: 'verdict' });
    }
    const criteriaPerCall = plan.criteriaPerCall === undefined || plan.criteriaPerCall === 'all' ? Number.POSITIVE_INFINITY : plan.criteriaPerCall;
    return createBatchedStrategy({ sampling, criteriaPerCall, explanation: plan.explanation });
  }
  if (plan.topLogprobs !== undefined && plan.verdict !== 'probability') {
    throw new RubricateError('CONFIG_INVALID', '--top-logprobs sets what --verdict probability asks for: add --verdict probability or leave it out', { field: 'top-logprobs' });
  }
  if (plan.likertLevels !== undefined && mode !== 'holistic') {
    throw new RubricateError('CONFIG_INVALID', '--likert-levels sets the scale of --mode holistic: add --mode holistic or leave it out', { field: 'likert-levels' });
  }
  return createPerCriterionStrategy({ sampling, verdictMode: plan.verdict, explanation: plan.explanation, topLogprobs: plan.topLogprobs });
}

interface Member {
  info: JuryMemberInfo;
  engine: GradingEngine;
}

export class Grader {
  readonly scoring: Scoring;
  readonly strategy: GradingStrategy;
  readonly judgeInfo: JudgeInfo | undefined;
  readonly mode: GradingMode;
  /** Jury agreement so far (when there are several members). */
  readonly agreement: JuryAgreement | undefined;
  private readonly members: Member[];
  private readonly omitText: boolean;
  private readonly aggregate: JuryAggregate;
  private readonly holisticLevels: number;
  private readonly onEvent: GraderOptions['onEvent'];

  constructor(options: GraderOptions) {
    const calls = parseWith(callPolicySchema, options.calls ?? {}, 'calls');
    const jury = parseWith(jurySchema, options.jury ?? {}, 'jury');
    const judges = options.judges && options.judges.length > 0 ? options.judges : options.judge ? [options.judge] : [];
    // Embedded local judges default to the plan measured fastest that keeps a reason per verdict.
    const given = parseWith(gradingPlanSchema, options.plan ?? {}, 'plan');
    const plan: GradingPlan = { ...given, explanation: given.explanation ?? (isLocalJudge(judges[0]) ? localJudgeDefaults.explanation : 'full') };
    this.mode = modeOf(plan);
    const sampling: SamplingOptions = withDefaultSampling(plan.sampling);
    this.strategy = options.strategy ?? createStrategy(plan, sampling);
    this.scoring = typeof options.scoring === 'object' ? options.scoring : getScoring(options.scoring ?? defaultScoringName);
    this.omitText = options.omitText ?? false;
    this.aggregate = jury.aggregate ?? 'majority';
    this.holisticLevels = plan.likertLevels ?? 10;
    this.onEvent = options.onEvent;
    const samples = jury.samples ?? 1;
    const withoutProbabilities = plan.verdict === 'probability' ? judges.find((judge) => judge.capabilities.tokenProbabilities === false) : undefined;
    if (withoutProbabilities) {
      // Refused before any call: every call would fail the same way.
      throw new RubricateError('JUDGE_UNSUPPORTED', `${withoutProbabilities.provenance.id} returns no token probabilities, so --verdict probability cannot be used with it (use --verdict binary)`, { field: 'verdict' });
    }
    if (samples > 1 && sampling.temperature === 0) {
      throw new RubricateError('CONFIG_INVALID', 'several samples of a judge at temperature 0 would all be the same: set --temperature above 0', { field: 'samples' });
    }
    const memberSpecs: Array<{ judge?: Judge; sample?: number }> = judges.length === 0 ? [{}] : judges.flatMap((judge) => Array.from({ length: samples }, (_, sample) => ({ judge, sample: samples > 1 ? sample : undefined })));
    this.members = memberSpecs.map(({ judge, sample }) => ({
      info: { judge: judge?.provenance.id ?? 'none', ...(sample !== undefined ? { sample } : {}) },
      engine: new GradingEngine({
        judge,
        // Each sample of a seeded jury member gets its own seed.
        strategy: sample !== undefined && sampling.seed !== undefined && !options.strategy ? createStrategy(plan, { ...sampling, seed: sampling.seed + sample }) : this.strategy,
        store: options.store,
        checkRunner: options.checkRunner ?? defaultCheckRunner,
        checkMode: options.checkMode,
        calls,
        // Item events come from the grader (once per item, also for juries and invalid records).
        onEvent: options.onEvent ? (event) => event.type !== 'item' && options.onEvent!(event) : undefined,
        signal: options.signal,
        stopSignal: options.stopSignal,
        sample,
        contextBudgetTokens: plan.contextBudget,
        evidenceSampling: { ...sampling, maxTokens: Math.min(sampling.maxTokens, 768) },
      }),
    }));
    this.agreement = this.members.length > 1 ? new JuryAgreement(this.members.map((member) => member.info)) : undefined;
    this.judgeInfo = judgeInfoFor(judges, {
      templateVersion: this.strategy.templateVersion,
      mode: this.mode,
      sampling,
      verdict: plan.verdict ?? 'binary',
      ...(this.members.length > 1 ? { jury: { members: this.members.map((member) => member.info), aggregate: this.aggregate } } : {}),
    });
  }

  /** The first member's engine (concurrency and queue depth for metrics). */
  get engine(): GradingEngine {
    return this.members[0].engine;
  }

  private prepare(item: Item): Item {
    return this.mode === 'holistic' ? holisticItem(item, this.holisticLevels) : item;
  }

  /**
   * An item's criteria graded (by every jury member, merged), before scoring: what pairwise
   * comparison reads. Emits the item's progress event.
   */
  async gradeCriteria(item: Item): Promise<GradedItem> {
    let graded: GradedItem;
    if (this.members.length === 1) graded = await this.members[0].engine.gradeItem(item);
    else {
      const gradings = await Promise.all(this.members.map((member) => member.engine.gradeItem(item)));
      const merged = mergeJury(this.members.map((member) => member.info), gradings, this.aggregate);
      this.agreement?.add(item.id, merged.criteria);
      graded = merged;
    }
    this.onEvent?.({ type: 'item', status: graded.status });
    return graded;
  }

  /** Counts an input record that could not be read (it is written as `invalid`, in its place). */
  noteInvalid(): void {
    this.onEvent?.({ type: 'item', status: 'invalid' });
  }

  private toRecord(record: GradedRecord): ResultRecord {
    const result = toResultRecord(record, { judge: this.judgeInfo, scoring: this.scoring, omitText: this.omitText });
    if (record.kind === 'graded' && this.members.length > 1) {
      record.graded.criteria.forEach((criterion, index) => {
        const votes = (criterion as JuryCriterionResult).votes;
        if (votes && votes.length > 0) result.criteria[index].votes = votes;
      });
    }
    return result;
  }

  async gradeItem(item: Item): Promise<ResultRecord> {
    return (await this.gradeItemWithOrigin(item)).record;
  }

  /**
   * `gradeItem`, also telling whether every verdict was read from the reply store (see
   * `GradedItem.fromStore`; never for a jury, whose agreement counts every grading).
   */
  async gradeItemWithOrigin(item: Item): Promise<{ record: ResultRecord; fromStore: boolean }> {
    const graded = await this.gradeCriteria(this.prepare(item));
    return { record: this.toRecord({ kind: 'graded', graded, line: 0 }), fromStore: graded.fromStore === true };
  }

  /** The engine error that stopped grading (bad credentials, no judge), if any. */
  get fatal(): RubricateError | undefined {
    return this.members.find((member) => member.engine.fatal)?.engine.fatal;
  }

  /**
   * `run` over a stream in input order, with the grader's window: inputs are taken only while
   * the judge has too little queued work to stay busy, and never more than a window ahead of
   * the oldest unfinished one, so memory follows concurrency, not input size. Stops with the
   * error that stopped grading (bad credentials, the circuit breaker).
   */
  inInputOrder<Input, Output>(inputs: AsyncIterable<Input>, run: (input: Input) => Promise<Output>): AsyncGenerator<Output> {
    const concurrency = this.engine.concurrency;
    return mapInOrder(inputs, run, { window: Math.max(64, concurrency * 4), busy: () => this.engine.queuedCalls >= concurrency, stopped: () => this.fatal });
  }

  /** Results in input order (see `inInputOrder`); unreadable records stay in their place as `invalid`. */
  async *gradeStream(records: AsyncIterable<ImportRecord>): AsyncGenerator<ResultRecord> {
    const graded = this.inInputOrder(records, async (record): Promise<GradedRecord> => {
      if (record.kind !== 'item' && record.kind !== 'invalid') {
        throw new RubricateError('CONFIG_INVALID', 'gradeStream takes import records ({kind: "item", item, line}, as getItemImporter(format).read(file) yields them); grade() takes plain items');
      }
      if (record.kind === 'invalid') {
        this.noteInvalid();
        return record;
      }
      return { kind: 'graded', graded: await this.gradeCriteria(this.prepare(record.item)), line: record.line };
    });
    for await (const record of graded) yield this.toRecord(record);
  }
}
