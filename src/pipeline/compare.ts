/**
 * `rubricate compare`: pairwise judging of response A against B, overall and per rubric
 * criterion, in both presentation orders. A comparison whose two orders disagree is
 * order-inconsistent and counted as such. Summaries give win/tie/loss with bootstrap
 * CIs, the position-consistency rate, and (with gold labels) LLMBar-style accuracy.
 */
import type { CheckRunner, CriterionResult, EngineEvent } from '../engine/engine.js';
import type { ReplyStore } from '../store/index.js';
import { addUsage, emptyUsage, type Usage } from '../engine/usage.js';
import { RubricateError, type SerializedError } from '../errors.js';
import { combineOrders, comparisonOf, overallCriterionId, overallCriterionText, pairToItem, type ComparisonResult, type ComparisonWinner, type PairOrder } from '../grading/pairwise.js';

export { comparisonFromOrders, type ComparisonResult, type ComparisonWinner } from '../grading/pairwise.js';
import type { SamplingOptions } from '../grading/types.js';
import type { Judge } from '../judges/types.js';
import { computePairwiseMeta } from '../scoring/pairwise-metrics.js';
import type { PairwiseMetaRecord, PairwiseMetaReport } from '../scoring/pairwise-metrics.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { hasConditions } from '../rubric/conditions.js';
import type { Message, PairLabel, PairwiseItem } from '../rubric/schema.js';
import { bootstrap } from '../statistics/bootstrap.js';
import { benjaminiHochbergAdjust, holmAdjust } from '../statistics/multiple-testing.js';
import { minimumPairedSampleSize, pairedDelta } from '../statistics/paired.js';
import { mean } from '../statistics/descriptive.js';
import { rubricateVersion } from '../version.js';
import { withDefaultSampling } from './defaults.js';
import { createStrategy, gradingModes } from './grading-modes.js';
import { Grader } from './grader.js';
import { modelsOf } from './self-preference.js';
import { judgeInfoFor, type JudgeInfo } from '../results/results.js';
import { MadeUpTally } from '../util/made-up.js';
import { gradingPlanSchema, parseWith, type GradingPlan, type RunSpec } from '../spec/run-spec.js';

export interface CompareRecord {
  id: string;
  status: 'ok' | 'error' | 'invalid';
  winner: ComparisonWinner | null;
  consistent: boolean | null;
  orders: Partial<Record<PairOrder, PairLabel | null>>;
  label?: PairLabel;
  /** Whether the combined verdict equals the gold label. */
  correct?: boolean | null;
  source?: string;
  overall?: ComparisonResult;
  criteria: ComparisonResult[];
  prompt?: Message[];
  response_a?: string;
  response_b?: string;
  judge?: JudgeInfo;
  usage?: Usage;
  error?: SerializedError;
  line?: number;
  rubricate_version: string;
  /** The self-preference guard: the model under test and the judge, when related or when the run named its model under test. */
  self_preference?: { model_under_test: string; judge: string; relation: string; policy: string };
}

export interface CompareOptions extends Partial<Pick<RunSpec, 'calls' | 'omitText' | 'guard'>> {
  judge?: Judge;
  store?: ReplyStore;
  /** What a pairwise call reads of the grading plan: its sampling (512 output tokens by default) and protocol. */
  plan?: ComparePlan;
  swap?: boolean;
  allowTies?: boolean;
  /** Compare overall as well as per criterion when pairs carry a rubric (default true). */
  overall?: boolean;
  checkRunner?: CheckRunner;
  onEvent?: (event: EngineEvent) => void;
  signal?: AbortSignal;
  /** Once aborted, no new pair is taken and no new judge call starts (see the engine's option). */
  stopSignal?: AbortSignal;
}

/**
 * The plan settings pairwise judging reads (the `pairwise` grading mode); `prometheus`:
 * Prometheus' relative layout and `[RESULT] A|B` replies (no ties). Any other setting is refused by name.
 */
export type ComparePlan = Pick<GradingPlan, 'sampling' | 'protocol' | 'alignment'>;

