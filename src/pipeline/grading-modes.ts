/**
 * The grading modes as one registry, the twin of the judge registry: each mode (and each judge
 * protocol, which is a mode of its own layout) declares the plan settings it reads, whether it
 * grades groups of items, its defaults and how its strategy is made. A setting the chosen mode
 * does not read is refused by name (`unreadPlanSettings`), for `Grader`, `Comparer` and `meta`
 * alike; only the rules between two settings stay as code (`refuseCrossSettings`).
 *
 * A new mode: one entry here and its strategy file. A new plan setting: its schema field
 * (`spec/run-spec.ts`), its flag row (`cli/run-spec-flags.ts`) and the `reads` of the modes that
 * read it.
 */
import { RubricateError } from '../errors.js';
import { parseJudgeTemplate, withJudgeTemplate } from '../grading/custom-template.js';
import { createListwiseStrategy } from '../grading/listwise.js';
import { createPairwiseStrategy, type PairwiseOptions } from '../grading/pairwise.js';
import { createPrometheusAbsoluteStrategy, createPrometheusRelativeStrategy } from '../grading/prometheus.js';
import { createProtocolPairwiseStrategy, createProtocolStrategy, isAdapterProtocol, type AdapterProtocol } from '../grading/protocols/index.js';
import { createRankFourStrategy } from '../grading/rank-four.js';
import { assertValidSampling } from '../grading/sampling.js';
import { createBatchedStrategy, createPerCriterionStrategy } from '../grading/strategies.js';
import type { GradingStrategy, SamplingOptions } from '../grading/types.js';
import type { Judge } from '../judges/types.js';
import type { GradingPlan } from '../spec/run-spec.js';
import { createRegistry, type RegistryName } from '../util/registry.js';
import { defaultPairwiseMaxTokens, withDefaultSampling } from './defaults.js';

/** A setting of the grading plan (`GradingPlan`'s fields). */
export type PlanSetting = keyof GradingPlan;

/** What a mode reads of a setting: any value, or only these values. */
type Reads = { readonly [Setting in PlanSetting]?: true | ReadonlyArray<NonNullable<GradingPlan[Setting]>> };

/** The message refusing a setting a mode does not read, when there is more to say than which modes read it. */
type Refusal = (plan: GradingPlan, flag: string) => string;

/** How a comparison is asked (`compare`): both orders, ties, an overall comparison. */
export type ComparisonOptions = Pick<PairwiseOptions, 'swap' | 'allowTies' | 'overall'>;

export interface GradingModeEntry {
  /** How messages name the mode: `--mode batched`, `--judge-protocol selene`. */
  readonly label: string;
  /** The plan settings the mode reads; any other one given is refused by name. */
  readonly reads: Reads;
  /** Why a setting is refused, where the reason says more than which modes read it. */
  readonly refusals?: { readonly [Setting in PlanSetting]?: Refusal };
  /** Whether it grades groups of items together (listwise, tournament). */
  readonly groups?: boolean;
  /** The plan with this mode's defaults for a judge filled in (explanation length, output tokens). */
  defaults(plan: GradingPlan, judge: Judge | undefined): GradingPlan;
  /** The strategy its calls follow. */
  create(plan: GradingPlan, sampling: SamplingOptions, comparison?: ComparisonOptions): GradingStrategy;
}

/** A setting's flag: its name in kebab case, but for these. */
const irregularFlags: Partial<Record<PlanSetting, string>> = { protocol: '--judge-protocol', template: '--judge-template', sampling: '--temperature, --max-tokens or --seed' };

