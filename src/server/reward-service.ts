/**
 * The reward service every route shares: one long-lived Grader (store, in-flight call
 * dedupe, retries, checks, judge) behind a bounded admission queue, with item-level
 * dedupe (identical rubric + prompt + response in flight ⇒ graded once), a per-request
 * deadline, and the failure policy (null, or a flagged fallback).
 */
import { RubricLintGate } from '../lint/gate.js';
import type { EngineEvent } from '../engine/engine.js';
import { emptyUsage } from '../engine/usage.js';
import { RubricateError, toRubricateError } from '../errors.js';
import { Grader, type GraderOptions } from '../pipeline/grader.js';
import type { ResultRecord } from '../results/results.js';
import type { Item, Rubric } from '../rubric/schema.js';
import { AdmissionQueue } from './admission.js';
import { hasStepCriteria, tooManySteps, trajectoryStepSpans } from '../rubric/steps.js';
import { defaultLimits } from '../spec/run-spec.js';
import { itemContentKey, RubricCache } from './input.js';
import { ServerMetrics } from './metrics.js';
import { attachComponents } from './reward-components.js';
import { applyFallback, failedResult, fallbackValue, nullPolicy, toRewardResult, type ErrorPolicy, type RewardResult } from './rewards.js';
import { isMadeUp } from '../util/made-up.js';
import type { JudgeEndpointStatus } from '../judges/pool.js';
import type { RewardAudit } from './audit.js';

export interface RewardServiceOptions {
  /** Grading options, as for `rubricate grade`; `scoring` defaults to `weighted_mean` here. */
  grading: Omit<GraderOptions, 'onEvent' | 'signal'>;
  /** Items admitted at once (waiting for the judge + in flight). Default 4096. */
  maxQueue?: number;
  /** Items of requests allowed to wait for room (`--max-waiting`). Default 4096: a full trainer step. */
  maxWaiting?: number;
  /** Per-request deadline. Default 120 s. */
  deadlineMs?: number;
  onError?: ErrorPolicy;
  /** Rubrics by id for items that give `rubric_id`. */
  rubrics?: ReadonlyMap<string, Rubric>;
  /** `serve --lint`: a request whose rubric has lint errors is refused whole (RUBRIC_LINT_FAILED, 422), before admission. */
  lint?: boolean;
  /** Extra listener for engine events (the metrics listener is always attached). */
  onEvent?: (event: EngineEvent) => void;
  /** Live state of pooled judge endpoints, for /healthz and /metrics. */
  judgeEndpoints?: () => JudgeEndpointStatus[];
  /** The reward-hacking monitor: a sampled share of answered items graded again by an audit judge, in the background. */
  audit?: RewardAudit;
  /** Health of a shared store (Redis): while it is away, requests are refused with 503 (STORE_UNAVAILABLE). */
  storeHealth?: () => { status: 'ok' | 'unavailable'; reason?: string };
  /**
   * Results of items whose every verdict was read from the reply store, kept in memory by the
   * item's content (bounded; least recently used first out), so the same item asked again is
   * answered without planning, keying and reading its judge tasks. Default 4096; 0 keeps none.
   * Use 0 when stored replies expire (`--cache-ttl`) or may be removed while the server runs.
   */
  rememberedResults?: number;
  now?: () => number;
}

export interface ScoreOptions {
  /** Overrides the service deadline (adapters cap it under their client's timeout). */
  deadlineMs?: number;
  /**
   * Wait for room in the admission queue (until the deadline) instead of being refused, and be
   * held behind a full waiting line rather than refused (trainer adapters).
   */
  waitForRoom?: boolean;
  /**
   * Overrides the service failure policy for this call: a number is the fallback, `null`
   * leaves failed rewards null (adapters that apply their own fallback in their own units).
   */
  fallback?: number | null;
  /** The trainer's step, when the request says it (the reward-hacking monitor's trend). */
  step?: number;
  /** `scoreGroup`: the group's id (its members' results carry it). */
  groupId?: string;
}

export interface ScoredItems {
  results: RewardResult[];
  /** How many rewards are the fallback standing in for a failure. */
  fallbacks: number;
}

export const defaultMaxQueue = 4096;
export const defaultDeadlineMs = 120_000;
export const defaultRememberedResults = 4096;