/**
 * Pairwise comparison on the grading pipeline: each pair becomes an item whose criteria are
 * the comparisons in each presentation order, graded by a `Grader` with the pairwise strategy
 * (same engine, store, retries and ordered streaming as `grade`), then folded into a record.
 *
 * @example
 * ```ts
 * import { Comparer, createJudge } from 'rubricate';
 * const comparer = new Comparer({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), swap: true });
 * const line = await comparer.comparePair({ id: 'p1', prompt: [{ role: 'user', content: 'Name a prime.' }], responseA: '7', responseB: '8' });
 * ```
 */
export class Comparer {
  readonly grader: Grader;
  readonly judgeInfo: JudgeInfo | undefined;
  private readonly options: CompareOptions;

  constructor(options: CompareOptions) {
    this.options = options;
    // Any other plan setting (mode, verdict, explanation…) is refused by name: pairwise judging would ignore it.
    const given = gradingModes.get('pairwise').defaults(parseWith(gradingPlanSchema, options.plan ?? {}, 'compare plan'), options.judge);
    const sampling: SamplingOptions = withDefaultSampling(given.sampling);
    const { alignment } = given;
    const strategy = createStrategy(given, sampling, 'pairwise', { swap: options.swap, allowTies: options.allowTies, overall: options.overall });
    this.grader = new Grader({
      judge: options.judge,
      strategy,
      plan: { sampling },
      calls: options.calls,
      store: options.store,
      checkRunner: options.checkRunner,
      onEvent: options.onEvent,
      signal: options.signal,
      stopSignal: options.stopSignal,
      ...(options.guard ? { guard: options.guard } : {}),
    });
    this.judgeInfo = judgeInfoFor(options.judge ? [options.judge] : [], { templateVersion: strategy.templateVersion, mode: options.swap === false ? 'pairwise' : 'pairwise-swap', sampling, ...(alignment ? { alignment: alignment.hash } : {}) });
  }

  async comparePair(pair: PairwiseItem, line = 0): Promise<CompareRecord> {
    if (pair.rubric && hasConditions(pair.rubric)) {
      // Which response better meets a criterion has no answer when its condition holds for one response and not the other.
      throw new RubricateError('CONFIG_INVALID', `pair ${pair.id} has a rubric with conditional criteria (\`when\`), which compare cannot judge pairwise (a condition may hold for one response and not the other): grade each response with \`rubricate grade\`, or remove the conditions`, { field: 'rubric' });
    }
    const item = pairToItem(pair, { swap: this.options.swap, overall: this.options.overall });
    // Each response's author is a model under test: a judge related to either is flagged.
    const graded = await this.grader.gradeCriteria(item, modelsOf(pair.metadata, ['model_a', 'model_b', 'model']));
    const byBase = new Map<string, Partial<Record<PairOrder, CriterionResult>>>();
    for (const result of graded.criteria) {
      const { criterionId: base, order } = comparisonOf(result.criterion);
      const entry = byBase.get(base) ?? {};
      entry[order] = result;
      byBase.set(base, entry);
    }
    const textOf = (id: string) => (id === overallCriterionId ? overallCriterionText : (pair.rubric?.criteria.find((criterion) => criterion.id === id)?.text ?? id));
    const comparisons = [...byBase.entries()].map(([id, results]) => combineOrders(results, id, textOf(id)));
    const overall = comparisons.find((comparison) => comparison.id === overallCriterionId);
    const criteria = comparisons.filter((comparison) => comparison.id !== overallCriterionId);
    const headline = overall ?? criteria[0];
    const failed = comparisons.find((comparison) => comparison.status === 'error');
    const record: CompareRecord = {
      id: pair.id,
      status: failed ? 'error' : 'ok',
      winner: headline?.winner ?? null,
      consistent: headline?.consistent ?? null,
      orders: headline?.orders ?? {},
      ...(pair.label ? { label: pair.label } : {}),
      ...(pair.label && headline?.winner ? { correct: headline.winner === pair.label } : pair.label ? { correct: null } : {}),
      ...(pair.source ? { source: pair.source } : {}),
      ...(overall ? { overall } : {}),
      criteria,
      rubricate_version: rubricateVersion,
    };
    if (!this.options.omitText) {
      record.prompt = pair.prompt;
      record.response_a = pair.responseA;
      record.response_b = pair.responseB;
    }
    if (this.judgeInfo) record.judge = this.judgeInfo;
    record.usage = graded.usage;
    if (failed?.error) record.error = failed.error;
    record.line = line;
    if (graded.selfPreference) {
      const { modelUnderTest, judge, relation, policy } = graded.selfPreference;
      record.self_preference = { model_under_test: modelUnderTest, judge, relation, policy };
    }
    return record;
  }

