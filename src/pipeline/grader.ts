/**
 * The one grading pipeline the CLI, the library and the HTTP server share:
 * items → strategy tasks → engine (checks, store, dedupe, limiter, judge, parse) →
 * verdicts → scoring → result records. Juries run one engine per member and merge.
 */
import { GradingEngine, type EngineOptions, type GradedItem, type GradedRecord } from '../engine/engine.js';
import { emptyUsage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import { holisticItem } from '../grading/holistic.js';
import { hasConditions } from '../rubric/conditions.js';
import { createBatchedStrategy, createPerCriterionStrategy } from '../grading/strategies.js';
import { createPrometheusAbsoluteStrategy } from '../grading/prometheus.js';
import { createProtocolStrategy, isAdapterProtocol } from '../grading/protocols/index.js';
import { parseJudgeTemplate, withJudgeTemplate } from '../grading/custom-template.js';
import { createListwiseStrategy } from '../grading/listwise.js';
import { createPairwiseStrategy } from '../grading/pairwise.js';
import { consecutiveGroups, failedItem, GroupGrading, groupSettingsOf, groupTooLarge } from './group-grading.js';
import type { GradingStrategy, SamplingOptions, SelfPreferenceNote } from '../grading/types.js';
import { assertValidSampling } from '../grading/sampling.js';
import type { Judge } from '../judges/types.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Item } from '../rubric/schema.js';
import { hasPerTurnCriteria } from '../rubric/turns.js';
import { hasStepCriteria } from '../rubric/steps.js';
import { getScoring } from '../scoring/registry.js';
import type { Scoring } from '../scoring/types.js';
import type { Calibration } from '../spec/calibration.js';
import { countingCannotAssess } from '../scoring/cannot-assess.js';
import { callPolicySchema, checkRepeatCount, defaultLimits, gradingPlanSchema, guardSchema, jurySchema, limitsSchema, parseWith, type ExplanationLength, type GradingPlan, type Limits, type RunSpec } from '../spec/run-spec.js';
import { sha256Hex } from '../util/hash.js';
import { JuryAgreement, mergeJury, type JuryAggregate, type JuryMemberInfo } from './jury.js';
import { CascadeTally, escalationRule, gradeInCascade, type CascadeOptions, type CascadeStage, type EscalationRule } from './cascade.js';
import { modelsOf, refusalOf, SelfPreferenceGuard } from './self-preference.js';
import { gradeByTurn } from './turns.js';
import { gradeBySteps } from './steps.js';
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
export interface GraderOptions extends Partial<Pick<RunSpec, 'plan' | 'calls' | 'jury' | 'omitText' | 'keepRequests' | 'guard' | 'limits'>>, Pick<EngineOptions, 'store' | 'checkRunner' | 'checkMode' | 'onEvent' | 'signal' | 'stopSignal' | 'noJudgeError'> {
  judge?: Judge;
  /** Judges a criterion escalates to, after these, when the rule says so (see `pipeline/cascade.ts`). */
  cascade?: CascadeOptions;
  /** Several judges form a jury (each criterion decided by their majority or mean). */
  judges?: Judge[];
  /** A scoring name or object (default `weighted_mean`, as `rubricate grade --format items`). */
  scoring?: string | Scoring;
  /** A score calibration (`grade --calibration`): each result also carries the calibrated overall score. */
  calibration?: Calibration;
  /**
   * A grading strategy of your own, used instead of the one the plan chooses (pairwise
   * comparison passes its own).
   */
  strategy?: GradingStrategy;
  /**
   * Which repeat of the run this grader makes (`grade --repeats`; default 0, the run itself):
   * the same requests, each repeat's replies cached apart under its own sample indices.
   */
  repeat?: number;
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
  const readsTokens = plan.verdict === 'probability' || plan.verdict === 'expected-score';
  const { alignment } = plan;
  if (plan.template !== undefined && (mode !== 'per-criterion' || (plan.protocol !== undefined && plan.protocol !== 'native'))) {
    throw new RubricateError('CONFIG_INVALID', `--judge-template replaces the per-criterion prompt of rubricate's own protocol: drop ${plan.protocol !== undefined && plan.protocol !== 'native' ? '--judge-protocol' : '--criteria-per-call and --mode'}`, { field: 'judge-template' });
  }
  if (plan.template !== undefined && (alignment || plan.abstain !== undefined)) {
    // Both rewrite rubricate's own prompt (examples and rewordings, the cannot_assess rule), which a template replaces.
    throw new RubricateError('CONFIG_INVALID', `--judge-template replaces the prompt ${alignment ? '--alignment' : '--abstain'} adds its rules to: give one of them`, { field: 'judge-template' });
  }
  if (alignment && (mode === 'holistic' || plan.protocol === 'prometheus' || isAdapterProtocol(plan.protocol))) {
    throw new RubricateError('CONFIG_INVALID', `--alignment applies examples and rewordings per criterion: ${mode === 'holistic' ? '--mode holistic asks one rating per item' : `--judge-protocol ${plan.protocol} has its own layout, without rubricate's delimited blocks`}`, { field: 'alignment' });
  }
  if (alignment?.calibrator && plan.verdict !== 'probability') {
    throw new RubricateError('CONFIG_INVALID', '--alignment holds a calibrator of P(met), fitted on probability verdicts: add --verdict probability, or align again on binary verdicts', { field: 'alignment' });
  }
  if (plan.abstain !== undefined && isAdapterProtocol(plan.protocol)) {
    throw new RubricateError('CONFIG_INVALID', `--abstain cannot be used with --judge-protocol ${plan.protocol}: its judges answer in their own format, which has no cannot_assess`, { field: 'abstain' });
  }
  refuseUnreadGroupSettings(plan, mode);
  if (mode === 'listwise' || mode === 'tournament') return createGroupStrategy(plan, mode, sampling);
  if (plan.protocol === 'prometheus') {
    if (plan.abstain !== undefined) {
      throw new RubricateError('CONFIG_INVALID', '--abstain cannot be used with --judge-protocol prometheus: its judges are trained to always answer a 1–5 score in their own layout', { field: 'abstain' });
    }
    if (mode !== 'per-criterion' || readsTokens) {
      throw new RubricateError('CONFIG_INVALID', `--judge-protocol prometheus grades one criterion per call with a [RESULT] score: ${mode === 'holistic' ? 'it has no holistic mode' : `drop --criteria-per-call, --mode and --verdict ${plan.verdict ?? 'probability'}`}`, { field: 'judge-protocol' });
    }
    return createPrometheusAbsoluteStrategy({ sampling });
  }
  if (isAdapterProtocol(plan.protocol)) {
    if (mode !== 'per-criterion' || readsTokens) {
      throw new RubricateError('CONFIG_INVALID', `--judge-protocol ${plan.protocol} grades one criterion per call in its own reply format: drop --criteria-per-call, --mode and --verdict`, { field: 'judge-protocol' });
    }
    return createProtocolStrategy(plan.protocol, { sampling });
  }
  if (mode === 'batched') {
    if (readsTokens) {
      throw new RubricateError('CONFIG_INVALID', `${plan.verdict} verdicts need one criterion per call (drop --criteria-per-call)`, { field: 'verdict' });
    }
    const criteriaPerCall = plan.criteriaPerCall === undefined || plan.criteriaPerCall === 'all' ? Number.POSITIVE_INFINITY : plan.criteriaPerCall;
    return createBatchedStrategy({ sampling, criteriaPerCall, explanation: plan.explanation, abstain: plan.abstain, alignment });
  }
  if (plan.criteriaPerCall !== undefined && plan.criteriaPerCall !== 1) {
    throw new RubricateError('CONFIG_INVALID', `--criteria-per-call sets what a batched call holds: it does not apply to --mode ${mode}`, { field: 'criteria-per-call' });
  }
  if (plan.topLogprobs !== undefined && !readsTokens) {
    throw new RubricateError('CONFIG_INVALID', '--top-logprobs sets what --verdict probability (or expected-score) asks for: add --verdict or leave it out', { field: 'top-logprobs' });
  }
  if (plan.likertLevels !== undefined && mode !== 'holistic') {
    throw new RubricateError('CONFIG_INVALID', '--likert-levels sets the scale of --mode holistic: add --mode holistic or leave it out', { field: 'likert-levels' });
  }
  const perCriterion = createPerCriterionStrategy({ sampling, verdictMode: plan.verdict, explanation: plan.explanation, topLogprobs: plan.topLogprobs, abstain: plan.abstain, alignment });
  return plan.template !== undefined ? withJudgeTemplate(parseJudgeTemplate(plan.template), perCriterion) : perCriterion;
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
  if (plan.protocol === 'prometheus' || isAdapterProtocol(plan.protocol)) refuse('--judge-protocol', `${plan.protocol} grades one response per call in its own format`);
  if (plan.verdict === 'probability' || plan.verdict === 'expected-score') refuse('--verdict', `${plan.verdict} verdicts need one criterion per call`);
  if (plan.topLogprobs !== undefined) refuse('--top-logprobs', 'it sets what --verdict probability asks for, which group modes do not read');
  if (plan.abstain !== undefined) refuse('--abstain', "the group's reply has no cannot_assess per response");
  if (plan.alignment) refuse('--alignment', 'its examples and rewordings are written for one response per call');
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

/** The run's bounds, with the counts the grader multiplies its calls by checked against them before anything is made. */
function checkedLimits(given: Limits | undefined, samples: number, maxAttempts: number | undefined): Limits {
  const limits = parseWith(limitsSchema, given ?? {}, 'limits');
  checkRepeatCount(limits, '--samples', samples);
  // A reply that is never readable is asked again up to --max-attempts times, on every criterion.
  checkRepeatCount(limits, '--max-attempts', maxAttempts ?? 1);
  return limits;
}

/** An item the self-preference guard refused: every criterion an error naming why, no call made. */
function refusedItem(item: Item, note: SelfPreferenceNote): GradedItem {
  const error = refusalOf(note).toJSON();
  return { item, status: 'error', criteria: item.rubric.criteria.map((criterion) => ({ criterion, source: criterion.check ? 'check' : 'judge', status: 'error', error })), gated: false, usage: emptyUsage() };
}

/** An item whose response could not be sampled (`rubricate eval`): every criterion in its error, nothing graded (never an empty response). */
function unsampledItem(item: Item, error: NonNullable<NonNullable<Item['sampled']>['error']>): GradedItem {
  return { item, status: 'error', criteria: item.rubric.criteria.map((criterion) => ({ criterion, source: criterion.check ? 'check' : 'judge', status: 'error', error })), gated: false, usage: emptyUsage() };
}

interface Member {
  info: JuryMemberInfo;
  engine: GradingEngine;
}

/**
 * Grades items with a judge (or a jury, or a cascade) under one run spec: item by item, as a stream, or by group.
 *
 * @example
 * ```ts
 * import { Grader, createJudge, normalizeItem } from 'rubricate';
 * const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), scoring: 'weighted_mean' });
 * const record = await grader.gradeItem(normalizeItem({ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } }));
 * ```
 */
export class Grader {
  readonly scoring: Scoring;
  readonly strategy: GradingStrategy;
  readonly judgeInfo: JudgeInfo | undefined;
  readonly mode: GradingMode;
  /** Jury agreement so far (when there are several members). */
  readonly agreement: JuryAgreement | undefined;
  private readonly members: Member[];
  private readonly omitText: boolean;
  private readonly calibration: Calibration | undefined;
  private readonly aggregate: JuryAggregate;
  private readonly holisticLevels: number;
  private readonly onEvent: GraderOptions['onEvent'];
  /** Cascades: the later judges' engines and the rule that escalates to them. */
  private readonly cascade: { stages: Array<{ judge: string; engine: GradingEngine }>; rule: EscalationRule } | undefined;
  /** Escalations and deciding judges so far (cascades only). */
  readonly cascadeTally: CascadeTally | undefined;
  /** The self-preference guard (absent when no model under test can be known: no judge). */
  readonly selfPreference: SelfPreferenceGuard | undefined;
  /** Listwise and tournament judging: groups of items graded together. */
  private readonly groups: GroupGrading | undefined;
  /** The bounds on work from input size (`--max-group-size`, …), as given. */
  readonly limits: Limits;

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
    this.scoring = countingCannotAssess(typeof options.scoring === 'object' ? options.scoring : getScoring(options.scoring ?? defaultScoringName));
    this.omitText = options.omitText ?? false;
    this.calibration = options.calibration;
    if (options.keepRequests && this.omitText) {
      // A request holds the prompt and the response: keeping it would write the texts --no-text leaves out.
      throw new RubricateError('CONFIG_INVALID', '--keep-requests writes the requests sent to the judge, which hold the texts --no-text leaves out: give one of them', { field: 'keep-requests' });
    }
    this.aggregate = jury.aggregate ?? 'majority';
    this.holisticLevels = plan.likertLevels ?? 10;
    this.onEvent = options.onEvent;
    const samples = jury.samples ?? 1;
    this.limits = checkedLimits(options.limits, samples, calls.maxAttempts);
    const cascadeJudges = options.cascade?.judges ?? [];
    const readsTokens = plan.verdict === 'probability' || plan.verdict === 'expected-score';
    const withoutProbabilities = readsTokens ? [...judges, ...cascadeJudges].find((judge) => judge.capabilities.tokenProbabilities === false) : undefined;
    if (withoutProbabilities) {
      // Refused before any call: every call would fail the same way.
      throw new RubricateError('JUDGE_UNSUPPORTED', `${withoutProbabilities.provenance.id} returns no token probabilities, so --verdict ${plan.verdict} cannot be used with it (use --verdict binary)`, { field: 'verdict' });
    }
    if (plan.abstain !== undefined && judges.length * samples > 1) {
      throw new RubricateError('CONFIG_INVALID', '--abstain cannot be used with a jury (several judges or --samples): a juror\'s abstention has no agreed way into a majority or a mean', { field: 'abstain' });
    }
    if (samples > 1 && sampling.temperature === 0) {
      throw new RubricateError('CONFIG_INVALID', 'several samples of a judge at temperature 0 would all be the same: set --temperature above 0', { field: 'samples' });
    }
    const memberSpecs: Array<{ judge?: Judge; sample?: number }> = judges.length === 0 ? [{}] : judges.flatMap((judge) => Array.from({ length: samples }, (_, sample) => ({ judge, sample: samples > 1 ? sample : undefined })));
    // Repeat r takes the sample indices after those of repeats 0 … r − 1 (repeat 0 keeps the run's own keys).
    const repeatOffset = (options.repeat ?? 0) * samples;
    const engineFor = (judge: Judge | undefined, sample?: number) =>
      new GradingEngine({
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
        sample: sample === undefined && repeatOffset === 0 ? undefined : (sample ?? 0) + repeatOffset,
        abstain: plan.abstain,
        contextBudgetTokens: plan.contextBudget,
        evidenceSampling: { ...sampling, maxTokens: Math.min(sampling.maxTokens, 768) },
        keepRequests: options.keepRequests,
      });
    this.members = memberSpecs.map(({ judge, sample }) => ({ info: { judge: judge?.provenance.id ?? 'none', ...(sample !== undefined ? { sample } : {}) }, engine: engineFor(judge, sample) }));
    if (cascadeJudges.length > 0) {
      if (judges.length === 0) throw new RubricateError('CONFIG_INVALID', 'a cascade starts with the run\'s own judge: name it with --judge (not none)', { field: 'cascade-judge' });
      // `--abstain fail` zeroes the item on the first judge's abstention, which a cascade hands on to the next judge.
      if (plan.abstain === 'fail') throw new RubricateError('CONFIG_INVALID', '--abstain fail scores an item 0 when the judge abstains, but a cascade hands the abstention to its next judge: use another --abstain policy', { field: 'abstain' });
      const rule = escalationRule(options.cascade!, { probabilityVerdicts: readsTokens, jury: this.members.length > 1 });
      this.cascade = { stages: cascadeJudges.map((judge) => ({ judge: judge.provenance.id, engine: engineFor(judge) })), rule };
      this.cascadeTally = new CascadeTally();
    } else if (options.cascade?.band || options.cascade?.escalateOn) {
      throw new RubricateError('CONFIG_INVALID', `${options.cascade.band ? '--escalate-band' : '--escalate-on'} sets when a criterion goes to the next judge of a cascade: add --cascade-judge SPEC`, { field: options.cascade.band ? 'escalate-band' : 'escalate-on' });
    }
    const guard = parseWith(guardSchema, options.guard ?? {}, 'guard');
    if (guard.selfPreference !== undefined && judges.length === 0) throw new RubricateError('CONFIG_INVALID', '--self-preference guards a judge: there is none (--judge none)', { field: 'self-preference' });
    this.selfPreference = judges.length > 0 ? new SelfPreferenceGuard([...judges, ...cascadeJudges], guard) : undefined;
    this.agreement = this.members.length > 1 ? new JuryAgreement(this.members.map((member) => member.info)) : undefined;
    const groupSettings = options.strategy ? undefined : groupSettingsOf(plan, this.limits);
    if (groupSettings && this.cascade) throw new RubricateError('CONFIG_INVALID', `--cascade-judge escalates single criteria of one response, which --mode ${this.mode} grades together with the group's other responses: grade per item for a cascade`, { field: 'cascade-judge' });
    // A group's synthetic item goes to the members directly: the guard has looked at each response's author already.
    this.groups = groupSettings ? new GroupGrading(groupSettings, { judge: (item) => this.gradeByMembers(item), checks: (item) => this.members[0].engine.gradeItem(item), comparisonWindow: Math.max(64, this.members[0].engine.concurrency * 4) }) : undefined;
    this.judgeInfo = judgeInfoFor(judges, {
      templateVersion: this.strategy.templateVersion,
      mode: this.mode,
      sampling,
      verdict: plan.verdict ?? 'binary',
      ...(plan.abstain !== undefined ? { abstain: plan.abstain } : {}),
      ...(plan.alignment ? { alignment: plan.alignment.hash } : {}),
      ...(this.members.length > 1 ? { jury: { members: this.members.map((member) => member.info), aggregate: this.aggregate } } : {}),
      ...(plan.template !== undefined && !options.strategy ? { templateSha256: sha256Hex(plan.template) } : {}),
      ...(this.cascade ? { cascade: { judges: this.cascade.stages.map((stage) => stage.judge), ...(this.cascade.rule.band ? { band: [...this.cascade.rule.band] as [number, number] } : {}), escalate_on: [...this.cascade.rule.reasons] } } : {}),
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

  /**
   * Conditional criteria are graded parents first, in waves, by one judge (`per-criterion` or
   * `batched` calls): a mode that asks for the whole rubric at once, a jury (whose members may
   * disagree on a parent) or a cascade (which may overturn a parent after its children were
   * decided) has no one verdict to read a condition from.
   */
  private refuseConditional(item: Item): void {
    if (!hasConditions(item.rubric)) return;
    const why =
      this.mode !== 'per-criterion' && this.mode !== 'batched'
        ? `--mode ${this.mode} grades the rubric's criteria together`
        : this.members.length > 1
          ? 'a jury (several judges or --samples) may disagree on the verdict a condition reads'
          : this.cascade
            ? 'a cascade may overturn a parent\'s verdict after its children were decided'
            : undefined;
    if (why) throw new RubricateError('CONFIG_INVALID', `item ${item.id} has conditional criteria (\`when\`), which are graded parents first by one judge, per criterion or batched: ${why}`, { field: this.mode !== 'per-criterion' && this.mode !== 'batched' ? 'mode' : this.cascade && this.members.length === 1 ? 'cascade-judge' : 'judge' });
  }

  private prepare(item: Item): Item {
    this.refuseConditional(item);
    if (this.mode !== 'holistic') return item;
    if (hasPerTurnCriteria(item.rubric)) throw new RubricateError('CONFIG_INVALID', `item ${item.id} has per-turn criteria, which --mode holistic cannot grade (it asks one score for the whole rubric)`, { field: 'mode' });
    if (hasStepCriteria(item.rubric)) throw new RubricateError('CONFIG_INVALID', `item ${item.id} has step-scoped criteria, which --mode holistic cannot grade (it asks one score for the whole rubric)`, { field: 'mode' });
    return holisticItem(item, this.holisticLevels);
  }

  /** One item (or one turn of it) by the grader's own judges: the one judge, or the jury's members merged. */
  private async gradeByMembers(item: Item): Promise<GradedItem> {
    if (this.members.length === 1) return this.members[0].engine.gradeItem(item);
    const gradings = await Promise.all(this.members.map((member) => member.engine.gradeItem(item)));
    const merged = mergeJury(this.members.map((member) => member.info), gradings, this.aggregate);
    this.agreement?.add(item.id, merged.criteria);
    // Each member's calls, in member order, each naming its member.
    if (gradings.some((grading) => grading.calls)) return { ...merged, calls: gradings.flatMap((grading, index) => (grading.calls ?? []).map((call) => ({ ...call, member: this.members[index].info }))) };
    return merged;
  }

  /** One item (or one turn of it) by the judges, through the cascade when there is one. */
  private gradeOnce(item: Item): Promise<GradedItem> {
    if (!this.cascade) return this.gradeByMembers(item);
    const first: CascadeStage = { judge: this.judgeInfo?.id ?? 'none', grade: (whole) => this.gradeByMembers(whole) };
    const later = this.cascade.stages.map((stage): CascadeStage => ({ judge: stage.judge, grade: (part) => stage.engine.gradeItem(part) }));
    return gradeInCascade(item, [first, ...later], this.cascade.rule, this.cascadeTally);
  }

  /**
   * An item's criteria graded (by every jury member, merged; turn by turn for per-turn criteria;
   * through the cascade), before scoring: what pairwise comparison reads. Emits the item's
   * progress event. `models`: who wrote the answers, for the self-preference guard (default the
   * item's `metadata.model`).
   */
  async gradeCriteria(item: Item, models: ReadonlyArray<string | undefined> = modelsOf(item.metadata, ['model'])): Promise<GradedItem> {
    const graded = await this.judgeCriteria(item, models);
    this.onEvent?.({ type: 'item', status: graded.status });
    return graded;
  }

  /** `gradeCriteria` without the item's progress event, behind the self-preference guard. */
  private async judgeCriteria(item: Item, models: ReadonlyArray<string | undefined>): Promise<GradedItem> {
    if (item.sampled?.error) return unsampledItem(item, item.sampled.error);
    this.refuseConditional(item);
    const note = this.selfPreference?.check(models);
    if (note?.policy === 'refuse' && note.relation !== 'unrelated') return { ...refusedItem(item, note), selfPreference: note };
    const graded = hasPerTurnCriteria(item.rubric)
      ? await gradeByTurn(item, (atTurn) => this.gradeOnce(atTurn))
      : hasStepCriteria(item.rubric)
        ? await gradeBySteps(item, (part) => this.gradeOnce(part), this.limits.maxSteps ?? defaultLimits.maxSteps)
        : await this.gradeOnce(item);
    return note ? { ...graded, selfPreference: note } : graded;
  }

  /**
   * Listwise and tournament modes: a group's items graded together, one graded item each, in
   * order (with their progress events). The self-preference guard looks at each item's author:
   * a refused item leaves the group (the judge never sees its response), the rest are noted.
   */
  private async gradeGroupItems(items: readonly Item[], id?: string): Promise<GradedItem[]> {
    for (const item of items) this.refuseConditional(item);
    const notes = items.map((item) => this.selfPreference?.check(modelsOf(item.metadata, ['model'])));
    const unsampled = (index: number) => items[index].sampled?.error !== undefined;
    const refused = (index: number) => unsampled(index) || (notes[index]?.policy === 'refuse' && notes[index]!.relation !== 'unrelated');
    const kept = items.filter((_item, index) => !refused(index));
    const groupGraded = kept.length > 0 ? await this.groups!.gradeGroup(kept, id) : [];
    let next = 0;
    const graded = items.map((item, index): GradedItem => {
      const note = notes[index];
      if (unsampled(index)) return unsampledItem(item, item.sampled!.error!);
      if (refused(index)) return { ...refusedItem(item, note!), selfPreference: note! };
      const entry = groupGraded[next++];
      return note ? { ...entry, selfPreference: note } : entry;
    });
    for (const entry of graded) this.onEvent?.({ type: 'item', status: entry.status });
    return graded;
  }

  /**
   * The responses to one prompt graded together, one result per item in order: in one
   * listwise call (or a tournament) in those modes, each on its own otherwise. `id` names the group.
   */
  async gradeGroup(items: readonly Item[], id?: string): Promise<ResultRecord[]> {
    if (!this.groups) {
      // The per-item modes would start every item at once: over the bound, LIMIT_EXCEEDED before any judge call.
      const overBound = this.groupLimitProblem(items);
      if (overBound) throw overBound;
      return Promise.all(items.map((item) => this.gradeItem(item)));
    }
    return (await this.gradeGroupItems(items, id)).map((graded) => this.toRecord({ kind: 'graded', graded, line: 0 }));
  }

  /**
   * Why a group of items cannot be graded within the bounds, before anything is spent on it:
   * more items than `--max-group-size` (in every mode: a group request is one piece of work),
   * or a tournament over `--max-tournament-pairs`.
   */
  groupLimitProblem(items: readonly Item[]): RubricateError | undefined {
    if (this.groups) return this.groups.limitProblem(items);
    const bound = this.limits.maxGroupSize ?? defaultLimits.maxGroupSize;
    return items.length > bound ? groupTooLarge(bound, items.length) : undefined;
  }

  /** Counts an input record that could not be read (it is written as `invalid`, in its place). */
  noteInvalid(): void {
    this.onEvent?.({ type: 'item', status: 'invalid' });
  }

  private toRecord(record: GradedRecord): ResultRecord {
    return toResultRecord(record, { judge: this.judgeInfo, scoring: this.scoring, omitText: this.omitText, ...(this.calibration ? { calibration: this.calibration } : {}) });
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
    const engines = [...this.members.map((member) => member.engine), ...(this.cascade?.stages.map((stage) => stage.engine) ?? [])];
    return engines.find((engine) => engine.fatal)?.fatal;
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
      const { groupBy, maxGroupSize } = this.groups.settings;
      const groups = this.inInputOrder(consecutiveGroups(records, groupBy, maxGroupSize), async ({ records: group, oversized }): Promise<GradedRecord[]> => {
        const items = group.flatMap((record) => (record.kind === 'item' ? [record] : []));
        if (items.length === 0) {
          for (const _record of group) this.noteInvalid();
          return group as GradedRecord[];
        }
        if (oversized) {
          // Over the bound: no piece of the group is held whole or graded, each item says why.
          const error = groupTooLarge(maxGroupSize);
          return items.map((record) => {
            this.onEvent?.({ type: 'item', status: 'error' });
            return { kind: 'graded', graded: failedItem(record.item, error), line: record.line };
          });
        }
        const graded = await this.gradeGroupItems(items.map((record) => record.item));
        return graded.map((entry, index) => ({ kind: 'graded', graded: entry, line: items[index].line }));
      });
      for await (const group of groups) for (const record of group) yield this.toRecord(record);
      return;
    }
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