/** One item's grading: under way (`graded`, shared with identical items in flight), or reused at once. */
type SharedGrading =
  | {
      graded: Promise<ResultRecord>;
      /** Joined an identical item's grading. */
      follower: boolean;
      reused?: undefined;
    }
  | { reused: RememberedResult; graded?: undefined; follower: false };

const cachedCallEvent: EngineEvent = { type: 'call', cached: true };
const okItemEvent: EngineEvent = { type: 'item', status: 'ok' };

/** A reused grading's answer; its usage is its own copy (answers may be changed, records are shared). */
function reusedResult({ record, madeUp }: RememberedResult, id: string): RewardResult {
  const result = toRewardResult(record, id, madeUp);
  result.usage = { ...result.usage };
  return result;
}

/** A grading read wholly from the reply store, and the events it caused (replayed on reuse). */
interface RememberedResult {
  record: ResultRecord;
  storeReads: number;
  /** Whether its verdicts are made up, decided once (the record never changes). */
  madeUp: boolean;
}

/**
 * Scores items for a trainer: admission, deadlines and the error policy around one grader.
 *
 * @example
 * ```ts
 * import { createJudge, normalizeItem } from 'rubricate';
 * import { RewardService } from 'rubricate/server';
 * const service = new RewardService({ grading: { judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) }, deadlineMs: 60_000 });
 * const scored = await service.scoreItems([normalizeItem({ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } })]);
 * ```
 */
export class RewardService {
  readonly grader: Grader;
  /** The grading options the service was built with (CaRR's engines share its judge, store and call policy). */
  readonly grading: RewardServiceOptions['grading'];
  readonly admission: AdmissionQueue;
  readonly metrics: ServerMetrics;
  readonly deadlineMs: number;
  readonly errorPolicy: ErrorPolicy;
  readonly rubrics: ReadonlyMap<string, Rubric> | undefined;
  readonly judgeEndpoints: (() => JudgeEndpointStatus[]) | undefined;
  readonly storeHealth: RewardServiceOptions['storeHealth'];
  /** Rubrics normalised once for the requests that repeat them. */
  readonly rubricCache = new RubricCache();
  /** In-flight requests of the HTTP layer, for the gauge; the server keeps it current. */
  inFlightRequests = 0;
  private readonly inFlightItems = new Map<string, Promise<ResultRecord>>();
  private readonly remembered = new Map<string, RememberedResult>();
  private readonly rememberCapacity: number;
  private readonly onGraderEvent: (event: EngineEvent) => void;
  private readonly now: () => number;
  readonly audit: RewardAudit | undefined;
  private readonly lintGate: RubricLintGate | undefined;

  constructor(options: RewardServiceOptions) {
    this.now = options.now ?? Date.now;
    this.grading = options.grading;
    this.lintGate = options.lint ? new RubricLintGate() : undefined;
    this.deadlineMs = options.deadlineMs ?? defaultDeadlineMs;
    this.errorPolicy = options.onError ?? nullPolicy;
    this.rubrics = options.rubrics;
    this.judgeEndpoints = options.judgeEndpoints;
    this.storeHealth = options.storeHealth;
    this.admission = new AdmissionQueue(options.maxQueue ?? defaultMaxQueue, { waitingCapacity: options.maxWaiting, now: this.now });
    this.metrics = new ServerMetrics({
      queueDepth: () => this.admission.used,
      queueWaiting: () => this.admission.waiting,
      queueCapacity: () => this.admission.capacity,
      judgeQueuedCalls: () => this.grader.engine.queuedCalls,
      inFlightRequests: () => this.inFlightRequests,
      ...(options.judgeEndpoints ? { judgeEndpoints: options.judgeEndpoints } : {}),
    });
    this.audit = options.audit;
    this.audit?.registerMetrics(this.metrics.registry);
    this.rememberCapacity = options.rememberedResults ?? defaultRememberedResults;
    const extraListener = options.onEvent;
    this.onGraderEvent = (event) => {
      this.metrics.onEngineEvent(event);
      extraListener?.(event);
    };
    this.grader = new Grader({
      scoring: 'weighted_mean',
      // Rewards need verdicts, not the graded text back: keep results small.
      omitText: true,
      // A long-lived server outlives a judge restart: stopping for good on a run of connection
      // failures would turn a blip into an outage (the pool ejects bad endpoints instead).
      ...options.grading,
      calls: { breakerThreshold: 0, ...options.grading.calls },
      onEvent: this.onGraderEvent,
    });
  }