  /** Compares a stream of pairs in input order, through the grader's ordered window. */
  compareStream(records: AsyncIterable<PairwiseImportRecord>): AsyncGenerator<CompareRecord> {
    return this.grader.inInputOrder(records, async (record): Promise<CompareRecord> => {
      if (record.kind === 'pair') return this.comparePair(record.pair, record.line);
      this.grader.noteInvalid();
      return { id: record.id ?? '', status: 'invalid', winner: null, consistent: null, orders: {}, criteria: [], error: record.error.toJSON(), line: record.line, rubricate_version: rubricateVersion };
    });
  }
}

export interface Share {
  value: number | null;
  ci95: [number, number] | null;
}

export interface CompareSummary {
  /** Present when the verdicts are made up (a scripted judge, `rubricate fake-judge`), with who made them up. */
  scripted?: true;
  scripted_by?: string;
  n: number;
  n_ok: number;
  n_error: number;
  n_invalid: number;
  /** Counts from A's side: `win` = A better. */
  overall: { win: number; tie: number; loss: number; inconsistent: number; win_rate: Share; tie_rate: Share; position_consistency: Share };
  /** With gold labels: accuracy per order and averaged, positional agreement (LLMBar's definitions). */
  agreement?: PairwiseMetaReport;
  criteria: Record<string, { text: string; win: number; tie: number; loss: number; inconsistent: number; errors: number }>;
  /**
   * Is A preferred over B? Each decided comparison scores A − B as +1 (A better), −1 (B better) or
   * 0 (tie, inconsistent): the mean difference, its interval and two-sided p-value by the normal
   * approximation, and the comparisons a test at 80% power (α 0.05) needs to detect a preference
   * that size; per criterion the same, with p-values adjusted across criteria by Holm and by
   * Benjamini–Hochberg.
   */
  preference: { method: 'paired z-test (normal approximation)'; overall: Preference; criteria: Record<string, Preference & { p_holm: number | null; p_benjamini_hochberg: number | null }> };
  usage: Usage;
  judge?: JudgeInfo;
}

export interface Preference {
  n: number;
  delta: number | null;
  ci95: [number, number] | null;
  p_value: number | null;
  /** Comparisons needed to detect a preference of this size at 80% power; null when there is none to detect. */
  comparisons_for_power_80: number | null;
}

/** The paired preference of A over B from its decided comparisons' counts. */
function preferenceOf(counts: { win: number; loss: number; tie: number; inconsistent: number }): Preference {
  const differences = [...Array<number>(counts.win).fill(1), ...Array<number>(counts.loss).fill(-1), ...Array<number>(counts.tie + counts.inconsistent).fill(0)];
  const paired = pairedDelta(differences, Array<number>(differences.length).fill(0));
  const needed = paired.stdDifference !== null && paired.stdDifference > 0 && paired.delta !== 0 ? minimumPairedSampleSize({ effect: paired.delta, stdDifference: paired.stdDifference }) : null;
  return { n: paired.n, delta: paired.n > 0 ? paired.delta : null, ci95: paired.interval, p_value: paired.pValue, comparisons_for_power_80: needed?.n ?? null };
}

/** Each criterion's preference, with p-values adjusted across the criteria that have one. */
function criterionPreferences(criteria: CompareSummary['criteria']): CompareSummary['preference']['criteria'] {
  const entries = Object.entries(criteria).map(([id, counts]) => [id, preferenceOf(counts)] as const);
  const tested = entries.filter(([, preference]) => preference.p_value !== null);
  const holm = holmAdjust(tested.map(([, preference]) => preference.p_value!));
  const benjaminiHochberg = benjaminiHochbergAdjust(tested.map(([, preference]) => preference.p_value!));
  const adjusted = new Map(tested.map(([id], index) => [id, { p_holm: holm[index], p_benjamini_hochberg: benjaminiHochberg[index] }]));
  return Object.fromEntries(entries.map(([id, preference]) => [id, { ...preference, ...(adjusted.get(id) ?? { p_holm: null, p_benjamini_hochberg: null }) }]));
}

