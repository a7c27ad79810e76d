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
import { createListwiseStrategy } from '../grading/listwise.js';
import { createPairwiseStrategy } from '../grading/pairwise.js';
import { consecutiveGroups, GroupGrading, groupSettingsOf } from './group-grading.js';
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
import { defaultCheckRunner, defaultPairwiseMaxTokens, defaultScoringName, withDefaultSampling } from './defaults.js';
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
export interface GraderOptions extends Partial<Pick<RunSpec, 'plan' | 'calls' | 'jury' | 'omitText'>>, Pick<EngineOptions, 'store' | 'checkRunner' | 'checkMode' | 'onEvent' | 'signal' | 'stopSignal' | 'noJudgeError'> {
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
  refuseUnreadGroupSettings(plan, mode);
  if (mode === 'listwise' || mode === 'tournament') return createGroupStrategy(plan, mode, sampling);
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

/** The group settings a per-item mode does not read, refused by name. */
function refuseUnreadGroupSettings(plan: GradingPlan, mode: GradingMode): void {
  const groupMode = mode === 'listwise' || mode === 'tournament';
  const unread: Array<[keyof GradingPlan, string, boolean]> = [
    ['groupBy', '--group-by', groupMode],
    ['orders', '--orders', groupMode],
    ['listwise', '--listwise', mode === 'listwise'],
    ['tournament', '--tournament', mode === 'tournament'],
  ];
  for (const [setting, flag, read] of unread) {
    if (plan[setting] !== undefined && !read) {
      throw new RubricateError('CONFIG_INVALID', `${flag} applies to ${setting === 'listwise' ? '--mode listwise' : setting === 'tournament' ? '--mode tournament' : '--mode listwise or --mode tournament'}: add that mode or leave it out`, { field: flag.slice(2) });
    }
  }
}

/** Listwise and tournament judging: the settings of the per-item modes that they do not read are refused by name. */
function createGroupStrategy(plan: GradingPlan, mode: 'listwise' | 'tournament', sampling: SamplingOptions): GradingStrategy {
  const refuse = (flag: string, why: string) => {
    throw new RubricateError('CONFIG_INVALID', `${flag} does not apply to --mode ${mode}: ${why}`, { field: flag.slice(2) });
  };
  if (plan.protocol === 'prometheus') refuse('--judge-protocol', 'Prometheus grades one response per call');
  if (plan.verdict === 'probability') refuse('--verdict', 'probability verdicts need one criterion per call');
  if (plan.contextBudget !== undefined) refuse('--context-budget', 'responses too long for the judge are read for evidence one item at a time; grade them per item');
  if (mode === 'listwise') {
    if (plan.likertLevels !== undefined && plan.listwise !== 'holistic') refuse('--likert-levels', 'it sets the scale of --listwise holistic');
    const criteriaPerCall = plan.criteriaPerCall === undefined || plan.criteriaPerCall === 'all' ? Number.POSITIVE_INFINITY : plan.criteriaPerCall;
    return createListwiseStrategy({ sampling, criteriaPerCall, explanation: plan.explanation });
  }
  if (plan.criteriaPerCall !== undefined) refuse('--criteria-per-call', 'a tournament compares two responses per call on the whole rubric');
  if (plan.likertLevels !== undefined) refuse('--likert-levels', 'a tournament compares, it does not rate');
  if (plan.explanation !== undefined) refuse('--explanation', "the comparison's reply has its own one-to-three-sentence explanation");
  return createPairwiseStrategy({ sampling, swap: plan.orders !== 1, allowTies: true, overall: false });
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
  /** Listwise and tournament judging: groups of items graded together. */
  private readonly groups: GroupGrading | undefined;

  constructor(options: GraderOptions) {
    const calls = parseWith(callPolicySchema, options.calls ?? {}, 'calls');
    const jury = parseWith(jurySchema, options.jury ?? {}, 'jury');
    const judges = options.judges && options.judges.length > 0 ? options.judges : options.judge ? [options.judge] : [];
    // Embedded local judges default to the plan measured fastest that keeps a reason per verdict.
    const given = parseWith(gradingPlanSchema, options.plan ?? {}, 'plan');
    // A tournament's comparisons write their own explanation: no length to default.
    const plan: GradingPlan = given.mode === 'tournament' ? given : { ...given, explanation: given.explanation ?? (isLocalJudge(judges[0]) ? localJudgeDefaults.explanation : 'full') };
    this.mode = modeOf(plan);
    const sampling: SamplingOptions = withDefaultSampling(this.mode === 'tournament' ? { maxTokens: defaultPairwiseMaxTokens, ...plan.sampling } : plan.sampling);
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
        noJudgeError: options.noJudgeError,
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
    const groupSettings = options.strategy ? undefined : groupSettingsOf(plan);
    this.groups = groupSettings ? new GroupGrading(groupSettings, { judge: (item) => this.judgeCriteria(item), checks: (item) => this.members[0].engine.gradeItem(item) }) : undefined;
    this.judgeInfo = judgeInfoFor(judges, {
      templateVersion: this.strategy.templateVersion,
      mode: this.mode,
      sampling,
      verdict: plan.verdict ?? 'binary',
      ...(this.members.length > 1 ? { jury: { members: this.members.map((member) => member.info), aggregate: this.aggregate } } : {}),
    });
  }

  /** Whether groups of items are graded together (listwise and tournament modes). */
  get gradesGroups(): boolean {
    return this.groups !== undefined;
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
    const graded = await this.judgeCriteria(item);
    this.onEvent?.({ type: 'item', status: graded.status });
    return graded;
  }

  /** `gradeCriteria` without the item's progress event (a group's items have one each). */
  private async judgeCriteria(item: Item): Promise<GradedItem> {
    if (this.members.length === 1) return this.members[0].engine.gradeItem(item);
    const gradings = await Promise.all(this.members.map((member) => member.engine.gradeItem(item)));
    const merged = mergeJury(this.members.map((member) => member.info), gradings, this.aggregate);
    this.agreement?.add(item.id, merged.criteria);
    return merged;
  }

  /** Listwise and tournament modes: a group's items graded together, one graded item each, in order (with their progress events). */
  private async gradeGroupItems(items: readonly Item[], id?: string): Promise<GradedItem[]> {
    const graded = await this.groups!.gradeGroup(items, id);
    for (const entry of graded) this.onEvent?.({ type: 'item', status: entry.status });
    return graded;
  }

  /**
   * The responses to one prompt graded together, one result per item in order: in one
   * listwise call (or a tournament) in those modes, each on its own otherwise. `id` names the group.
   */
  async gradeGroup(items: readonly Item[], id?: string): Promise<ResultRecord[]> {
    if (!this.groups) return Promise.all(items.map((item) => this.gradeItem(item)));
    return (await this.gradeGroupItems(items, id)).map((graded) => this.toRecord({ kind: 'graded', graded, line: 0 }));
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
    // A group mode grades a lone item as a group of one.
    if (this.groups) return { record: this.toRecord({ kind: 'graded', graded: (await this.gradeGroupItems([item]))[0], line: 0 }), fromStore: false };
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
    if (this.groups) {
      // Groups are consecutive records of one group key: graded together, written one line per record in place.
      const groups = this.inInputOrder(consecutiveGroups(records, this.groups.settings.groupBy), async (group): Promise<GradedRecord[]> => {
        const items = group.flatMap((record) => (record.kind === 'item' ? [record] : []));
        if (items.length === 0) {
          for (const _record of group) this.noteInvalid();
          return group as GradedRecord[];
        }
        const graded = await this.gradeGroupItems(items.map((record) => record.item));
        return graded.map((entry, index) => ({ kind: 'graded', graded: entry, line: items[index].line }));
      });
      for await (const group of groups) for (const record of group) yield this.toRecord(record);
      return;
    }
    const graded = this.inInputOrder(records, async (record): Promise<GradedRecord> => {
      if (record.kind === 'invalid') {
        this.noteInvalid();
        return record;
      }
      return { kind: 'graded', graded: await this.gradeCriteria(this.prepare(record.item)), line: record.line };
    });
    for await (const record of graded) yield this.toRecord(record);
  }
}
