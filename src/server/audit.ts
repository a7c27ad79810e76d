/**
 * The reward-hacking monitor: a sampled share of the items the service answered is graded
 * again, in the background, by an audit judge, and the two gradings are compared: agreement on
 * each judged criterion, and the reward gap (policy reward − audit reward), per training step
 * (the `step` requests carry) and overall, with their trend over the steps. A step whose
 * agreement falls below a threshold (or whose gap exceeds one) logs a warning. Criteria with
 * weight 0 (monitor criteria, as verifiers' metric-only rubric functions) never move a reward;
 * their verdicts are counted here.
 *
 * The audit never delays or changes an answer: `observe` only reads the finished results and
 * starts the audit grading without waiting for it; a full audit queue skips items (counted),
 * and an audit failure is counted and logged, never raised. Sampling is a hash of the item's
 * content, so the same items are audited in every run.
 */
import type { Logger } from 'pino';
import type { Grader } from '../pipeline/grader.js';
import type { GradedCriterion, ResultRecord } from '../results/results.js';
import type { Item } from '../rubric/schema.js';
import { sha256Hex } from '../util/hash.js';
import type { JsonLinesWriter } from '../util/files.js';
import { itemContentKey } from './input.js';
import { Counter, Gauge, type MetricsRegistry } from './metrics.js';
import { attachComponents } from './reward-components.js';
import { toRewardResult, type RewardResult } from './rewards.js';

export interface AuditOptions {
  /** Grades with the audit judge (its own engine, limiter and cache keys). */
  grader: Grader;
  /** Share of answered items audited, in [0, 1]. */
  share: number;
  /** Changes which items are sampled (default 0). */
  seed?: number;
  /** A step whose criterion agreement falls below this logs a warning. */
  minAgreement?: number;
  /** A step whose mean |policy − audit| reward exceeds this logs a warning. */
  maxRewardGap?: number;
  /** Criteria a step must have audited before its figures can warn (default 20). */
  minCriteria?: number;
  /** Items audited at once; more are skipped (default 256). */
  maxPending?: number;
  /** One JSON line per audited item and per warning. */
  log?: Pick<JsonLinesWriter, 'write'>;
  logger?: Logger;
}

/** One step's figures (requests without a step count under `null`). */
export interface StepAudit {
  step: number | null;
  items: number;
  criteria: number;
  agreed: number;
  /** Σ (policy − audit) and Σ |policy − audit| over the items both graded. */
  gapSum: number;
  absoluteGapSum: number;
  gaps: number;
  warned: boolean;
}

/** Steps kept for the trend (the oldest go first). */
const keptSteps = 1000;

function judged(criteria: readonly GradedCriterion[]): Map<string, GradedCriterion> {
  return new Map(criteria.filter((criterion) => criterion.source === 'judge' && criterion.status === 'ok').map((criterion) => [criterion.id, criterion]));
}

/** Least-squares slope of `value` over `step` (null with fewer than two steps). */
function slope(points: ReadonlyArray<{ step: number; value: number }>): number | null {
  if (points.length < 2) return null;
  const meanStep = points.reduce((sum, point) => sum + point.step, 0) / points.length;
  const meanValue = points.reduce((sum, point) => sum + point.value, 0) / points.length;
  let covariance = 0;
  let variance = 0;
  for (const point of points) {
    covariance += (point.step - meanStep) * (point.value - meanValue);
    variance += (point.step - meanStep) ** 2;
  }
  return variance === 0 ? null : covariance / variance;
}

export class RewardAudit {
  private readonly steps = new Map<number | null, StepAudit>();
  private readonly overall: StepAudit = { step: null, items: 0, criteria: 0, agreed: 0, gapSum: 0, absoluteGapSum: 0, gaps: 0, warned: false };
  private readonly pending = new Set<Promise<void>>();
  private readonly outcomes = new Counter('rubricate_audit_items_total', 'Answered items the audit judge took (audited), could not grade (error), or skipped for a full audit queue (skipped).', ['outcome']);
  private readonly monitorCriteria = new Counter('rubricate_monitor_criteria_total', 'Verdicts on weight-0 (monitor) criteria in answered items: graded and reported, never in a reward.', ['met']);
  private readonly warnings = new Counter('rubricate_audit_warnings_total', 'Steps whose audit agreement or reward gap crossed its threshold.');