/** The flag that sets a plan setting (`criteriaPerCall` → `--criteria-per-call`). */
export function planSettingFlag(setting: PlanSetting): string {
  return irregularFlags[setting] ?? `--${setting.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

/** Whether the plan's verdicts are read from token probabilities (`probability`, `expected-score`). */
export const readsTokenProbabilities = (plan: GradingPlan) => plan.verdict === 'probability' || plan.verdict === 'expected-score';
const criteriaPerCallOf = (plan: GradingPlan) => (plan.criteriaPerCall === undefined || plan.criteriaPerCall === 'all' ? Number.POSITIVE_INFINITY : plan.criteriaPerCall);

/** The explanation length: the plan's, else the judge's own default (the local judge: short), else full. */
function withExplanationDefault(plan: GradingPlan, judge: Judge | undefined): GradingPlan {
  return { ...plan, explanation: plan.explanation ?? judge?.capabilities.defaults?.explanation ?? 'full' };
}
const asGiven = (plan: GradingPlan) => plan;
const withPairwiseSampling = (plan: GradingPlan): GradingPlan => ({ ...plan, sampling: { maxTokens: defaultPairwiseMaxTokens, ...plan.sampling } });

const templateRefusal = (drop: string): Refusal => () => `--judge-template replaces the per-criterion prompt of rubricate's own protocol: drop ${drop}`;
const perCriterionTemplate = templateRefusal('--criteria-per-call and --mode');

/** What rubricate's own per-item prompts read (per-criterion, batched, holistic). */
const nativeItemReads = { mode: true, explanation: true, protocol: ['native'], contextBudget: true, sampling: true, abstain: true } as const satisfies Reads;

/** Listwise and tournament: why they do not read the per-item settings. */
function groupRefusals(mode: 'listwise' | 'tournament'): GradingModeEntry['refusals'] {
  const refusal = (why: (plan: GradingPlan) => string): Refusal => (plan, flag) => `${flag} does not apply to --mode ${mode}: ${why(plan)}`;
  return {
    protocol: refusal((plan) => `${plan.protocol} grades one response per call in its own format`),
    verdict: refusal((plan) => `${plan.verdict} verdicts need one criterion per call`),
    topLogprobs: refusal(() => 'it sets what --verdict probability asks for, which group modes do not read'),
    abstain: refusal(() => "the group's reply has no cannot_assess per response"),
    alignment: refusal(() => 'its examples and rewordings are written for one response per call'),
    contextBudget: refusal(() => 'responses too long for the judge are read for evidence one item at a time; grade them per item'),
    template: perCriterionTemplate,
    // Listwise reads --likert-levels under --listwise holistic (`refuseCrossSettings`).
    ...(mode === 'tournament'
      ? {
          criteriaPerCall: refusal(() => 'a tournament compares two responses per call on the whole rubric'),
          likertLevels: refusal(() => 'a tournament compares, it does not rate'),
          explanation: refusal(() => "the comparison's reply has its own one-to-three-sentence explanation"),
        }
      : {}),
  };
}

/** Prometheus and the adapter protocols (`grading/protocols/`): one criterion per call in the judge's own layout. */
function protocolEntry(protocol: 'prometheus' | AdapterProtocol): GradingModeEntry {
  const prometheus = protocol === 'prometheus';
  const oneCriterion: Refusal = (plan) =>
    prometheus
      ? `--judge-protocol prometheus grades one criterion per call with a [RESULT] score: ${plan.mode === 'holistic' ? 'it has no holistic mode (drop --mode holistic)' : `drop --criteria-per-call, --mode and --verdict ${plan.verdict ?? 'probability'}`}`
      : `--judge-protocol ${protocol} grades one criterion per call in its own reply format: drop --criteria-per-call, --mode and --verdict`;
  return {
    label: `--judge-protocol ${protocol}`,
    reads: { mode: ['per-criterion'], criteriaPerCall: [1], verdict: ['binary'], protocol: true, explanation: true, contextBudget: true, sampling: true },
    refusals: {
      mode: oneCriterion,
      criteriaPerCall: oneCriterion,
      verdict: oneCriterion,
      template: templateRefusal('--judge-protocol'),
      abstain: () =>
        prometheus
          ? '--abstain cannot be used with --judge-protocol prometheus: its judges are trained to always answer a 1–5 score in their own layout'
          : `--abstain cannot be used with --judge-protocol ${protocol}: its judges answer in their own format, which has no cannot_assess`,
      alignment: () => `--alignment applies examples and rewordings per criterion: --judge-protocol ${protocol} has its own layout, without rubricate's delimited blocks`,
    },
    defaults: withExplanationDefault,
    create: (_plan, sampling) => (prometheus ? createPrometheusAbsoluteStrategy({ sampling }) : createProtocolStrategy(protocol, { sampling })),
  };
}

/** The built-in modes: the `--mode`s, then compare's and meta's own, then the judge protocols. */
const builtInModes = {
  'per-criterion': {
    label: '--mode per-criterion',
    reads: { ...nativeItemReads, criteriaPerCall: [1], verdict: true, topLogprobs: true, template: true, alignment: true },
    defaults: withExplanationDefault,
    create(plan, sampling) {
      const strategy = createPerCriterionStrategy({ sampling, verdictMode: plan.verdict, explanation: plan.explanation, topLogprobs: plan.topLogprobs, abstain: plan.abstain, alignment: plan.alignment });
      return plan.template !== undefined ? withJudgeTemplate(parseJudgeTemplate(plan.template), strategy) : strategy;
    },
  },
  batched: {
    label: '--mode batched',
    reads: { ...nativeItemReads, criteriaPerCall: true, verdict: ['binary'], alignment: true },
    refusals: { verdict: (plan, flag) => `${flag} ${plan.verdict} does not apply to --mode batched: ${plan.verdict} verdicts need one criterion per call (drop --criteria-per-call)`, template: perCriterionTemplate },
    defaults: withExplanationDefault,
    create: (plan, sampling) => createBatchedStrategy({ sampling, criteriaPerCall: criteriaPerCallOf(plan), explanation: plan.explanation, abstain: plan.abstain, alignment: plan.alignment }),
  },
  holistic: {
    // Per-criterion calls on one Likert criterion standing for the rubric (`Grader.prepare`).
    label: '--mode holistic',
    reads: { ...nativeItemReads, criteriaPerCall: [1], verdict: true, topLogprobs: true, likertLevels: true },
    refusals: { template: perCriterionTemplate, alignment: () => '--alignment applies examples and rewordings per criterion: --mode holistic asks one rating per item' },
    defaults: withExplanationDefault,
    create: (plan, sampling) => createPerCriterionStrategy({ sampling, verdictMode: plan.verdict, explanation: plan.explanation, topLogprobs: plan.topLogprobs, abstain: plan.abstain }),
  },
  listwise: {
    label: '--mode listwise',
    reads: { mode: true, groupBy: true, listwise: true, orders: true, criteriaPerCall: true, verdict: ['binary'], explanation: true, protocol: ['native'], likertLevels: true, sampling: true },
    refusals: groupRefusals('listwise'),
    groups: true,
    defaults: withExplanationDefault,
    create: (plan, sampling) => createListwiseStrategy({ sampling, criteriaPerCall: criteriaPerCallOf(plan), explanation: plan.explanation }),
  },
  tournament: {
    label: '--mode tournament',
    reads: { mode: true, groupBy: true, tournament: true, orders: true, verdict: ['binary'], protocol: ['native'], sampling: true },
    refusals: groupRefusals('tournament'),
    groups: true,
    // A tournament's comparisons write their own explanation: no length to default.
    defaults: withPairwiseSampling,
    create: (plan, sampling) => createPairwiseStrategy({ sampling, swap: plan.orders !== 1, allowTies: true, overall: false }),
  },
  pairwise: {
    // `compare`: each pair in both orders, in rubricate's layout or a protocol's pairwise one.
    label: 'compare',
    reads: { protocol: true, sampling: true, alignment: true },
    defaults: withPairwiseSampling,
    create(plan, sampling, comparison = {}) {
      if (plan.protocol === 'prometheus') return createPrometheusRelativeStrategy({ sampling });
      if (isAdapterProtocol(plan.protocol)) return createProtocolPairwiseStrategy(plan.protocol, { sampling });
      return createPairwiseStrategy({ sampling, ...comparison, alignment: plan.alignment });
    },
  },
  'rank-four': {
    // `meta --judging rank-four`: four responses ranked at once (RewardBench 2).
    label: '--judging rank-four',
    reads: { protocol: ['native'], sampling: true },
    refusals: {
      template: () => '--judging rank-four asks its own question of four responses: --judge-template applies to rated responses only (--judging ratings)',
      protocol: () => '--judging rank-four asks its own question of four responses: --judge-protocol applies to rated responses only (--judging ratings)',
    },
    defaults: asGiven,
    create: (_plan, sampling) => createRankFourStrategy({ sampling }),
  },
  prometheus: protocolEntry('prometheus'),
  r3: protocolEntry('r3'),
  selene: protocolEntry('selene'),
  lynx: protocolEntry('lynx'),
} satisfies Record<string, GradingModeEntry>;

/** Every grading mode and protocol, by name. */
export const gradingModes = createRegistry<keyof typeof builtInModes, GradingModeEntry>({ what: 'grading mode', field: 'mode' }, builtInModes);

export type GradingModeName = RegistryName<typeof gradingModes>;

/** The `--mode` of a plan (`per-criterion`, `batched`, `holistic`, `listwise`, `tournament`). */
export type GradingMode = NonNullable<GradingPlan['mode']>;

/** The `--mode` a plan grades in: batched as soon as more than one criterion goes into a call. */
export function modeOf(plan: GradingPlan): GradingMode {
  return plan.mode ?? (plan.criteriaPerCall !== undefined && plan.criteriaPerCall !== 1 ? 'batched' : 'per-criterion');
}

/** The registry entry a plan grades with: a group mode, else the judge protocol, else the `--mode`. */
export function gradingModeOf(plan: GradingPlan): GradingModeName {
  const mode = modeOf(plan);
  if (gradingModes.get(mode).groups || plan.protocol === undefined || plan.protocol === 'native') return mode;
  return plan.protocol;
}

export interface UnreadSetting {
  setting: PlanSetting;
  flag: string;
  /** Why it is refused, naming the flag. */
  message: string;
}

function isRead(entry: GradingModeEntry, setting: PlanSetting, value: unknown): boolean {
  const read = entry.reads[setting];
  return read === true || (Array.isArray(read) && read.includes(value));
}

/** The message refusing a setting with no reason of its own: the `--mode`s that read it, or the mode that does not. */
function unreadMessage(entry: GradingModeEntry, setting: PlanSetting, value: unknown, flag: string): string {
  const readers = gradingModes.values().filter((other) => other.label.startsWith('--mode') && isRead(other, setting, value));
  if (entry.label.startsWith('--mode') && readers.length > 0) return `${flag} applies to ${readers.map((other) => other.label).join(' or ')}: add that mode or leave it out`;
  return `${flag} does not apply to ${entry.label}: leave it out`;
}

/** The settings given in `plan` that `mode` does not read, each with its flag and the message refusing it, in the schema's order. */
export function unreadPlanSettings(plan: GradingPlan, mode: GradingModeName = gradingModeOf(plan)): UnreadSetting[] {
  const entry: GradingModeEntry = gradingModes.get(mode);
  const unread: UnreadSetting[] = [];
  for (const [setting, value] of Object.entries(plan) as Array<[PlanSetting, unknown]>) {
    if (value === undefined || isRead(entry, setting, value)) continue;
    const flag = planSettingFlag(setting);
    unread.push({ setting, flag, message: entry.refusals?.[setting]?.(plan, flag) ?? unreadMessage(entry, setting, value, flag) });
  }
  return unread;
}

/** Refuses the first setting `mode` does not read (CONFIG_INVALID, the field its flag). */
export function refuseUnreadPlanSettings(plan: GradingPlan, mode: GradingModeName = gradingModeOf(plan)): void {
  const [first] = unreadPlanSettings(plan, mode);
  if (first) throw new RubricateError('CONFIG_INVALID', first.message, { field: first.flag.slice(2) });
}

/** The rules between two settings, which no one mode's reads can say. */
function refuseCrossSettings(plan: GradingPlan, mode: GradingModeName): void {
  const refuse = (flag: string, message: string) => {
    throw new RubricateError('CONFIG_INVALID', message, { field: flag });
  };
  // Both rewrite rubricate's own prompt (examples and rewordings, the cannot_assess rule), which a template replaces.
  if (plan.template !== undefined && (plan.alignment || plan.abstain !== undefined)) refuse('judge-template', `--judge-template replaces the prompt ${plan.alignment ? '--alignment' : '--abstain'} adds its rules to: give one of them`);
  if (mode === 'pairwise') {
    if (plan.alignment && plan.protocol !== undefined && plan.protocol !== 'native') refuse('alignment', `--alignment cannot be used with --judge-protocol ${plan.protocol}: its layout has no place for rubricate's delimited examples`);
    if (plan.alignment?.calibrator) refuse('alignment', '--alignment holds a calibrator of P(met), which pairwise verdicts do not have: use an alignment fitted on binary verdicts');
  } else if (plan.alignment?.calibrator && plan.verdict !== 'probability') {
    refuse('alignment', '--alignment holds a calibrator of P(met), fitted on probability verdicts: add --verdict probability, or align again on binary verdicts');
  }
  if (plan.topLogprobs !== undefined && !readsTokenProbabilities(plan)) refuse('top-logprobs', '--top-logprobs sets what --verdict probability (or expected-score) asks for: add --verdict or leave it out');
  if (plan.likertLevels !== undefined && mode === 'listwise' && plan.listwise !== 'holistic') refuse('likert-levels', '--likert-levels does not apply to --mode listwise: it sets the scale of --listwise holistic');
}

/**
 * The strategy a plan's calls follow, its settings checked against the mode first (holistic
 * items are per-criterion calls on one Likert criterion).
 */
export function createStrategy(plan: GradingPlan, sampling: SamplingOptions = withDefaultSampling(plan.sampling), mode: GradingModeName = gradingModeOf(plan), comparison?: ComparisonOptions): GradingStrategy {
  assertValidSampling(sampling);
  refuseUnreadPlanSettings(plan, mode);
  refuseCrossSettings(plan, mode);
  return gradingModes.get(mode).create(plan, sampling, comparison);
}