  /** The error that stopped the judge for good (bad credentials), if any: the service is then unhealthy. */
  get fatalError(): RubricateError | undefined {
    return this.grader.fatal;
  }

  /**
   * Refuses at once (OVERLOADED) when the queue has no room at all: checked before the body
   * is read, so under overload a refusal costs next to nothing and the server keeps up.
   */
  assertRoom(): void {
    if (!this.admission.full) return;
    this.metrics.rejected.inc({ reason: 'queue_full' });
    throw this.admission.refusal(1);
  }

  /**
   * Grades items and answers one reward result per item, in order. Throws OVERLOADED (with
   * `retryAfterMs`) when the request is refused for load: no room and it may not wait, the
   * waiting line full, or the deadline passed while waiting. A refusal for load never becomes
   * a result, so never a reward or a fallback. Failures of single items are results.
   *
   * A request larger than the queue is admitted in parts of at most `--max-queue` items; the
   * parts after the first wait in line (the request is already accepted). If a later part is
   * refused, the whole request is: the parts already admitted go on grading, and their verdicts
   * are cached for the client's retry.
   */
  async scoreItems(items: readonly Item[], options: ScoreOptions = {}): Promise<ScoredItems> {
    this.lintGate?.refuse(items.map((item) => item.rubric));
    this.refuseLongTrajectories(items);
    this.refuseWithoutStore();
    const deadlineMs = options.deadlineMs ?? this.deadlineMs;
    const deadlineAt = this.now() + deadlineMs;
    const work: SharedGrading[] = [];
    const capacity = this.admission.capacity;
    for (let start = 0; start < items.length; start += capacity) {
      const part = items.slice(start, start + capacity);
      try {
        await this.admission.admit(part.length, { wait: options.waitForRoom === true || start > 0, deadlineAt, hold: options.waitForRoom === true });
      } catch (error) {
        if (RubricateError.isInstance(error) && error.code === 'OVERLOADED') this.metrics.rejected.inc({ reason: 'queue_full' });
        throw error;
      }
      for (const item of part) {
        const shared = this.gradeShared(item);
        // The slot is freed when grading ends, even if the answer went out at the deadline.
        if (shared.reused) this.admission.release(1);
        else {
          shared.graded.then(
            () => this.admission.release(1),
            () => this.admission.release(1),
          );
        }
        work.push(shared);
      }
    }

    // Reused gradings are answered at once: no deadline to race.
    const reused = work.map((shared) => shared.reused);
    const results = reused.every((entry): entry is RememberedResult => entry !== undefined)
      ? reused.map((entry, index) => reusedResult(entry, items[index].id))
      : await this.settle(items, work, deadlineAt, deadlineMs);
    return this.answered(items, results, options);
  }