  constructor(private readonly options: AuditOptions) {}

  /** Whether an item is in the audited sample: a hash of its content, below the share. */
  sampled(item: Item): boolean {
    if (this.options.share <= 0) return false;
    const draw = Number.parseInt(sha256Hex(`rubricate-audit\u0000${this.options.seed ?? 0}\u0000${itemContentKey(item)}`).slice(0, 8), 16) / 2 ** 32;
    return draw < this.options.share;
  }

  /** Looks at answered items (never changing them) and starts the audit of the sampled ones. */
  observe(items: readonly Item[], results: readonly RewardResult[], step: number | undefined): void {
    results.forEach((result, index) => {
      for (const criterion of result.criteria) if (criterion.points === 0 && criterion.status === 'ok') this.monitorCriteria.inc({ met: String(criterion.met) });
      // Only real rewards are audited: a failure or a fallback has nothing to compare.
      if (result.reward === null || result.fallback || !this.sampled(items[index])) return;
      if (this.pending.size >= (this.options.maxPending ?? 256)) return this.outcomes.inc({ outcome: 'skipped' });
      // What the answer said, taken now: the audit reads nothing of it later.
      const audit = this.audit(items[index], { reward: result.reward, criteria: result.criteria }, step ?? null);
      this.pending.add(audit);
      void audit.finally(() => this.pending.delete(audit));
    });
  }

  private async audit(item: Item, policy: { reward: number; criteria: readonly GradedCriterion[] }, step: number | null): Promise<void> {
    let record: ResultRecord;
    try {
      record = await this.options.grader.gradeItem(item);
    } catch (error) {
      this.outcomes.inc({ outcome: 'error' });
      this.options.logger?.warn({ err: error, item: item.id }, 'audit grading failed');
      return;
    }
    if (record.status !== 'ok' || record.score === null) {
      this.outcomes.inc({ outcome: 'error' });
      this.options.logger?.warn({ item: item.id, error: record.error }, 'audit judge could not grade an item');
      return;
    }
    this.outcomes.inc({ outcome: 'audited' });
    const mine = judged(policy.criteria);
    const theirs = judged(record.criteria);
    const disagreed: string[] = [];
    let compared = 0;
    for (const [id, criterion] of mine) {
      const other = theirs.get(id);
      if (!other) continue;
      compared += 1;
      if (criterion.met !== other.met) disagreed.push(id);
    }
    const gap = policy.reward - auditReward(item, record, this.options.grader);
    const figures = this.stepOf(step);
    for (const entry of [figures, this.overall]) {
      entry.items += 1;
      entry.criteria += compared;
      entry.agreed += compared - disagreed.length;
      entry.gapSum += gap;
      entry.absoluteGapSum += Math.abs(gap);
      entry.gaps += 1;
    }
    const monitor = Object.fromEntries(policy.criteria.filter((criterion) => criterion.points === 0 && criterion.status === 'ok').map((criterion) => [criterion.id, criterion.met]));
    await this.write({ event: 'audit', step, id: item.id, policy_reward: policy.reward, audit_reward: record.score, reward_gap: gap, criteria: compared, agreed: compared - disagreed.length, disagreed, ...(Object.keys(monitor).length > 0 ? { monitor } : {}) });
    await this.warnIfCrossed(figures);
  }

  private stepOf(step: number | null): StepAudit {
    let figures = this.steps.get(step);
    if (!figures) {
      figures = { step, items: 0, criteria: 0, agreed: 0, gapSum: 0, absoluteGapSum: 0, gaps: 0, warned: false };
      this.steps.set(step, figures);
      if (this.steps.size > keptSteps) this.steps.delete(this.steps.keys().next().value!);
    }
    return figures;
  }