function share(values: number[], seed: number): Share {
  if (values.length === 0) return { value: null, ci95: null };
  return { value: mean(values), ci95: bootstrap(values, mean, 1000, seed).ci95 };
}

/**
 * Builds the run summary from compare records, one at a time.
 *
 * @example
 * ```ts
 * import { Comparer, CompareSummaryBuilder, createJudge, getPairwiseImporter } from 'rubricate';
 * const comparer = new Comparer({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) });
 * const summary = new CompareSummaryBuilder();
 * for await (const line of comparer.compareStream(getPairwiseImporter('llmbar').read('llmbar/', {}))) summary.add(line);
 * console.log(summary.finish());
 * ```
 */
export class CompareSummaryBuilder {
  private readonly winScores: number[] = [];
  private readonly ties: number[] = [];
  private readonly consistency: number[] = [];
  private readonly counts = { win: 0, tie: 0, loss: 0, inconsistent: 0 };
  private readonly status = { n: 0, ok: 0, error: 0, invalid: 0 };
  private readonly criteria: CompareSummary['criteria'] = {};
  private readonly metaRecords: PairwiseMetaRecord[] = [];
  private readonly usage = emptyUsage();
  private judge: JudgeInfo | undefined;
  private readonly madeUp = new MadeUpTally();

  add(record: CompareRecord): void {
    this.status.n += 1;
    this.madeUp.add(record);
    if (record.usage) addUsage(this.usage, record.usage);
    this.judge ??= record.judge;
    if (record.status === 'invalid') return void (this.status.invalid += 1);
    if (record.label) {
      const verdict = (order: PairOrder) => (record.orders[order] === undefined ? undefined : (record.orders[order] ?? 'invalid'));
      const swapped = verdict('ba');
      this.metaRecords.push({ id: record.id, gold: record.label, original: verdict('ab') ?? 'invalid', ...(swapped !== undefined ? { swapped } : {}), ...(record.source ? { source: record.source } : {}) });
    }
    for (const comparison of record.criteria) {
      const entry = (this.criteria[comparison.id] ??= { text: comparison.text, win: 0, tie: 0, loss: 0, inconsistent: 0, errors: 0 });
      if (comparison.winner === 'A') entry.win += 1;
      else if (comparison.winner === 'B') entry.loss += 1;
      else if (comparison.winner === 'tie') entry.tie += 1;
      else if (comparison.winner === 'inconsistent') entry.inconsistent += 1;
      else entry.errors += 1;
    }
    if (record.status === 'error' || record.winner === null) return void (this.status.error += 1);
    this.status.ok += 1;
    const winner = record.winner;
    if (winner === 'A') this.counts.win += 1;
    else if (winner === 'B') this.counts.loss += 1;
    else if (winner === 'tie') this.counts.tie += 1;
    else this.counts.inconsistent += 1;
    // Inconsistent verdicts count as ties in the win rate: the judge could not tell them apart reliably.
    this.winScores.push(winner === 'A' ? 1 : winner === 'B' ? 0 : 0.5);
    this.ties.push(winner === 'tie' ? 1 : 0);
    if (record.consistent !== null) this.consistency.push(record.consistent ? 1 : 0);
  }

  finish(): CompareSummary {
    const summary: CompareSummary = {
      ...this.madeUp.fields(),
      n: this.status.n,
      n_ok: this.status.ok,
      n_error: this.status.error,
      n_invalid: this.status.invalid,
      overall: { ...this.counts, win_rate: share(this.winScores, 11), tie_rate: share(this.ties, 12), position_consistency: share(this.consistency, 13) },
      criteria: this.criteria,
      preference: { method: 'paired z-test (normal approximation)', overall: preferenceOf(this.counts), criteria: criterionPreferences(this.criteria) },
      usage: this.usage,
    };
    if (this.metaRecords.length > 0) summary.agreement = computePairwiseMeta(this.metaRecords);
    if (this.judge) summary.judge = this.judge;
    return summary;
  }
}
