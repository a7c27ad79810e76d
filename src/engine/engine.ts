/**
 * The grading engine: the only place that knows about concurrency, retries, timeouts,
 * the reply store, in-flight dedupe, usage and progress. It takes items, runs their checks
 * locally, sends the rest to the judge through a grading strategy, and returns one
 * GradedItem per item. A verdict exists only when a reply was read or a check ran.
 */
import { setMaxListeners } from 'node:events';
import type { CheckContext, CheckMode, CheckOutcome } from '../checks/types.js';
import { RubricateError, toRubricateError, type SerializedError } from '../errors.js';
import type { CriterionVerdict, GradingStrategy, JudgeTask, SamplingOptions, TaskDecision } from '../grading/types.js';
import { citedSteps, trajectorySteps } from '../trajectory/trajectory.js';
import { judgeImage } from '../images/images.js';
import { createEvidenceTask, estimateTokens, evidenceResponse, splitIntoChunks } from '../grading/evidence.js';
import { renderItemContext } from '../grading/render.js';
import type { Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import type { ImportRecord, InvalidRecord } from '../rubric/records.js';
import type { CheckSpec, Criterion, Item } from '../rubric/schema.js';
import { AdaptiveLimiter } from './limiter.js';
import { isPromise, sharesInFlight, type ReplyStore } from '../store/types.js';
import { requestKey } from './request-key.js';
import { addReplyUsage, emptyUsage, type Usage } from './usage.js';
import { sleep } from '../util/sleep.js';
import { redactUrl } from '../util/redact.js';
import { defaultBreakerThreshold, JudgeCircuitBreaker } from './circuit-breaker.js';

export type CheckRunner = (spec: CheckSpec, response: string, context: CheckContext) => CheckOutcome;

export interface CriterionResult {
  criterion: Criterion;
  source: 'judge' | 'check';
  status: 'ok' | 'error' | 'skipped';
  verdict?: CriterionVerdict;
  error?: SerializedError;
  /** Why a criterion was not graded (e.g. `gated`). */
  skipReason?: string;
}

export interface GradedItem {
  item: Item;
  status: 'ok' | 'error';
  criteria: CriterionResult[];
  /** A failed hard rule zeroed the item and its judged criteria were not sent. */
  gated: boolean;
  usage: Usage;
}

export type GradedRecord =
  | { kind: 'graded'; graded: GradedItem; line: number }
  | InvalidRecord;

export type EngineEvent =
  | { type: 'item'; status: 'ok' | 'error' | 'invalid' }
  | { type: 'call'; cached: boolean }
  | { type: 'retry'; code: string; delayMs: number }
  | { type: 'judge-error'; code: string; message?: string };

export interface EngineOptions {
  /** Absent means `--judge none`: criteria without a check end in error. */
  judge?: Judge;
  strategy: GradingStrategy;
  store?: ReplyStore;
  checkRunner?: CheckRunner;
  checkMode?: CheckMode;
  concurrency?: number;
  /** Calls per criterion before its error is final (transport failures and unreadable replies alike). */
  maxAttempts?: number;
  timeoutMs?: number;
  retryBaseDelayMs?: number;
  retryMaxDelayMs?: number;
  onEvent?: (event: EngineEvent) => void;
  signal?: AbortSignal;
  /** Once aborted, no new judge call starts; calls in flight go on until `signal` aborts (a graceful stop). */
  stopSignal?: AbortSignal;
  /** Sample index for repeated judgements of the same request (self-consistency juries): part of the cache key. */
  sample?: number;
  /**
   * Judge context budget in tokens. A grading prompt estimated above it is not sent whole:
   * the response is read in chunks for evidence, then each criterion is judged on its evidence.
   */
  contextBudgetTokens?: number;
  /** Sampling used for evidence extraction calls (long responses). */
  evidenceSampling?: SamplingOptions;
  /**
   * Consecutive hard failures of the judge (unreachable, request rejected, no readable
   * verdict) that stop the run with JUDGE_CIRCUIT_OPEN. Default 20; 0 never stops.
   */
  breakerThreshold?: number;
  /** Longest wait a judge's Retry-After may impose per retry (also capped by `timeoutMs`). Default 60 s. */
  maxRetryAfterMs?: number;
}

interface CallResult {
  reply?: JudgeReply;
  error?: RubricateError;
  calls: number;
  retries: number;
  /** Served from the store or from an identical call already in flight. */
  cached: boolean;
  /** This process claimed the call in a shared store (released once its reply is stored). */
  claimed?: boolean;
}

/**
 * The request with the item's images attached to its last user message (where the item's
 * text, and the images' placeholders, are). A judge that cannot take images refuses here,
 * before any call: an image is never dropped.
 */
function withItemImages(task: JudgeTask, judge: Judge): JudgeRequest {
  const images = task.item?.images;
  if (!images || images.length === 0) return task.request;
  if (!judge.acceptsImages) {
    throw new RubricateError('JUDGE_REQUEST_REJECTED', `judge ${judge.provenance.id} does not accept images, and item ${task.item.id} has ${images.length}; use an OpenAI-compatible vision model, anthropic: or gemini:`);
  }
  const messages = [...task.request.messages];
  let last = messages.length - 1;
  while (last > 0 && messages[last].role !== 'user') last -= 1;
  messages[last] = { ...messages[last], images: images.map(judgeImage) };
  return { ...task.request, messages };
}

/** For trajectory items, keeps the step numbers a verdict's explanation cites. */
function withCitedSteps(item: Item, verdict: CriterionVerdict): CriterionVerdict {
  if (!item.trajectory || !verdict.explanation) return verdict;
  const steps = citedSteps(verdict.explanation, trajectorySteps(item.trajectory).length);
  return steps.length > 0 ? { ...verdict, steps } : verdict;
}

/** Errors no later call can escape (bad key, no judge, a request the judge never accepts, no such model): the run stops. */
const fatalCodes = new Set(['JUDGE_AUTH', 'JUDGE_UNAVAILABLE', 'JUDGE_UNSUPPORTED', 'JUDGE_NOT_FOUND']);

/** Default cap on a judge's Retry-After per retry. */
export const defaultMaxRetryAfterMs = 60_000;

export class GradingEngine {
  private readonly options: Required<Pick<EngineOptions, 'concurrency' | 'maxAttempts' | 'timeoutMs' | 'retryBaseDelayMs' | 'retryMaxDelayMs' | 'checkMode'>> & EngineOptions;
  private readonly limiter: AdaptiveLimiter;
  private readonly inFlight = new Map<string, Promise<CallResult>>();
  private fatalError: RubricateError | undefined;
  private readonly breaker: JudgeCircuitBreaker;

  constructor(options: EngineOptions) {
    const concurrency = Math.max(1, Math.min(options.concurrency ?? 16, options.judge?.maxConcurrency ?? Number.POSITIVE_INFINITY));
    this.options = {
      ...options,
      checkMode: options.checkMode ?? 'strict',
      maxAttempts: Math.max(1, options.maxAttempts ?? 5),
      timeoutMs: options.timeoutMs ?? 120_000,
      retryBaseDelayMs: options.retryBaseDelayMs ?? 500,
      retryMaxDelayMs: options.retryMaxDelayMs ?? 30_000,
      concurrency,
    };
    this.limiter = new AdaptiveLimiter(concurrency);
    this.breaker = new JudgeCircuitBreaker(options.breakerThreshold ?? defaultBreakerThreshold, redactUrl(options.judge?.provenance.baseUrl) ?? options.judge?.provenance.id);
    // Every call in flight listens on the run's signal (and stops listening when it ends):
    // that is `concurrency` listeners, not a leak, so lift Node's warning threshold.
    if (options.signal) setMaxListeners(0, options.signal);
  }

  get concurrency(): number {
    return this.options.concurrency;
  }

  /** Number of judge calls waiting for a slot (for queue-depth metrics). */
  get queuedCalls(): number {
    return this.limiter.waiting;
  }

  /** The error that stopped the engine (bad credentials, judge unavailable), if any. */
  get fatal(): RubricateError | undefined {
    return this.fatalError;
  }

  async gradeItem(item: Item): Promise<GradedItem> {
    const usage = emptyUsage();
    const results = new Map<string, CriterionResult>();
    const rubric = item.rubric;
    const checked = rubric.criteria.filter((criterion) => criterion.check !== undefined);
    const judged = rubric.criteria.filter((criterion) => criterion.check === undefined);

    for (const criterion of checked) results.set(criterion.id, this.runCheck(item, criterion));

    let gated = false;
    if (rubric.gate === 'hard_rules') {
      // Gatekeeper: hard rules first; one failure zeroes the item and spares the judge the rest.
      const judgedHardRules = judged.filter((criterion) => criterion.kind === 'hard_rule');
      await this.judgeCriteria(item, judgedHardRules, results, usage);
      gated = rubric.criteria.some((criterion) => {
        const result = results.get(criterion.id);
        return criterion.kind === 'hard_rule' && result?.status === 'ok' && result.verdict?.met === false;
      });
      const principles = judged.filter((criterion) => criterion.kind !== 'hard_rule');
      if (gated) {
        for (const criterion of principles) results.set(criterion.id, { criterion, source: 'judge', status: 'skipped', skipReason: 'gated' });
        // What the judge would have been asked (planning builds no prompt text; nothing is sent).
        if (this.options.judge && principles.length > 0) usage.gate_calls_saved += this.options.strategy.plan(item, principles).length;
      } else {
        await this.judgeCriteria(item, principles, results, usage);
      }
    } else {
      await this.judgeCriteria(item, judged, results, usage);
    }

    const criteria = rubric.criteria.map((criterion) => results.get(criterion.id)!);
    // A gated item's score is 0 by rule, even if an ungraded criterion errored.
    const status = criteria.some((result) => result.status === 'error') && !gated ? 'error' : 'ok';
    this.emit({ type: 'item', status });
    return { item, status, criteria, gated, usage };
  }

  /**
   * Grades a stream of records, at most a window of items at once, and yields them in
   * input order (stable output; memory bounded by the window, not the input).
   */
  async *gradeStream(records: AsyncIterable<ImportRecord>, windowSize = Math.max(64, this.options.concurrency * 4)): AsyncGenerator<GradedRecord> {
    const pending: Array<Promise<GradedRecord>> = [];
    for await (const record of records) {
      if (this.fatalError) break;
      if (record.kind === 'invalid') {
        this.emit({ type: 'item', status: 'invalid' });
        pending.push(Promise.resolve(record));
      } else {
        pending.push(this.gradeItem(record.item).then((graded) => ({ kind: 'graded' as const, graded, line: record.line })));
      }
      while (pending.length >= windowSize) {
        const next = await pending.shift()!;
        if (this.fatalError) break;
        yield next;
      }
    }
    while (pending.length > 0) {
      const next = await pending.shift()!;
      if (this.fatalError) break;
      yield next;
    }
    if (this.fatalError) throw this.fatalError;
  }

  private runCheck(item: Item, criterion: Criterion): CriterionResult {
    const runner = this.options.checkRunner;
    if (!runner) {
      return {
        criterion,
        source: 'check',
        status: 'error',
        error: new RubricateError('CHECK_INVALID', `no check runner available for check type ${criterion.check!.type}`).toJSON(),
      };
    }
    try {
      const prompt = [...item.prompt].reverse().find((message) => message.role === 'user')?.content ?? '';
      const outcome = runner(criterion.check!, item.response, { prompt, mode: this.options.checkMode, ...(item.trajectory ? { trajectory: item.trajectory } : {}) });
      const verdict: CriterionVerdict = { met: outcome.passed, value: outcome.passed ? 1 : 0, source: 'check' };
      if (outcome.detail) verdict.explanation = outcome.detail;
      return { criterion, source: 'check', status: 'ok', verdict: withCitedSteps(item, verdict) };
    } catch (error) {
      return { criterion, source: 'check', status: 'error', error: toRubricateError(error, 'CHECK_INVALID').toJSON() };
    }
  }

  /**
   * Judges criteria: hierarchical ones through their sub-checks (each a binary question),
   * long responses through evidence, everything else directly.
   */
  private async judgeCriteria(item: Item, criteria: Criterion[], results: Map<string, CriterionResult>, usage: Usage): Promise<void> {
    if (criteria.length === 0) return;
    const units: Criterion[] = [];
    const hierarchical: Array<{ criterion: Criterion; parts: Criterion[] }> = [];
    for (const criterion of criteria) {
      if (!criterion.subchecks) {
        units.push(criterion);
        continue;
      }
      const parts = criterion.subchecks.map((text, index): Criterion => ({ id: `${criterion.id}/${index + 1}`, text, points: 1, tags: [], kind: criterion.kind }));
      units.push(...parts);
      hierarchical.push({ criterion, parts });
    }
    const unitResults = new Map<string, CriterionResult>();
    await this.judgeUnits(item, units, unitResults, usage);
    for (const criterion of criteria) if (!criterion.subchecks) results.set(criterion.id, unitResults.get(criterion.id)!);
    for (const { criterion, parts } of hierarchical) results.set(criterion.id, foldSubchecks(criterion, parts.map((part) => unitResults.get(part.id)!)));
  }

  private async judgeUnits(item: Item, criteria: Criterion[], results: Map<string, CriterionResult>, usage: Usage): Promise<void> {
    if (criteria.length === 0) return;
    const judge = this.options.judge;
    if (!judge) {
      const error = new RubricateError('JUDGE_UNAVAILABLE', 'criterion has no check and no judge is configured (--judge none)').toJSON();
      for (const criterion of criteria) results.set(criterion.id, { criterion, source: 'judge', status: 'error', error });
      return;
    }
    const strategy = this.options.strategy;
    let plan = (pending: Criterion[]) => strategy.plan(item, pending, judge.modelLimits);
    let evidence: Map<string, { quotes: number; chunks: number }> | undefined;
    const budget = this.options.contextBudgetTokens;
    if (budget !== undefined && estimateTokens(renderItemContext(item)) + 600 > budget) {
      const gathered = await this.gatherEvidence(item, criteria, budget, results, usage);
      if (!gathered) return;
      evidence = gathered.summary;
      const derived = gathered.items;
      plan = (pending) => pending.flatMap((criterion) => strategy.plan(derived.get(criterion.id)!, [criterion], judge.modelLimits));
      criteria = criteria.filter((criterion) => derived.has(criterion.id));
    }
    const attemptsUsed = new Map<string, number>();
    // Groups planned separately: a batch that did not fit the judge is retried as two halves.
    let pending: Criterion[][] = [criteria];
    while (pending.length > 0) {
      const budgetLeft = Math.min(...pending.flat().map((criterion) => this.options.maxAttempts - (attemptsUsed.get(criterion.id) ?? 0)));
      const tasks = pending.flatMap((group) => plan(group));
      const outcomes = await Promise.all(tasks.map((task) => this.runTask(task, budgetLeft)));
      const retry: Criterion[] = [];
      const halves: Criterion[][] = [];
      for (let index = 0; index < tasks.length; index += 1) {
        const task = tasks[index];
        const outcome = outcomes[index];
        this.account(usage, outcome);
        if (task.criteria.length > 1 && !this.fatalError && didNotFit(outcome)) {
          const middle = Math.ceil(task.criteria.length / 2);
          halves.push(task.criteria.slice(0, middle), task.criteria.slice(middle));
          this.emit({ type: 'retry', code: outcome.error?.code ?? 'JUDGE_OUTPUT_LIMIT', delayMs: 0 });
          continue;
        }
        for (const criterion of task.criteria) attemptsUsed.set(criterion.id, (attemptsUsed.get(criterion.id) ?? 0) + Math.max(1, outcome.calls));
        for (const criterion of task.criteria) {
          const verdict = outcome.decision?.verdicts.get(criterion.id);
          if (verdict) {
            const summary = evidence?.get(criterion.id);
            const cited = withCitedSteps(item, summary ? { ...verdict, evidence: summary } : verdict);
            results.set(criterion.id, { criterion, source: 'judge', status: 'ok', verdict: cited });
            continue;
          }
          const error = outcome.decision?.errors.get(criterion.id) ?? outcome.error ?? new RubricateError('INTERNAL', 'no verdict and no error');
          if (this.shouldRetry(error, attemptsUsed.get(criterion.id) ?? 0)) {
            this.emit({ type: 'retry', code: error.code, delayMs: 0 });
            usage.retries += 1;
            retry.push(criterion);
          } else {
            results.set(criterion.id, { criterion, source: 'judge', status: 'error', error: withAttempts(error, attemptsUsed.get(criterion.id) ?? 0) });
          }
        }
      }
      pending = retry.length > 0 ? [retry, ...halves] : halves;
    }
  }

  /**
   * Reads a long response chunk by chunk, collecting per criterion the verbatim passages
   * relevant to it; returns per criterion an item whose response is that evidence.
   */
  private async gatherEvidence(
    item: Item,
    criteria: Criterion[],
    budget: number,
    results: Map<string, CriterionResult>,
    usage: Usage,
  ): Promise<{ items: Map<string, Item>; summary: Map<string, { quotes: number; chunks: number }> } | undefined> {
    const overhead = estimateTokens(renderItemContext({ ...item, response: '' })) + 800 + criteria.length * 80;
    const chunkCharacters = Math.floor((budget - overhead) * 3.5 * 0.8);
    if (chunkCharacters < 400) {
      const error = new RubricateError('JUDGE_CONTEXT_OVERFLOW', `the conversation and criteria alone exceed the judge context budget of ${budget} tokens; raise --context-budget`).toJSON();
      for (const criterion of criteria) results.set(criterion.id, { criterion, source: 'judge', status: 'error', error });
      return undefined;
    }
    const chunks = splitIntoChunks(item.response, chunkCharacters);
    const sampling = this.options.evidenceSampling ?? { temperature: 0, maxTokens: 512 };
    const quotes = new Map<string, string[]>(criteria.map((criterion) => [criterion.id, []]));
    const failed = new Map<string, RubricateError>();
    await Promise.all(
      chunks.map(async (chunk, chunkIndex) => {
        let pending = criteria;
        for (let attempt = 1; pending.length > 0; attempt += 1) {
          const task = createEvidenceTask(item, pending, chunk, chunkIndex, chunks.length, sampling);
          const outcome = await this.runTask(task, this.options.maxAttempts);
          this.account(usage, outcome);
          const retry: Criterion[] = [];
          for (const criterion of pending) {
            const verdict = outcome.decision?.verdicts.get(criterion.id);
            if (verdict) {
              quotes.get(criterion.id)!.push(...(task.quotes.get(criterion.id) ?? []));
              continue;
            }
            const error = outcome.decision?.errors.get(criterion.id) ?? outcome.error ?? new RubricateError('INTERNAL', 'no evidence and no error');
            if (this.shouldRetry(error, attempt)) retry.push(criterion);
            else failed.set(criterion.id, new RubricateError(error.code, `evidence from part ${chunkIndex + 1} of ${chunks.length}: ${error.message}`));
          }
          pending = retry;
        }
      }),
    );
    const items = new Map<string, Item>();
    const summary = new Map<string, { quotes: number; chunks: number }>();
    for (const criterion of criteria) {
      const error = failed.get(criterion.id);
      if (error) {
        results.set(criterion.id, { criterion, source: 'judge', status: 'error', error: error.toJSON() });
        continue;
      }
      const found = quotes.get(criterion.id)!;
      items.set(criterion.id, { ...item, response: evidenceResponse(found, item.response.length, chunks.length) });
      summary.set(criterion.id, { quotes: found.length, chunks: chunks.length });
    }
    return { items, summary };
  }

  private shouldRetry(error: RubricateError, attempts: number): boolean {
    const parseProblem = error.code === 'JUDGE_UNPARSEABLE' || error.code === 'JUDGE_REFUSED';
    return parseProblem && attempts < this.options.maxAttempts && !this.fatalError;
  }

  private account(usage: Usage, outcome: { calls: number; retries: number; cached: boolean; usage?: JudgeReply['usage'] }): void {
    usage.calls += outcome.calls;
    usage.retries += outcome.retries;
    if (outcome.cached) usage.cache_hits += 1;
    if (outcome.usage) addReplyUsage(usage, outcome.usage);
  }

  /** One task: store lookup, in-flight dedupe, the call with retries, and the reading of its reply. */
  private async runTask(task: JudgeTask, attemptBudget: number): Promise<{ decision?: TaskDecision; error?: RubricateError; calls: number; retries: number; cached: boolean; usage?: JudgeReply['usage'] }> {
    const judge = this.options.judge!;
    const key = requestKey(judge.provenance, task.templateVersion, task.request, task.sample ?? this.options.sample ?? 0, task.keyMaterial);
    let stored: JudgeReply | undefined;
    try {
      const found = this.options.store?.get(key);
      stored = isPromise(found) ? await found : found;
    } catch (error) {
      // A store that cannot answer (a cache locked beyond its bound, Redis gone) fails this call clearly.
      return { error: toRubricateError(error, 'STORE_UNAVAILABLE'), calls: 0, retries: 0, cached: false };
    }
    if (stored) {
      const decision = task.decide(stored);
      if (decision.verdicts.size > 0) {
        this.emit({ type: 'call', cached: true });
        return { decision, calls: 0, retries: 0, cached: true };
      }
    }
    let shared = this.inFlight.get(key);
    const leader = shared === undefined;
    if (!shared) {
      shared = this.callOnceInFleet(task, attemptBudget, key);
      this.inFlight.set(key, shared);
    }
    let result: CallResult;
    try {
      result = await shared;
    } finally {
      if (leader) this.inFlight.delete(key);
    }
    if (!leader) {
      // Same request made once for several tasks: the followers read the same reply.
      if (!result.reply) return { error: result.error, calls: 0, retries: 0, cached: true };
      return { decision: task.decide(result.reply), calls: 0, retries: 0, cached: true };
    }
    try {
      if (!result.reply) return { error: result.error, calls: result.calls, retries: result.retries, cached: false };
      const decision = task.decide(result.reply);
      if (decision.verdicts.size > 0) this.breaker.recordSuccess();
      else if (!result.cached) this.tripOn(decision.errors.values().next().value);
      // Another process made this call and stored its reply: a cache hit.
      if (result.cached) return { decision, calls: 0, retries: 0, cached: true };
      // Persist the moment a reply yields verdicts, before they are used: this is what makes a killed run resumable.
      if (decision.verdicts.size > 0 && this.options.store) {
        try {
          const written = this.options.store.put(key, result.reply);
          if (isPromise(written)) await written;
        } catch (error) {
          return { error: toRubricateError(error, 'STORE_UNAVAILABLE'), calls: result.calls, retries: result.retries, cached: false, usage: result.reply.usage };
        }
      }
      return { decision, calls: result.calls, retries: result.retries, cached: false, usage: result.reply.usage };
    } finally {
      // Released after the reply is stored, so processes waiting on the claim find it.
      if (result.claimed && sharesInFlight(this.options.store)) this.options.store.release(key).catch(() => undefined);
    }
  }

  /**
   * With a store shared by several processes, one call per request across all of them: the
   * first to claim the key calls; the others wait for its reply to be stored (and call
   * themselves only if it gives up or its process dies, when the claim's lease runs out).
   */
  private async callOnceInFleet(task: JudgeTask, attemptBudget: number, key: string): Promise<CallResult> {
    const store = this.options.store;
    if (!sharesInFlight(store)) return this.callWithRetries(task, attemptBudget);
    try {
      while (!(await store.claim(key))) {
        const reply = await store.awaitReply(key, this.options.signal);
        if (reply) {
          this.emit({ type: 'call', cached: true });
          return { reply, calls: 0, retries: 0, cached: true };
        }
        if (this.options.signal?.aborted) return { error: new RubricateError('DEADLINE_EXCEEDED', 'grading was cancelled'), calls: 0, retries: 0, cached: false };
      }
      // Stored by another process between our lookup and our claim: nothing to call.
      const landed = await store.get(key);
      if (landed) {
        await store.release(key);
        this.emit({ type: 'call', cached: true });
        return { reply: landed, calls: 0, retries: 0, cached: true };
      }
    } catch (error) {
      return { error: toRubricateError(error, 'STORE_UNAVAILABLE'), calls: 0, retries: 0, cached: false };
    }
    return { ...(await this.callWithRetries(task, attemptBudget)), claimed: true };
  }

  private async callWithRetries(task: JudgeTask, attemptBudget: number): Promise<CallResult> {
    const judge = this.options.judge!;
    let calls = 0;
    let retries = 0;
    for (let attempt = 1; ; attempt += 1) {
      if (this.fatalError) return { error: this.fatalError, calls, retries, cached: false };
      if (this.options.signal?.aborted) {
        return { error: new RubricateError('DEADLINE_EXCEEDED', 'grading was cancelled'), calls, retries, cached: false };
      }
      await this.limiter.acquire(attempt > 1);
      // The breaker may have opened while this call waited for a slot.
      if (this.fatalError) {
        this.limiter.release('failure');
        return { error: this.fatalError, calls, retries, cached: false };
      }
      if (this.options.stopSignal?.aborted) {
        this.limiter.release('failure');
        return { error: new RubricateError('DEADLINE_EXCEEDED', 'grading was stopped before this call started'), calls, retries, cached: false };
      }
      calls += 1;
      let outcome: 'success' | 'overloaded' | 'failure' = 'failure';
      let error: RubricateError;
      try {
        const reply = await this.callOnce(judge, task);
        outcome = 'success';
        this.emit({ type: 'call', cached: false });
        return { reply, calls, retries, cached: false };
      } catch (thrown) {
        error = toRubricateError(thrown, 'JUDGE_CONNECTION');
        // 503 and Anthropic's 529 "overloaded" lower concurrency like a 429.
        if (error.code === 'JUDGE_RATE_LIMITED' || (error.code === 'JUDGE_SERVER_ERROR' && (error.details.status === 503 || error.details.status === 529))) outcome = 'overloaded';
      } finally {
        this.limiter.release(outcome);
      }
      this.emit({ type: 'judge-error', code: error.code, message: error.message });
      if (JudgeCircuitBreaker.isHardCallFailure(error) && this.tripOn(error)) return { error: this.fatalError!, calls, retries, cached: false };
      if (fatalCodes.has(error.code)) {
        this.fatalError ??= error;
        return { error, calls, retries, cached: false };
      }
      if (!error.retryable || attempt >= attemptBudget) {
        if (attempt > 1) error = new RubricateError(error.code, `${error.message} (after ${attempt} attempts)`, error.details, { cause: error });
        return { error, calls, retries, cached: false };
      }
      const delay = this.retryDelay(attempt, error);
      retries += 1;
      this.emit({ type: 'retry', code: error.code, delayMs: delay });
      await sleep(delay, this.options.signal);
    }
  }

  private async callOnce(judge: Judge, task: JudgeTask): Promise<JudgeReply> {
    const controller = new AbortController();
    const timeoutMs = this.options.timeoutMs;
    const timer = setTimeout(() => {
      controller.abort(new RubricateError('JUDGE_TIMEOUT', `judge did not answer within ${timeoutMs} ms`, { timeoutMs }));
    }, timeoutMs);
    const outer = this.options.signal;
    const onOuterAbort = () => controller.abort(new RubricateError('DEADLINE_EXCEEDED', 'grading was cancelled'));
    outer?.addEventListener('abort', onOuterAbort, { once: true });
    try {
      return await judge.complete(withItemImages(task, judge), { signal: controller.signal });
    } catch (error) {
      if (controller.signal.aborted && RubricateError.isInstance(controller.signal.reason)) throw controller.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
      outer?.removeEventListener('abort', onOuterAbort);
    }
  }

  /** Exponential backoff with jitter; a server's Retry-After wins when it asks for longer. */
  private retryDelay(attempt: number, error: RubricateError): number {
    const exponential = Math.min(this.options.retryMaxDelayMs, this.options.retryBaseDelayMs * 2 ** (attempt - 1));
    const jittered = exponential * (0.5 + Math.random() * 0.5);
    const asked = error.details.retryAfterMs;
    // A server may ask for any wait; it is honoured up to --max-retry-after and never beyond --timeout.
    const cap = Math.min(this.options.maxRetryAfterMs ?? defaultMaxRetryAfterMs, this.options.timeoutMs);
    if (typeof asked === 'number') return Math.min(Math.max(asked, 0), cap) + Math.random() * Math.min(250, this.options.retryBaseDelayMs);
    return jittered;
  }

  /** Counts a hard failure; true when it opened the breaker (the run stops with its error). */
  private tripOn(error: RubricateError | undefined): boolean {
    if (!error || error.code === 'DEADLINE_EXCEEDED') return false;
    const opened = this.breaker.recordFailure(error);
    if (!opened) return false;
    this.fatalError ??= opened;
    return true;
  }

  private emit(event: EngineEvent): void {
    this.options.onEvent?.(event);
  }
}


/** A call too big for the judge: its prompt or output budget overflowed, or every verdict was cut at the model's output limit. */
function didNotFit(outcome: { decision?: TaskDecision; error?: RubricateError }): boolean {
  if (outcome.error?.code === 'JUDGE_CONTEXT_OVERFLOW') return true;
  const errors = outcome.decision?.errors;
  return outcome.decision?.verdicts.size === 0 && errors !== undefined && errors.size > 0 && [...errors.values()].every((error) => error.code === 'JUDGE_OUTPUT_LIMIT');
}

function withAttempts(error: RubricateError, attempts: number): SerializedError {
  const serialized = error.toJSON();
  if (attempts > 1 && !serialized.message.includes('attempts)')) serialized.message += ` (after ${attempts} attempts)`;
  return serialized;
}

/**
 * A hierarchical criterion from its sub-checks: `all` must pass; `fraction` passed; or
 * `penalty`: 1 minus a penalty per failed check, floored at 0. Met means every check passed.
 */
export function foldSubchecks(criterion: Criterion, parts: CriterionResult[]): CriterionResult {
  const failedPart = parts.find((part) => part.status !== 'ok');
  if (failedPart) {
    const error = failedPart.error ?? new RubricateError('INTERNAL', 'sub-check not graded').toJSON();
    return { criterion, source: 'judge', status: 'error', error: { ...error, message: `sub-check "${failedPart.criterion.text}": ${error.message}` } };
  }
  const passed = parts.filter((part) => part.verdict!.met).length;
  const total = parts.length;
  const rule = criterion.subcheckRule ?? 'all';
  const value =
    rule === 'fraction' ? passed / total : rule === 'penalty' ? Math.max(0, 1 - (criterion.subcheckPenalty ?? 1 / total) * (total - passed)) : passed === total ? 1 : 0;
  const subchecks = parts.map((part) => ({ text: part.criterion.text, met: part.verdict!.met, ...(part.verdict!.explanation ? { explanation: part.verdict!.explanation } : {}) }));
  return {
    criterion,
    source: 'judge',
    status: 'ok',
    verdict: { met: passed === total, value, source: 'judge', explanation: `${passed} of ${total} checks passed (${rule})`, subchecks },
  };
}