  private async warnIfCrossed(figures: StepAudit): Promise<void> {
    if (figures.warned || figures.criteria < (this.options.minCriteria ?? 20)) return;
    const agreement = figures.agreed / figures.criteria;
    const gap = figures.absoluteGapSum / figures.gaps;
    const low = this.options.minAgreement !== undefined && agreement < this.options.minAgreement;
    const wide = this.options.maxRewardGap !== undefined && gap > this.options.maxRewardGap;
    if (!low && !wide) return;
    figures.warned = true;
    this.warnings.inc();
    const warning = { event: 'audit_warning', step: figures.step, agreement, min_agreement: this.options.minAgreement ?? null, mean_absolute_reward_gap: gap, max_reward_gap: this.options.maxRewardGap ?? null, criteria: figures.criteria, items: figures.items };
    this.options.logger?.warn({ audit: warning }, low ? 'audit judge agreement below threshold: the policy may be exploiting the judge' : 'reward gap to the audit judge above threshold: the policy may be exploiting the judge');
    await this.write(warning);
  }

  private async write(line: Record<string, unknown>): Promise<void> {
    try {
      await this.options.log?.write(line);
    } catch (error) {
      this.options.logger?.error({ err: error }, 'audit log write failed');
    }
  }

  /** Resolves once every audit started so far has finished. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Figures per step in step order (requests without a step last), and overall. */
  summary(): { overall: StepAudit; steps: StepAudit[]; agreementTrend: number | null; gapTrend: number | null } {
    const numbered = [...this.steps.values()].filter((entry) => entry.step !== null && entry.criteria > 0).sort((left, right) => left.step! - right.step!);
    return {
      overall: { ...this.overall },
      steps: [...numbered, ...[...this.steps.values()].filter((entry) => entry.step === null)],
      agreementTrend: slope(numbered.map((entry) => ({ step: entry.step!, value: entry.agreed / entry.criteria }))),
      gapTrend: slope(numbered.filter((entry) => entry.gaps > 0).map((entry) => ({ step: entry.step!, value: entry.gapSum / entry.gaps }))),
    };
  }

  registerMetrics(registry: MetricsRegistry): void {
    const ratio = (entry: StepAudit) => (entry.criteria > 0 ? entry.agreed / entry.criteria : Number.NaN);
    const gap = (entry: StepAudit) => (entry.gaps > 0 ? entry.gapSum / entry.gaps : Number.NaN);
    const latest = () => this.summary().steps.filter((entry) => entry.step !== null).at(-1);
    registry.register(this.outcomes);
    registry.register(new Gauge('rubricate_audit_agreement_ratio', 'Share of judged criteria of audited items the audit judge graded as the policy judge did.', () => ratio(this.overall)));
    registry.register(new Gauge('rubricate_audit_reward_gap_mean', 'Mean policy reward minus audit reward over audited items (positive: the policy judge pays more).', () => gap(this.overall)));
    registry.register(new Gauge('rubricate_audit_step', 'The latest training step with audited items.', () => latest()?.step ?? Number.NaN));
    registry.register(new Gauge('rubricate_audit_step_agreement_ratio', 'Audit agreement at the latest training step.', () => (latest() ? ratio(latest()!) : Number.NaN)));
    registry.register(new Gauge('rubricate_audit_step_reward_gap_mean', 'Mean reward gap at the latest training step.', () => (latest() ? gap(latest()!) : Number.NaN)));
    registry.register(new Gauge('rubricate_audit_agreement_trend_per_step', 'Least-squares slope of the per-step audit agreement over the steps (negative: agreement falling as training goes on).', () => this.summary().agreementTrend ?? Number.NaN));
    registry.register(new Gauge('rubricate_audit_reward_gap_trend_per_step', 'Least-squares slope of the per-step mean reward gap over the steps (positive: the gap widening).', () => this.summary().gapTrend ?? Number.NaN));
    registry.register(this.warnings);
    registry.register(this.monitorCriteria);
  }
}

/** The audit judge's reward as the policy's is computed: a rubric's declared components weigh it the same way. */
function auditReward(item: Item, record: ResultRecord, grader: Grader): number {
  const result = toRewardResult(record, item.id);
  attachComponents([result], [item.rubric], grader.scoring);
  return result.reward ?? (record.score as number);
}
