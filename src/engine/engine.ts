/**
 * The grading engine: scheduling, the reply store, in-flight dedupe, the judge calls (through
 * the one call loop in `judge-call.ts`), the circuit breaker, usage and progress events. What
 * an item asks of the judge (checks, the gate, sub-checks: `grading/item-policy.ts`; long
 * responses read for evidence: `grading/evidence.ts`) is decided in the grading modules; the
 * engine runs the tasks they plan. A verdict exists only when a reply was read or a check ran.
 */
import { RubricateError, toRubricateError, type ErrorCode, type SerializedError } from '../errors.js';
import type { CriterionResult, CriterionVerdict, GradingStrategy, GroupPlacement, JudgeTask, SamplingOptions, SelfPreferenceNote, TaskDecision, TaskOutcome } from '../grading/types.js';
import type { CheckMode } from '../checks/types.js';
import type { AbstainPolicy, CallPolicy } from '../spec/run-spec.js';
import { judgeImage } from '../images/images.js';
import { gatherEvidence, needsEvidence } from '../grading/evidence.js';
import { gradeItemCriteria, type CheckRunner } from '../grading/item-policy.js';
import type { Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import type { InvalidRecord } from '../rubric/records.js';
import type { Criterion, Item } from '../rubric/schema.js';
import { AdaptiveLimiter } from './limiter.js';
import { isPromise, sharesInFlight, type ReplyStore } from '../store/types.js';
import { requestKey } from './request-key.js';
import { addReplyUsage, addRetryReasons, emptyUsage, type RetryReasons, type Usage } from './usage.js';
import { redactUrl } from '../util/redact.js';
import { defaultBreakerThreshold, JudgeCircuitBreaker } from './circuit-breaker.js';
import { afterAttempts, allowListenerPerCall, callJudge, type JudgeCallResult } from './judge-call.js';

export type { CheckRunner } from '../grading/item-policy.js';
export type { CriterionResult } from '../grading/types.js';

export interface GradedItem {
  item: Item;
  status: 'ok' | 'error';
  criteria: CriterionResult[];
  /** A failed hard rule zeroed the item and its judged criteria were not sent. */
  gated: boolean;
  usage: Usage;
  /**
   * Every verdict of the item was read from the reply store, by this item's own lookups (no
   * judge call, no retry, no shared in-flight call, no check): grading the same item again
   * while the store holds those replies gives the same result and the same events.
   */
  fromStore?: boolean;
  /** The self-preference guard found the judge related to the model under test (or was told the model under test). */
  selfPreference?: SelfPreferenceNote;
  /** With `keepRequests`: every judge call the item's criteria took, in the order they ended. */
  calls?: JudgeCallTrace[];
  /** Judged with the other responses of its group (listwise, tournament). */
  group?: GroupPlacement;
}

/** One judge call of an item as the run made it (kept with `keepRequests`): what was asked and what came back. */
export interface JudgeCallTrace {
  /** Ids of the criteria the call decides. */
  criteria: string[];
  request: JudgeRequest;
  /** The reply read (from the judge, the store, or an identical call in flight); absent when the call failed. */
  reply?: JudgeReply;
  /** Why no reply came (the call's last error). */
  error?: RubricateError;
  /** Calls made to the judge for it (0: answered by the store or an identical call). */
  attempts: number;
  /** In a jury: the member that made the call. */
  member?: { judge: string; sample?: number };
}

export type GradedRecord =
  | { kind: 'graded'; graded: GradedItem; line: number }
  | InvalidRecord;

export type EngineEvent =
  | { type: 'item'; status: 'ok' | 'error' | 'invalid' }
  | { type: 'call'; cached: boolean }
  /**
   * Criteria whose judge outcome is final (a verdict, or an error after the last attempt), from
   * one call or its cached reply: 1 per criterion in a per-criterion plan, the batch's size in a
   * batched one. A criterion asked again or a batch split in halves counts only once it settles.
   */
  | { type: 'criteria'; count: number }
  | { type: 'retry'; code: string; delayMs: number }
  | { type: 'judge-error'; code: string; message?: string };

export interface EngineOptions {
  /** Absent means `--judge none`: criteria without a check end in error. */
  judge?: Judge;
  /** Without a judge: the error those criteria end in (default: JUDGE_UNAVAILABLE, `--judge none`). */
  noJudgeError?: RubricateError;
  strategy: GradingStrategy;
  store?: ReplyStore;
  checkRunner?: CheckRunner;
  checkMode?: CheckMode;
  /** Attempts, timeouts, retry delays, concurrency and the breaker threshold, as one value. */
  calls?: CallPolicy;
  onEvent?: (event: EngineEvent) => void;
  signal?: AbortSignal;
  /** Once aborted, no new judge call starts; calls in flight go on until `signal` aborts (a graceful stop). */
  stopSignal?: AbortSignal;
  /** Sample index for repeated judgements of the same request (self-consistency juries): part of the cache key. */
  sample?: number;
  /** `--abstain`: how a criterion the judge could not assess counts (applied as the item's criteria come back). */
  abstain?: AbstainPolicy;
  /**
   * Judge context budget in tokens. A grading prompt estimated above it is not sent whole:
   * the response is read in chunks for evidence, then each criterion is judged on its evidence.
   */
  contextBudgetTokens?: number;
  /** Sampling used for evidence extraction calls (long responses). */
  evidenceSampling?: SamplingOptions;
  /** Keep each call's request and reply on the graded item (`GradedItem.calls`). */
  keepRequests?: boolean;
}

/**
 * A call whose reply the caller reads itself (a response of the model under test, `src/sampling/`):
 * the same store, dedupe, limiter, retries and breaker as a judge task, with no criteria to decide.
 */
export interface ModelCall {
  /** Its images go with the last user message, as a judge task's do. */
  item: Item;
  request: JudgeRequest;
  /** Part of the cache key: what kind of call this is (`sample/v1`). */
  templateVersion: string;
  /** Distinguishes the samples of one request in the store. */
  sample: number;
  /** Why a reply cannot be used (an empty answer), or undefined: asked again while attempts remain, never stored. */
  problem(reply: JudgeReply): RubricateError | undefined;
}

export interface ModelCallOutcome {
  reply?: JudgeReply;
  /** Why no usable reply came, after its attempts. */
  error?: RubricateError;
  /** The call's cache key (a hash of the model, endpoint, request, settings and sample). */
  key: string;
  cached: boolean;
  usage: Usage;
}

/** A judge call as the engine made it: the call loop's result, or a reply another task or process already had. */
interface CallResult extends Omit<JudgeCallResult, 'fatal'> {
  /** Served from the store or from an identical call already in flight. */
  cached: boolean;
  /** This process claimed the call in a shared store (released once its reply is stored). */
  claimed?: boolean;
  /** The retries above by the error that caused them. */
  retryReasons?: RetryReasons;
}

interface RunOutcome extends TaskOutcome {
  retries: number;
  retryReasons?: RetryReasons;
  cached: boolean;
  /** Answered by this task's own store lookup. */
  stored?: true;
  usage?: JudgeReply['usage'];
  /** The reply the decision was read from. */
  reply?: JudgeReply;
}

/** An item's usage, and how many of its tasks were answered by their own store lookup. */
interface ItemTally {
  usage: Usage;
  storeAnswers: number;
  /** The calls kept, with `keepRequests`. */
  calls?: JudgeCallTrace[];
}

/** What the rounds of judging one item's criteria share: attempts so far, criteria asked again (with why), the results. */
interface JudgingRounds {
  judge: Judge;
  plan: (pending: Criterion[]) => JudgeTask[];
  evidence: Map<string, { quotes: number; chunks: number }> | undefined;
  tally: ItemTally;
  results: Map<string, CriterionResult>;
  attemptsUsed: Map<string, number>;
  reasked: Map<string, ErrorCode>;
}

/**
 * The request with the item's images attached to its last user message (where the item's
 * text, and the images' placeholders, are). A judge that cannot take images refuses here,
 * before any call: an image is never dropped.
 */
function withItemImages(task: JudgeTask, judge: Judge): JudgeRequest {
  const images = task.item?.images;
  if (!images || images.length === 0) return task.request;
  if (!judge.capabilities.images) {
    throw new RubricateError('JUDGE_REQUEST_REJECTED', `judge ${judge.provenance.id} does not accept images, and item ${task.item.id} has ${images.length}; use an OpenAI-compatible vision model, anthropic: or gemini:`);
  }
  const messages = [...task.request.messages];
  let last = messages.length - 1;
  while (last > 0 && messages[last].role !== 'user') last -= 1;
  messages[last] = { ...messages[last], images: images.map(judgeImage) };
  return { ...task.request, messages };
}

export class GradingEngine {
  private readonly options: EngineOptions & { checkMode: CheckMode };
  /** The call policy with its defaults filled in. */
  private readonly calls: Required<Omit<CallPolicy, 'maxRetryAfterMs' | 'breakerThreshold'>> & Pick<CallPolicy, 'maxRetryAfterMs'>;
  private readonly limiter: AdaptiveLimiter;
  private readonly inFlight = new Map<string, Promise<CallResult>>();
  private fatalError: RubricateError | undefined;
  private readonly breaker: JudgeCircuitBreaker;

  constructor(options: EngineOptions) {
    const calls = options.calls ?? {};
    const concurrency = Math.max(1, Math.min(calls.concurrency ?? 16, options.judge?.capabilities.maxConcurrency ?? Number.POSITIVE_INFINITY));
    this.options = { ...options, checkMode: options.checkMode ?? 'strict' };
    this.calls = {
      concurrency,
      maxAttempts: Math.max(1, calls.maxAttempts ?? 5),
      timeoutMs: calls.timeoutMs ?? 120_000,
      retryBaseDelayMs: calls.retryBaseDelayMs ?? 500,
      retryMaxDelayMs: calls.retryMaxDelayMs ?? 30_000,
      maxRetryAfterMs: calls.maxRetryAfterMs,
    };
    this.limiter = new AdaptiveLimiter(concurrency);
    this.breaker = new JudgeCircuitBreaker(calls.breakerThreshold ?? defaultBreakerThreshold, redactUrl(options.judge?.provenance.baseUrl) ?? options.judge?.provenance.id);
    // Calls in flight and waits on a shared store's claims all listen on the run's signal.
    if (options.signal) allowListenerPerCall(options.signal);
  }

  get concurrency(): number {
    return this.calls.concurrency;
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
    const tally: ItemTally = { usage, storeAnswers: 0, ...(this.options.keepRequests ? { calls: [] } : {}) };
    const judge = this.options.judge;
    const graded = await gradeItemCriteria(item, {
      checkRunner: this.options.checkRunner,
      checkMode: this.options.checkMode,
      abstain: this.options.abstain,
      judge: (criteria) => this.judgeCriteria(item, criteria, tally),
      // What the judge would have been asked (planning builds no prompt text).
      plannedCalls: (criteria) => (judge ? this.options.strategy.plan(item, criteria).length : 0),
    });
    usage.gate_calls_saved += graded.callsSaved;
    this.emit({ type: 'item', status: graded.status });
    const fromStore =
      graded.status === 'ok' &&
      tally.storeAnswers > 0 &&
      tally.storeAnswers === usage.cache_hits &&
      usage.calls === 0 &&
      usage.retries === 0 &&
      graded.criteria.every((result) => result.source === 'judge');
    return { item, status: graded.status, criteria: graded.criteria, gated: graded.gated, usage, ...(fromStore ? { fromStore } : {}), ...(tally.calls ? { calls: tally.calls } : {}) };
  }

  /**
   * Judges criteria: plans their tasks (on evidence when the response is too long for the
   * judge), runs them, asks again for unreadable replies and splits batches that did not fit.
   */
  private async judgeCriteria(item: Item, criteria: Criterion[], tally: ItemTally): Promise<Map<string, CriterionResult>> {
    const results = new Map<string, CriterionResult>();
    if (criteria.length === 0) return results;
    const judge = this.options.judge;
    if (!judge) {
      const error = (this.options.noJudgeError ?? new RubricateError('JUDGE_UNAVAILABLE', 'criterion has no check and no judge is configured (--judge none): give --judge SPEC, or try the pipeline offline on made-up verdicts with --judge scripted (or `rubricate fake-judge` as the endpoint)')).toJSON();
      for (const criterion of criteria) results.set(criterion.id, { criterion, source: 'judge', status: 'error', error });
      this.emitSettled(criteria.length);
      return results;
    }
    const planned = await this.planCriteria(judge, item, criteria, tally, results);
    if (planned.criteria.length === 0) return results;
    const rounds: JudgingRounds = { judge, plan: planned.plan, evidence: planned.evidence, tally, results, attemptsUsed: new Map(), reasked: new Map() };
    // Groups planned separately: a batch that did not fit the judge is retried as two halves.
    let pending: Criterion[][] = [planned.criteria];
    while (pending.length > 0) pending = await this.judgeRound(rounds, pending);
    return results;
  }

  /**
   * How the criteria's tasks are planned: on the item, or (a response longer than the context
   * budget) each criterion on the evidence gathered for it; criteria whose evidence failed are
   * settled in error and left out.
   */
  private async planCriteria(judge: Judge, item: Item, criteria: Criterion[], tally: ItemTally, results: Map<string, CriterionResult>): Promise<{ plan: (pending: Criterion[]) => JudgeTask[]; evidence?: Map<string, { quotes: number; chunks: number }>; criteria: Criterion[] }> {
    const strategy = this.options.strategy;
    const budgetTokens = this.options.contextBudgetTokens;
    if (budgetTokens === undefined || !needsEvidence(item, budgetTokens)) return { plan: (pending) => strategy.plan(item, pending, judge.capabilities.limits), criteria };
    const gathered = await gatherEvidence(item, criteria, {
      budgetTokens,
      sampling: this.options.evidenceSampling ?? { temperature: 0, maxTokens: 512 },
      maxAttempts: this.calls.maxAttempts,
      runTask: async (task, attemptBudget) => this.account(tally, await this.runTask(task, attemptBudget), task),
      askAgain: (error, attempts) => this.shouldRetry(error, attempts),
    });
    for (const [id, error] of gathered.errors) {
      const criterion = criteria.find((candidate) => candidate.id === id)!;
      results.set(id, { criterion, source: 'judge', status: 'error', error: error.toJSON() });
    }
    this.emitSettled(gathered.errors.size);
    const derived = gathered.items;
    return {
      plan: (pending) => pending.flatMap((criterion) => strategy.plan(derived.get(criterion.id)!, [criterion], judge.capabilities.limits)),
      evidence: gathered.summary,
      criteria: criteria.filter((criterion) => derived.has(criterion.id)),
    };
  }

  /** One round: the pending groups' tasks run at once; returns what is asked again (unreadable replies) and the halves of batches that did not fit. */
  private async judgeRound(rounds: JudgingRounds, pending: Criterion[][]): Promise<Criterion[][]> {
    const { attemptsUsed, reasked } = rounds;
    const budgetLeft = Math.min(...pending.flat().map((criterion) => this.calls.maxAttempts - (attemptsUsed.get(criterion.id) ?? 0)));
    const tasks = pending.flatMap((group) => rounds.plan(group));
    // Criteria asked again for a reply that could not be used, with why: each call planned for them is a retry.
    for (const task of tasks) {
      const reason = task.criteria.map((criterion) => reasked.get(criterion.id)).find((code) => code !== undefined);
      if (reason === undefined) continue;
      rounds.tally.usage.retries += 1;
      addRetryReasons(rounds.tally.usage, { [reason]: 1 });
      this.emit({ type: 'retry', code: reason, delayMs: 0 });
    }
    reasked.clear();
    const outcomes = await Promise.all(tasks.map((task) => this.runTask(task, budgetLeft)));
    const retry: Criterion[] = [];
    const halves: Criterion[][] = [];
    for (let index = 0; index < tasks.length; index += 1) {
      const task = tasks[index];
      const outcome = this.account(rounds.tally, outcomes[index], task);
      if (task.criteria.length > 1 && !this.fatalError && didNotFit(outcome)) {
        const middle = Math.ceil(task.criteria.length / 2);
        halves.push(task.criteria.slice(0, middle), task.criteria.slice(middle));
        this.emit({ type: 'retry', code: outcome.error?.code ?? 'JUDGE_OUTPUT_LIMIT', delayMs: 0 });
        continue;
      }
      this.settleTask(rounds, task, outcome, retry);
    }
    return retry.length > 0 ? [retry, ...halves] : halves;
  }

  /** A task's criteria settled from its outcome: a verdict, an error, or (an unreadable reply with attempts left) into `retry`. */
  private settleTask(rounds: JudgingRounds, task: JudgeTask, outcome: RunOutcome, retry: Criterion[]): void {
    const { attemptsUsed, results, judge } = rounds;
    for (const criterion of task.criteria) attemptsUsed.set(criterion.id, (attemptsUsed.get(criterion.id) ?? 0) + Math.max(1, outcome.calls));
    const settledBefore = results.size;
    for (const criterion of task.criteria) {
      const decided = outcome.decision?.verdicts.get(criterion.id);
      if (decided) {
        const summary = rounds.evidence?.get(criterion.id);
        const verdict = withToolCalls(withResolvedModel(summary ? { ...decided, evidence: summary } : decided, outcome.reply?.model, judge.provenance.model), outcome.reply);
        results.set(criterion.id, { criterion, source: 'judge', status: 'ok', verdict });
        continue;
      }
      const error = outcome.decision?.errors.get(criterion.id) ?? outcome.error ?? new RubricateError('INTERNAL', 'no verdict and no error');
      if (this.shouldRetry(error, attemptsUsed.get(criterion.id) ?? 0)) {
        rounds.reasked.set(criterion.id, error.code);
        retry.push(criterion);
      } else {
        results.set(criterion.id, { criterion, source: 'judge', status: 'error', error: withAttempts(error, attemptsUsed.get(criterion.id) ?? 0) });
      }
    }
    this.emitSettled(results.size - settledBefore);
  }

  /** An unreadable reply or a refusal is asked again while attempts remain. */
  private shouldRetry(error: RubricateError, attempts: number): boolean {
    const parseProblem = error.code === 'JUDGE_UNPARSEABLE' || error.code === 'JUDGE_REFUSED';
    return parseProblem && attempts < this.calls.maxAttempts && !this.fatalError;
  }

  private account(tally: ItemTally, outcome: RunOutcome, task: JudgeTask): RunOutcome {
    const usage = tally.usage;
    tally.calls?.push({
      criteria: task.criteria.map((criterion) => criterion.id),
      request: task.request,
      ...(outcome.reply ? { reply: outcome.reply } : outcome.error ? { error: outcome.error } : {}),
      attempts: outcome.calls,
    });
    if (outcome.stored) tally.storeAnswers += 1;
    usage.calls += outcome.calls;
    usage.retries += outcome.retries;
    if (outcome.retryReasons) addRetryReasons(usage, outcome.retryReasons);
    if (outcome.cached) usage.cache_hits += 1;
    if (outcome.usage) addReplyUsage(usage, outcome.usage);
    return outcome;
  }

  /** One task: store lookup, in-flight dedupe, the call with retries, and the reading of its reply. */
  private async runTask(task: JudgeTask, attemptBudget: number): Promise<RunOutcome> {
    const judge = this.options.judge!;
    const key = requestKey(judge.provenance, task.templateVersion, task.request, task.sample ?? this.options.sample ?? 0, task.keyMaterial, conditionsOf(task.criteria));
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
        return { decision, calls: 0, retries: 0, cached: true, stored: true, reply: stored };
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
      return { decision: task.decide(result.reply), calls: 0, retries: 0, cached: true, reply: result.reply };
    }
    try {
      if (!result.reply) return { error: result.error, calls: result.calls, retries: result.retries, retryReasons: result.retryReasons, cached: false };
      const decision = task.decide(result.reply);
      if (decision.verdicts.size > 0) this.breaker.recordSuccess();
      else if (!result.cached) this.tripOn(decision.errors.values().next().value);
      // Another process made this call and stored its reply: a cache hit.
      if (result.cached) return { decision, calls: 0, retries: 0, cached: true, reply: result.reply };
      // Persist the moment a reply yields verdicts, before they are used: this is what makes a killed run resumable.
      if (decision.verdicts.size > 0 && this.options.store) {
        try {
          const written = this.options.store.put(key, result.reply);
          if (isPromise(written)) await written;
        } catch (error) {
          return { error: toRubricateError(error, 'STORE_UNAVAILABLE'), calls: result.calls, retries: result.retries, retryReasons: result.retryReasons, cached: false, usage: result.reply.usage, reply: result.reply };
        }
      }
      return { decision, calls: result.calls, retries: result.retries, retryReasons: result.retryReasons, cached: false, usage: result.reply.usage, reply: result.reply };
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
  private callOnceInFleet(task: JudgeTask, attemptBudget: number, key: string): Promise<CallResult> {
    // Without a shared store, the call's own promise (no wrapper promise and its turns per call).
    return sharesInFlight(this.options.store) ? this.callOnceAcrossProcesses(task, attemptBudget, key) : this.call(task, attemptBudget);
  }

  private async callOnceAcrossProcesses(task: JudgeTask, attemptBudget: number, key: string): Promise<CallResult> {
    const store = this.options.store;
    if (!sharesInFlight(store)) return this.call(task, attemptBudget);
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
    return { ...(await this.call(task, attemptBudget)), claimed: true };
  }

  /** The judge call through the one call loop, under the limiter and the breaker. */
  private async call(task: JudgeTask, attemptBudget: number): Promise<CallResult> {
    const judge = this.options.judge!;
    const retryReasons: RetryReasons = {};
    const { fatal, ...result } = await callJudge(
      async (signal) => {
        // Each attempt is timed; the reply keeps the time of the attempt that answered (and the store keeps it with the reply).
        const started = performance.now();
        const reply = await judge.complete(withItemImages(task, judge), { signal });
        return { ...reply, latencyMs: Math.round(performance.now() - started) };
      },
      {
        maxAttempts: attemptBudget,
        timeoutMs: this.calls.timeoutMs,
        retryBaseDelayMs: this.calls.retryBaseDelayMs,
        retryMaxDelayMs: this.calls.retryMaxDelayMs,
        maxRetryAfterMs: this.calls.maxRetryAfterMs,
        signal: this.options.signal,
        stopSignal: this.options.stopSignal,
      },
      {
        slots: this.limiter,
        stopReason: () => this.fatalError,
        onSuccess: () => this.emit({ type: 'call', cached: false }),
        onFailure: (error) => {
          this.emit({ type: 'judge-error', code: error.code, message: error.message });
          return JudgeCircuitBreaker.isHardCallFailure(error) && this.tripOn(error) ? this.fatalError : undefined;
        },
        onRetry: (error, delayMs) => {
          retryReasons[error.code] = (retryReasons[error.code] ?? 0) + 1;
          this.emit({ type: 'retry', code: error.code, delayMs });
        },
      },
    );
    if (fatal && result.error) this.fatalError ??= result.error;
    return { ...result, cached: false, ...(result.retries > 0 ? { retryReasons } : {}) };
  }

  /**
   * One model call read by the caller: the stored reply when there is a usable one, else the call
   * through the one call loop (fleet claims, limiter, retries, breaker), asked again while its reply
   * is unusable and attempts remain; a usable reply is stored before it is handed back.
   */
  async callModel(call: ModelCall): Promise<ModelCallOutcome> {
    const judge = this.options.judge;
    if (!judge) throw new RubricateError('INTERNAL', 'callModel needs a model');
    const usage = emptyUsage();
    const key = requestKey(judge.provenance, call.templateVersion, call.request, call.sample);
    const store = this.options.store;
    const task = { item: call.item, criteria: [], request: call.request, templateVersion: call.templateVersion, sample: call.sample, decide: () => ({ verdicts: new Map(), errors: new Map() }) } satisfies JudgeTask;
    try {
      const stored = await store?.get(key);
      if (stored && !call.problem(stored)) {
        usage.cache_hits += 1;
        this.emit({ type: 'call', cached: true });
        return { reply: stored, key, cached: true, usage };
      }
    } catch (error) {
      return { error: toRubricateError(error, 'STORE_UNAVAILABLE'), key, cached: false, usage };
    }
    let attempts = 0;
    let error: RubricateError | undefined;
    while (attempts < this.calls.maxAttempts && !this.fatalError) {
      if (attempts > 0) usage.retries += 1;
      const result = await this.callOnceInFleet(task, this.calls.maxAttempts - attempts, key);
      attempts += Math.max(1, result.calls);
      usage.calls += result.calls;
      usage.retries += result.retries;
      try {
        if (!result.reply) return { error: afterAttempts(result.error ?? new RubricateError('INTERNAL', 'no reply and no error'), attempts), key, cached: false, usage };
        if (result.cached) {
          usage.cache_hits += 1;
          return { reply: result.reply, key, cached: true, usage };
        }
        addReplyUsage(usage, result.reply.usage);
        error = call.problem(result.reply);
        if (!error) {
          this.breaker.recordSuccess();
          const reply = { ...result.reply, answeredAt: new Date().toISOString() };
          await store?.put(key, reply);
          return { reply, key, cached: false, usage };
        }
        this.emit({ type: 'retry', code: error.code, delayMs: 0 });
      } catch (failure) {
        return { error: toRubricateError(failure, 'STORE_UNAVAILABLE'), key, cached: false, usage };
      } finally {
        if (result.claimed && sharesInFlight(store)) store.release(key).catch(() => undefined);
      }
    }
    return { error: afterAttempts(this.fatalError ?? error ?? new RubricateError('INTERNAL', 'no attempt was made'), attempts), key, cached: false, usage };
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

  /** Progress in criteria: only when some settled (a call whose criteria are all asked again counts none). */
  private emitSettled(count: number): void {
    if (count > 0) this.emit({ type: 'criteria', count });
  }
}

/** A call too big for the judge: its prompt or output budget overflowed, or every verdict was cut at the model's output limit. */
function didNotFit(outcome: { decision?: TaskDecision; error?: RubricateError }): boolean {
  if (outcome.error?.code === 'JUDGE_CONTEXT_OVERFLOW') return true;
  const errors = outcome.decision?.errors;
  return outcome.decision?.verdicts.size === 0 && errors !== undefined && errors.size > 0 && [...errors.values()].every((error) => error.code === 'JUDGE_OUTPUT_LIMIT');
}

/** The conditions of a task's conditional criteria, for its cache key (undefined when none is conditional). */
function conditionsOf(criteria: readonly Criterion[]): string | undefined {
  if (!criteria.some((criterion) => criterion.when)) return undefined;
  return JSON.stringify(criteria.map((criterion) => criterion.when ?? null));
}

function withAttempts(error: RubricateError, attempts: number): SerializedError {
  return afterAttempts(error, attempts).toJSON();
}

/** A verdict with the model the provider says answered, kept when it is not the model the judge asked for. */
function withResolvedModel(verdict: CriterionVerdict, replyModel: string | undefined, askedModel: string): CriterionVerdict {
  return replyModel === undefined || replyModel === askedModel ? verdict : { ...verdict, judgeModel: replyModel };
}

/** A verdict with the tool calls an agentic judge made before it. */
function withToolCalls(verdict: CriterionVerdict, reply: JudgeReply | undefined): CriterionVerdict {
  return reply?.toolCalls && reply.toolCalls.length > 0 ? { ...verdict, toolCalls: reply.toolCalls } : verdict;
}
