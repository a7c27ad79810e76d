/**
 * What a `Grader` is built from: its options, parsed and checked once before anything is made
 * (the plan against its mode, then the rules between the plan, the jury, the cascade and the
 * judges), and the engines of its jury members and cascade stages.
 */
import { GradingEngine, type EngineOptions, type GradedItem } from '../engine/engine.js';
import { emptyUsage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import type { GradingStrategy, SamplingOptions, SelfPreferenceNote } from '../grading/types.js';
import type { Judge } from '../judges/types.js';
import type { Item } from '../rubric/schema.js';
import type { Scoring } from '../scoring/types.js';
import type { Calibration } from '../spec/calibration.js';
import { callPolicySchema, checkRepeatCount, gradingPlanSchema, guardSchema, jurySchema, limitsSchema, parseWith, type CallPolicy, type GradingPlan, type JurySettings, type Limits, type RunSpec } from '../spec/run-spec.js';
import { escalationRule, refuseCascadeConflicts, type CascadeOptions, type EscalationRule } from './cascade.js';
import type { JuryAggregate, JuryMemberInfo } from './jury.js';
import { judgeInfoFor, type JudgeInfo } from '../results/results.js';
import { sha256Hex } from '../util/hash.js';
import { defaultCheckRunner, withDefaultSampling } from './defaults.js';
import { createStrategy, gradingModeOf, gradingModes, modeOf, readsTokenProbabilities, refuseUnreadPlanSettings, type GradingMode, type GradingModeName } from './grading-modes.js';
import { refusalOf, SelfPreferenceGuard } from './self-preference.js';

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

/** The run's bounds, with the counts the grader multiplies its calls by checked against them before anything is made. */
export function checkedLimits(given: Limits | undefined, samples: number, maxAttempts: number | undefined): Limits {
  const limits = parseWith(limitsSchema, given ?? {}, 'limits');
  checkRepeatCount(limits, '--samples', samples);
  // A reply that is never readable is asked again up to --max-attempts times, on every criterion.
  checkRepeatCount(limits, '--max-attempts', maxAttempts ?? 1);
  return limits;
}

/** An item the self-preference guard refused: every criterion an error naming why, no call made. */
export function refusedItem(item: Item, note: SelfPreferenceNote): GradedItem {
  const error = refusalOf(note).toJSON();
  return { item, status: 'error', criteria: item.rubric.criteria.map((criterion) => ({ criterion, source: criterion.check ? 'check' : 'judge', status: 'error', error })), gated: false, usage: emptyUsage() };
}

/** An item whose response could not be sampled (`rubricate eval`): every criterion in its error, nothing graded (never an empty response). */
export function unsampledItem(item: Item, error: NonNullable<NonNullable<Item['sampled']>['error']>): GradedItem {
  return { item, status: 'error', criteria: item.rubric.criteria.map((criterion) => ({ criterion, source: criterion.check ? 'check' : 'judge', status: 'error', error })), gated: false, usage: emptyUsage() };
}

/** What a Grader is built from: its options parsed once, the plan with its mode's defaults, the strategy. */
export interface GradingSetup {
  plan: GradingPlan;
  mode: GradingMode;
  modeName: GradingModeName;
  sampling: SamplingOptions;
  strategy: GradingStrategy;
  calls: CallPolicy;
  jury: JurySettings;
  judges: Judge[];
  samples: number;
  cascadeJudges: Judge[];
}

/**
 * A Grader's options parsed and checked before anything is built: the plan's settings against
 * its mode (unless the caller brings its own strategy), then the rules between the plan, the
 * jury, the cascade and the judges.
 */
export function gradingSetup(options: GraderOptions): GradingSetup {
  const judges = options.judges && options.judges.length > 0 ? options.judges : options.judge ? [options.judge] : [];
  const given = parseWith(gradingPlanSchema, options.plan ?? {}, 'plan');
  const modeName = gradingModeOf(given);
  // The settings are checked as given, before the mode's defaults (the local judge's short explanations) fill them in.
  if (!options.strategy) refuseUnreadPlanSettings(given, modeName);
  const plan = gradingModes.get(modeName).defaults(given, judges[0]);
  const sampling: SamplingOptions = withDefaultSampling(plan.sampling);
  const strategy = options.strategy ?? createStrategy(plan, sampling, modeName);
  if (options.keepRequests && options.omitText) {
    // A request holds the prompt and the response: keeping it would write the texts --no-text leaves out.
    throw new RubricateError('CONFIG_INVALID', '--keep-requests writes the requests sent to the judge, which hold the texts --no-text leaves out: give one of them', { field: 'keep-requests' });
  }
  const jury = parseWith(jurySchema, options.jury ?? {}, 'jury');
  const samples = jury.samples ?? 1;
  const cascadeJudges = options.cascade?.judges ?? [];
  refuseJudgeConflicts(plan, sampling, [...judges, ...cascadeJudges], { judges: judges.length, samples });
  const mode = modeOf(plan);
  refuseCascadeConflicts(options.cascade, { judges: judges.length, abstain: plan.abstain, groupMode: !options.strategy && gradingModes.get(modeName).groups ? mode : undefined });
  return { plan, mode, modeName, sampling, strategy, calls: parseWith(callPolicySchema, options.calls ?? {}, 'calls'), jury, judges, samples, cascadeJudges };
}

/** The plan against its judges: token probabilities from each, abstentions and samples of a jury. */
function refuseJudgeConflicts(plan: GradingPlan, sampling: SamplingOptions, judges: readonly Judge[], jury: { judges: number; samples: number }): void {
  const withoutProbabilities = readsTokenProbabilities(plan) ? judges.find((judge) => judge.capabilities.tokenProbabilities === false) : undefined;
  if (withoutProbabilities) {
    // Refused before any call: every call would fail the same way.
    throw new RubricateError('JUDGE_UNSUPPORTED', `${withoutProbabilities.provenance.id} returns no token probabilities, so --verdict ${plan.verdict} cannot be used with it (use --verdict binary)`, { field: 'verdict' });
  }
  if (plan.abstain !== undefined && jury.judges * jury.samples > 1) {
    throw new RubricateError('CONFIG_INVALID', '--abstain cannot be used with a jury (several judges or --samples): a juror\'s abstention has no agreed way into a majority or a mean', { field: 'abstain' });
  }
  if (jury.samples > 1 && sampling.temperature === 0) {
    throw new RubricateError('CONFIG_INVALID', 'several samples of a judge at temperature 0 would all be the same: set --temperature above 0', { field: 'samples' });
  }
}

/** One engine: a jury member (with its sample index) or a cascade stage. */
function createEngine(options: GraderOptions, setup: GradingSetup, judge: Judge | undefined, sample?: number): GradingEngine {
  const { plan, sampling, samples } = setup;
  // Repeat r takes the sample indices after those of repeats 0 … r − 1 (repeat 0 keeps the run's own keys).
  const repeatOffset = (options.repeat ?? 0) * samples;
  return new GradingEngine({
    judge,
    // Each sample of a seeded jury member gets its own seed.
    strategy: sample !== undefined && sampling.seed !== undefined && !options.strategy ? createStrategy(plan, { ...sampling, seed: sampling.seed + sample }, setup.modeName) : setup.strategy,
    store: options.store,
    checkRunner: options.checkRunner ?? defaultCheckRunner,
    checkMode: options.checkMode,
    calls: setup.calls,
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
}


/** A jury member: its judge and sample, and the engine that grades for it. */
export interface Member {
  info: JuryMemberInfo;
  engine: GradingEngine;
}

/** The later judges of a cascade, each with its engine, and the rule that escalates to them. */
export interface Cascade {
  stages: Array<{ judge: string; engine: GradingEngine }>;
  rule: EscalationRule;
}

/** One member per judge and sample (one judge-less member for checks only). */
export function createMembers(options: GraderOptions, setup: GradingSetup): Member[] {
  const { judges, samples } = setup;
  const specs: Array<{ judge?: Judge; sample?: number }> = judges.length === 0 ? [{}] : judges.flatMap((judge) => Array.from({ length: samples }, (_, sample) => ({ judge, sample: samples > 1 ? sample : undefined })));
  return specs.map(({ judge, sample }) => ({ info: { judge: judge?.provenance.id ?? 'none', ...(sample !== undefined ? { sample } : {}) }, engine: createEngine(options, setup, judge, sample) }));
}

export function createCascade(options: GraderOptions, setup: GradingSetup, jury: boolean): Cascade | undefined {
  if (setup.cascadeJudges.length === 0) return undefined;
  const rule = escalationRule(options.cascade!, { probabilityVerdicts: readsTokenProbabilities(setup.plan), jury });
  return { stages: setup.cascadeJudges.map((judge) => ({ judge: judge.provenance.id, engine: createEngine(options, setup, judge) })), rule };
}

/** The self-preference guard over every judge that may decide a criterion (absent without a judge). */
export function selfPreferenceGuardOf(options: GraderOptions, setup: GradingSetup): SelfPreferenceGuard | undefined {
  const guard = parseWith(guardSchema, options.guard ?? {}, 'guard');
  if (guard.selfPreference !== undefined && setup.judges.length === 0) throw new RubricateError('CONFIG_INVALID', '--self-preference guards a judge: there is none (--judge none)', { field: 'self-preference' });
  return setup.judges.length > 0 ? new SelfPreferenceGuard([...setup.judges, ...setup.cascadeJudges], guard) : undefined;
}

/** The judge provenance every result of the grader carries. */
export function graderJudgeInfo(options: GraderOptions, setup: GradingSetup, members: readonly Member[], aggregate: JuryAggregate, cascade: Cascade | undefined): JudgeInfo | undefined {
  const { plan } = setup;
  return judgeInfoFor(setup.judges, {
    templateVersion: setup.strategy.templateVersion,
    mode: setup.mode,
    sampling: setup.sampling,
    verdict: plan.verdict ?? 'binary',
    ...(plan.abstain !== undefined ? { abstain: plan.abstain } : {}),
    ...(plan.alignment ? { alignment: plan.alignment.hash } : {}),
    ...(members.length > 1 ? { jury: { members: members.map((member) => member.info), aggregate } } : {}),
    ...(plan.template !== undefined && !options.strategy ? { templateSha256: sha256Hex(plan.template) } : {}),
    ...(cascade ? { cascade: { judges: cascade.stages.map((stage) => stage.judge), ...(cascade.rule.band ? { band: [...cascade.rule.band] as [number, number] } : {}), escalate_on: [...cascade.rule.reasons] } } : {}),
  });
}