  /**
   * The responses to one prompt graded together (listwise or tournament judging: one call, or
   * one tournament, for the group), one reward result each, in order; in the per-item modes
   * the same as `scoreItems`. The group is admitted whole and answered at the deadline at the
   * latest (its members then `DEADLINE_EXCEEDED`, the grading going on for a retry).
   */
  async scoreGroup(items: readonly Item[], options: ScoreOptions = {}): Promise<ScoredItems> {
    this.lintGate?.refuse(items.map((item) => item.rubric));
    this.refuseLongTrajectories(items);
    // Over a bound (--max-group-size, --max-tournament-pairs): 413 before admission, memory or any judge call.
    const overBound = this.grader.groupLimitProblem(items);
    if (overBound) throw overBound;
    if (!this.grader.gradesGroups) return this.scoreItems(items, options);
    this.refuseWithoutStore();
    const deadlineMs = options.deadlineMs ?? this.deadlineMs;
    const deadlineAt = this.now() + deadlineMs;
    try {
      await this.admission.admit(items.length, { wait: options.waitForRoom === true, deadlineAt });
    } catch (error) {
      if (RubricateError.isInstance(error) && error.code === 'OVERLOADED') this.metrics.rejected.inc({ reason: 'queue_full' });
      throw error;
    }
    const graded = this.grader.gradeGroup(items, options.groupId);
    const release = () => this.admission.release(items.length);
    graded.then(release, release);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), Math.max(0, deadlineAt - this.now()));
    });
    let results: RewardResult[];
    try {
      const outcome = await Promise.race([graded, deadline]);
      if (outcome === 'deadline') {
        this.metrics.deadlines.inc({}, items.length);
        const error = new RubricateError('DEADLINE_EXCEEDED', `the group was not graded within the ${Math.round(deadlineMs / 100) / 10} s deadline; grading goes on and a retry will reuse its verdicts`);
        results = items.map((item) => failedResult(item.id, error));
      } else {
        results = outcome.map((record, index) => toRewardResult(record, items[index].id));
      }
    } catch (error) {
      results = items.map((item) => failedResult(item.id, toRubricateError(error)));
    } finally {
      clearTimeout(timer);
    }
    return this.answered(items, results, options);
  }

  /**
   * Work that is not one item's grading (CaRR's trajectories: three judge calls each) admitted
   * as `count` items: refused or held like `scoreItems`, its places freed when the work ends,
   * its answer at the deadline at the latest (DEADLINE_EXCEEDED, counted; the work goes on, so a
   * retry reuses its verdicts). Each finished one is counted as an answered item.
   */
  async runAdmitted<T>(count: number, work: () => Promise<T>, options: Pick<ScoreOptions, 'waitForRoom' | 'deadlineMs'> = {}): Promise<T> {
    this.refuseWithoutStore();
    const deadlineMs = options.deadlineMs ?? this.deadlineMs;
    const deadlineAt = this.now() + deadlineMs;
    try {
      await this.admission.admit(count, { wait: options.waitForRoom === true, deadlineAt, hold: options.waitForRoom === true });
    } catch (error) {
      if (RubricateError.isInstance(error) && error.code === 'OVERLOADED') this.metrics.rejected.inc({ reason: 'queue_full' });
      throw error;
    }
    const running = work();
    const release = () => this.admission.release(count);
    running.then(release, release);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), Math.max(0, deadlineAt - this.now()));
    });
    try {
      const outcome = await Promise.race([running, deadline]);
      if (outcome === 'deadline') {
        this.metrics.deadlines.inc({}, count);
        throw new RubricateError('DEADLINE_EXCEEDED', `not graded within the ${Math.round(deadlineMs / 100) / 10} s deadline; grading goes on and a retry will reuse its verdicts`);
      }
      this.metrics.rewards.inc({ outcome: 'ok' }, count);
      this.metrics.items.inc({ status: 'ok' }, count);
      return outcome;
    } catch (error) {
      this.metrics.rewards.inc({ outcome: 'error' }, count);
      this.metrics.items.inc({ status: 'error' }, count);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Engine events of judge work outside the grader (calls, retries, errors; items are counted by `runAdmitted`), for /metrics. */
  readonly judgeWorkListener = (event: EngineEvent): void => {
    if (event.type !== 'item') this.onGraderEvent(event);
  };

  /** Process rewards: a trajectory over `--max-steps` steps is refused whole (413) before admission or any call. */
  private refuseLongTrajectories(items: readonly Item[]): void {
    const maxSteps = this.grading.limits?.maxSteps ?? defaultLimits.maxSteps;
    for (const item of items) {
      if (!item.trajectory || !hasStepCriteria(item.rubric)) continue;
      const steps = trajectoryStepSpans(item.trajectory).length;
      if (steps > maxSteps) throw tooManySteps(steps, maxSteps);
    }
  }

  /** Without its shared store a replica would pay again for cached verdicts and break the fleet's limits: refused clearly. */
  private refuseWithoutStore(): void {
    const store = this.storeHealth?.();
    if (store && store.status !== 'ok') throw new RubricateError('STORE_UNAVAILABLE', `the shared store is unavailable${store.reason ? `: ${store.reason}` : ''}; retry shortly`, { retryAfterMs: 1_000 });
  }

  /** The failure policy applied to the answers, their outcomes counted, and the audit told. */
  private answered(items: readonly Item[], results: RewardResult[], options: ScoreOptions): ScoredItems {
    attachComponents(
      results,
      items.map((item) => item.rubric),
      this.grader.scoring,
    );
    const fallbacks = applyFallback(results, options.fallback === undefined ? fallbackValue(this.errorPolicy) : (options.fallback ?? undefined));
    for (const result of results) {
      if (result.fallback) this.metrics.rewards.inc({ outcome: 'fallback' });
      else this.metrics.rewards.inc({ outcome: result.status });
    }
    if (fallbacks > 0) this.metrics.fallbacks.inc({}, fallbacks);
    // The answers are final here: the audit reads them and goes on in the background.
    this.audit?.observe(items, results, options.step);
    return { results, fallbacks };
  }

  /** Answers of gradings still under way, each at the latest at the deadline. */
  private async settle(items: readonly Item[], work: SharedGrading[], deadlineAt: number, deadlineMs: number): Promise<RewardResult[]> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), Math.max(0, deadlineAt - this.now()));
    });
    const results = await Promise.all(
      work.map(async (shared, index): Promise<RewardResult> => {
        const item = items[index];
        if (shared.reused) return reusedResult(shared.reused, item.id);
        const { graded, follower } = shared;
        try {
          const outcome = await Promise.race([graded, deadline]);
          if (outcome === 'deadline') {
            this.metrics.deadlines.inc();
            return failedResult(item.id, new RubricateError('DEADLINE_EXCEEDED', `not graded within the ${Math.round(deadlineMs / 100) / 10} s deadline; grading goes on and a retry will reuse its verdicts`));
          }
          const result = toRewardResult(outcome, item.id);
          // The judge work belongs to the item that started it; a follower spent nothing.
          if (follower) result.usage = { ...emptyUsage(), cache_hits: result.usage.calls + result.usage.cache_hits };
          return result;
        } catch (error) {
          return failedResult(item.id, toRubricateError(error));
        }
      }),
    );
    clearTimeout(timer);
    return results;
  }

  /** Grades an item, or joins the grading of an identical item already in flight, or reuses a grading read from the store. */
  private gradeShared(item: Item): SharedGrading {
    const key = itemContentKey(item);
    const existing = this.inFlightItems.get(key);
    if (existing) {
      this.metrics.deduplicated.inc();
      return { graded: existing, follower: true };
    }
    // Images and trajectories are graded too, but are not part of the content key.
    const rememberable = this.rememberCapacity > 0 && item.images === undefined && item.trajectory === undefined;
    if (rememberable) {
      const reused = this.reuse(key);
      if (reused) return { reused, follower: false };
    }
    const graded = rememberable ? this.grader.gradeItemWithOrigin(item).then((outcome) => this.remember(key, outcome)) : this.grader.gradeItem(item);
    this.inFlightItems.set(key, graded);
    const forget = () => {
      this.inFlightItems.delete(key);
    };
    graded.then(forget, forget);
    return { graded, follower: false };
  }

  private remember(key: string, outcome: { record: ResultRecord; fromStore: boolean }): ResultRecord {
    // Only an ok grading is read wholly from the store (GradedItem.fromStore).
    if (!outcome.fromStore) return outcome.record;
    const record = outcome.record;
    this.remembered.delete(key);
    this.remembered.set(key, { record, storeReads: record.usage?.cache_hits ?? 0, madeUp: isMadeUp(record) });
    if (this.remembered.size > this.rememberCapacity) this.remembered.delete(this.remembered.keys().next().value!);
    return record;
  }

  /**
   * A remembered grading, with the events grading it from the store again would give (one
   * cached call per store read, then the item), so metrics cannot tell the two apart.
   */
  private reuse(key: string): RememberedResult | undefined {
    const entry = this.remembered.get(key);
    if (!entry) return undefined;
    this.remembered.delete(key);
    this.remembered.set(key, entry);
    for (let read = 0; read < entry.storeReads; read += 1) this.onGraderEvent(cachedCallEvent);
    this.onGraderEvent(okItemEvent);
    return entry;
  }

  /** Resolves when no admitted work is left (drain), or after `timeoutMs`; true when drained. */
  async idle(timeoutMs: number): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const drained = await Promise.race([this.admission.idle().then(() => true as const), timedOut]);
    clearTimeout(timer);
    return drained;
  }
}
