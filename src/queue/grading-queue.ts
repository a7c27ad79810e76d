/**
 * Distributed grading on BullMQ. A producer (`rubricate grade --queue redis://…`) cuts the
 * input into chunks of items and puts them on one queue; workers (`rubricate worker`) on
 * any number of machines take chunks, grade them with the same Grader a single process
 * uses, and return the result records. The producer writes them in input order as they
 * complete, so the results file is the one a single process would have written.
 *
 * A killed worker's chunk is taken over by another once its lock (the lease) expires;
 * replies it had stored are read from the shared store, so no paid call is repeated.
 */
import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents, WaitingError, Worker, type Job } from 'bullmq';
import { RubricateError, type ErrorCode } from '../errors.js';
import type { Grader } from '../pipeline/grader.js';
import { groupSettingsOf, groupTooLarge, recordGroupKey } from '../pipeline/group-grading.js';
import type { ResultRecord } from '../results/results.js';
import type { ImportRecord, InvalidRecord } from '../rubric/records.js';
import type { Item } from '../rubric/schema.js';
import { redisOptionsFromUrl } from '../store/redis-connection.js';
import { canonicalJson } from '../util/json.js';
import { sha256Hex } from '../util/hash.js';
import { mapInOrder } from '../util/ordered-stream.js';
import { parseRunSpec, type RunSpec } from '../spec/run-spec.js';
import { QueueWatch } from './queue-watch.js';
import { noteDroppedRedisConnection } from '../store/dropped-connections.js';

export const gradingQueueName = 'grade';
const queuePrefix = 'rubricate';


type WireRecord =
  | { kind: 'item'; item: Item; line: number }
  | (Omit<InvalidRecord, 'error'> & { error: { code: ErrorCode; message: string; details: Record<string, unknown> } });

interface ChunkJob {
  runId: string;
  chunk: number;
  spec: RunSpec;
  records: WireRecord[];
}

interface ChunkResult {
  results: ResultRecord[];
}

function toWire(record: ImportRecord): WireRecord {
  if (record.kind === 'item') return record;
  return { kind: 'invalid', error: { code: record.error.code, message: record.error.message, details: record.error.details }, line: record.line, ...(record.id !== undefined ? { id: record.id } : {}) };
}

function fromWire(record: WireRecord): ImportRecord {
  if (record.kind === 'item') return record;
  return { kind: 'invalid', error: new RubricateError(record.error.code, record.error.message, record.error.details), line: record.line, ...(record.id !== undefined ? { id: record.id } : {}) };
}

function connectionFor(url: string) {
  return redisOptionsFromUrl(url, { maxRetriesPerRequest: null, connectionName: 'rubricate-queue' });
}

function silence(emitter: { on(event: 'error', listener: (error: Error) => void): unknown }): void {
  // Connection trouble is the QueueWatch's to report; an unheard 'error' would end the process.
  emitter.on('error', () => {});
}

/** Longest wait for BullMQ to close its connections (or take chunks back) on the way out. */
const closeBoundMs = 2_000;

function within<T>(promise: Promise<T>, milliseconds: number): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), milliseconds);
    timer.unref();
  });
  return Promise.race([promise, bound]).finally(() => clearTimeout(timer));
}

/**
 * Closes BullMQ's queues, events and workers: politely while the queue answers, by dropping
 * their connections when it does not (a close would wait for the reconnection), never for long.
 */
async function closeAll(closables: ReadonlyArray<{ close(force?: boolean): Promise<void>; disconnect(): Promise<void> }>, reachable: boolean): Promise<void> {
  // A forced close also stops a worker's timers (lock renewal, stalled checks), which would keep the process alive.
  const closed = await within(Promise.allSettled(closables.map((closable) => closable.close(!reachable))), closeBoundMs);
  if (closed === undefined || !reachable) noteDroppedRedisConnection();
  if (closed === undefined || !reachable) await within(Promise.allSettled(closables.map((closable) => closable.disconnect())), closeBoundMs);
}

/** Resolves when `signal` aborts (never without one). */
function whenAborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) resolve();
    else signal?.addEventListener('abort', () => resolve(), { once: true });
  });
}

/** Chunk states in which no worker holds the chunk: it can be taken back off the queue. */
const unclaimedStates = new Set(['waiting', 'delayed', 'prioritized', 'waiting-children']);

export interface ProduceOptions {
  url: string;
  spec: RunSpec;
  /** Items per job (default 20). */
  chunkSize?: number;
  /** Chunks queued but not yet written (default 64): memory stays bounded on any input size. */
  window?: number;
  /** Attempts per chunk when a worker fails it (its items' own errors are results, not failures). */
  attempts?: number;
  /**
   * The stop (first Ctrl-C): no more chunks are queued, this run's chunks that no worker has
   * taken are taken back off the queue, and results end before the first of them.
   */
  signal?: AbortSignal;
  /** After the stop (`--drain-timeout`): chunks still being graded are no longer waited for. */
  cancelSignal?: AbortSignal;
  /** How long a lost queue may take to come back before the run fails with STORE_UNAVAILABLE (default 30 s). */
  reconnectWindowMs?: number;
  /** The queue was lost, or is back (messages without credentials). */
  onNotice?: (message: string) => void;
}

/**
 * Each record's group key, in order, passed through; throws LIMIT_EXCEEDED once one group has
 * more records than the bound. A group is one chunk: one over the bound would be a chunk of any
 * size, so the run stops before it is sent.
 */
function groupLengthGuard(maxGroupSize: number): (key: string | undefined) => string | undefined {
  let last: string | undefined;
  let length = 0;
  return (key) => {
    length = key !== undefined && key === last ? length + 1 : 1;
    last = key;
    if (length > maxGroupSize) throw groupTooLarge(maxGroupSize);
    return key;
  };
}

/** The producer: yields result records in input order as workers complete the chunks. */
export async function* gradeThroughQueue(records: AsyncIterable<ImportRecord>, options: ProduceOptions): AsyncGenerator<ResultRecord> {
  const watch = new QueueWatch(options.url, { reconnectWindowMs: options.reconnectWindowMs, onLost: options.onNotice, onBack: options.onNotice });
  await watch.start();
  const connection = connectionFor(options.url);
  const queue = new Queue<ChunkJob, ChunkResult>(gradingQueueName, { connection, prefix: queuePrefix });
  const events = new QueueEvents(gradingQueueName, { connection, prefix: queuePrefix });
  silence(queue);
  silence(events);
  const runId = randomUUID();
  const chunkSize = Math.max(1, options.chunkSize ?? 20);
  const window = Math.max(1, options.window ?? 64);
  // Each chunk awaited (`waitUntilFinished`) listens on the queue and its events until it ends: up to
  // `window` listeners at once, not a leak, so Node's warning threshold is raised to that.
  queue.setMaxListeners(window + 10);
  events.setMaxListeners(window + 10);
  const stopped = whenAborted(options.signal);
  const cancelled = whenAborted(options.cancelSignal);
  // Jobs in submission order; those past `written` are queued or running, not yet written.
  const submitted: string[] = [];
  let written = 0;
  try {
    await watch.guard(Promise.all([queue.waitUntilReady(), events.waitUntilReady()]));
    // Each chunk is added to the queue before the next record is read (in order, so job ids follow the input).
    async function* jobs(): AsyncGenerator<Job<ChunkJob, ChunkResult>> {
      let chunk: WireRecord[] = [];
      const submit = async (recordsOfChunk: WireRecord[]) => {
        const index = submitted.length;
        const job = await watch.guard(
          queue.add(
            'chunk',
            { runId, chunk: index, spec: options.spec, records: recordsOfChunk },
            { jobId: `${runId}-${index}`, attempts: Math.max(1, options.attempts ?? 3), backoff: { type: 'fixed', delay: 1_000 }, removeOnComplete: { age: 3_600 }, removeOnFail: { age: 24 * 3_600 } },
          ),
        );
        submitted.push(job.id!);
        return job;
      };
      // Listwise and tournament groups stay whole: a full chunk is cut only where the next record starts another group.
      const groups = groupSettingsOf(options.spec.plan, options.spec.limits);
      const bounded = groups ? groupLengthGuard(groups.maxGroupSize) : undefined;
      let lastKey: string | undefined;
      for await (const record of records) {
        if (options.signal?.aborted) return;
        const key = groups ? bounded!(recordGroupKey(record, groups.groupBy)) : undefined;
        if (chunk.length >= chunkSize && (key === undefined || key !== lastKey)) {
          yield await submit(chunk);
          chunk = [];
        }
        chunk.push(toWire(record));
        lastKey = key;
      }
      if (chunk.length > 0 && !options.signal?.aborted) yield await submit(chunk);
    }
    // What a chunk comes to: its results, or `undefined` when it was taken back or given up on after a stop.
    const finished = async (job: Job<ChunkJob, ChunkResult>): Promise<ChunkResult | undefined> => {
      const done = (job.waitUntilFinished(events) as Promise<ChunkResult>).catch((reason: unknown) => {
        throw new RubricateError('INTERNAL', `chunk ${job.data.chunk} of the run failed on the workers: ${reason instanceof Error ? reason.message : String(reason)}`, { runId });
      });
      const early = await watch.guard(Promise.race([done, stopped.then(() => 'stopped' as const)]));
      if (early !== 'stopped') return early;
      const takenBack = async () => unclaimedStates.has(await job.getState()) && (await queue.remove(job.id!)) === 1;
      if (await watch.guard(Promise.race([takenBack(), cancelled.then(() => true)]))) return undefined;
      // A worker has it: it may still land within the drain timeout.
      return watch.guard(Promise.race([done, cancelled.then(() => undefined)]));
    };
    for await (const result of mapInOrder(jobs(), finished, { window })) {
      // Results stay in input order: they end before the first chunk that was not graded.
      if (!result) return;
      written += 1;
      yield* result.results;
    }
  } finally {
    if (submitted.length > written && watch.reachable) {
      // Stopped early: take this run's waiting chunks off the queue so workers do not grade them for nobody.
      await within(Promise.allSettled(submitted.slice(written).map((id) => queue.remove(id))), closeBoundMs);
    }
    await closeAll([events, queue], watch.reachable);
    await watch.close();
  }
}

export interface WorkerOptions {
  url: string;
  /** Builds the grader for a run's spec (its judges, store and settings); called once per distinct spec. */
  createGrader: (spec: RunSpec) => Promise<{ grader: Grader; close(): Promise<void> }>;
  /** Chunks graded at once (their judge calls share the grader's concurrency). */
  chunkConcurrency?: number;
  /** How long a chunk stays with a worker that stopped answering before another takes it (default 30 s). */
  leaseMs?: number;
  /** Stop once no chunk is waiting or being graded anywhere (after at least one chunk, or idleStartMs without any). */
  exitWhenIdle?: boolean;
  idleStartMs?: number;
  /** The stop: no new chunk is taken; chunks in hand are finished. */
  signal?: AbortSignal;
  /**
   * Aborted once the graders' calls have been cancelled (after `--drain-timeout`): a chunk
   * finished after it goes back to the queue whole, for another worker, instead of as errors.
   */
  cancelSignal?: AbortSignal;
  /** How long a lost queue may take to come back before the worker fails with STORE_UNAVAILABLE (default 30 s). */
  reconnectWindowMs?: number;
  /** The queue was lost, or is back (messages without credentials). */
  onNotice?: (message: string) => void;
  onChunk?: (event: { runId: string; chunk: number; items: number }) => void;
}

/** A worker: grades chunks until told to stop (or, with exitWhenIdle, until the queue is empty everywhere). */
export async function runGradingWorker(options: WorkerOptions): Promise<{ chunks: number; items: number }> {
  const watch = new QueueWatch(options.url, { reconnectWindowMs: options.reconnectWindowMs, onLost: options.onNotice, onBack: options.onNotice });
  await watch.start();
  const connection = connectionFor(options.url);
  const state: WorkerState = { options, watch, graders: new Map(), chunks: 0, items: 0, failure: undefined };
  const worker = createChunkWorker(state, connection);
  silence(worker);
  const queue = new Queue(gradingQueueName, { connection, prefix: queuePrefix });
  silence(queue);
  const abandon = (error: unknown) => abandonWorker(state, [worker, queue], error);
  try {
    await watch.guard(Promise.all([worker.waitUntilReady(), queue.waitUntilReady()]));
  } catch (error) {
    return abandon(error);
  }
  const stopped = whenToStop(state, queue);
  const running = worker.run();
  running.catch(() => undefined);
  await stopped;
  if (state.failure !== undefined) return abandon(state.failure);
  try {
    // Chunks in hand are finished (or handed back) before the worker leaves.
    await watch.guard(worker.close());
  } catch (error) {
    return abandon(error);
  }
  await running.catch(() => undefined);
  await closeAll([queue], watch.reachable);
  await closeGraders(state);
  await watch.close();
  return { chunks: state.chunks, items: state.items };
}

type BuiltGrader = { grader: Grader; close(): Promise<void> };

/** A worker as it runs: its graders by run spec, what it has graded, and the queue failure that stopped it, if one did. */
interface WorkerState {
  options: WorkerOptions;
  watch: QueueWatch;
  /** One grader per distinct run spec, keyed by the spec's canonical hash (a failed build is forgotten, to be tried again). */
  graders: Map<string, Promise<BuiltGrader>>;
  chunks: number;
  items: number;
  failure: unknown;
}

function graderFor(state: WorkerState, spec: RunSpec): Promise<BuiltGrader> {
  const key = sha256Hex(canonicalJson(spec));
  let built = state.graders.get(key);
  if (!built) {
    built = state.options.createGrader(spec);
    state.graders.set(key, built);
    built.catch(() => state.graders.delete(key));
  }
  return built;
}

/** The BullMQ worker, not yet running: chunks leased for `leaseMs`, taken over from a worker silent for longer. */
function createChunkWorker(state: WorkerState, connection: ReturnType<typeof connectionFor>): Worker<ChunkJob, ChunkResult> {
  const leaseMs = state.options.leaseMs ?? 30_000;
  return new Worker<ChunkJob, ChunkResult>(gradingQueueName, (job: Job<ChunkJob, ChunkResult>, token?: string) => gradeChunk(state, job, token), {
    connection,
    prefix: queuePrefix,
    concurrency: Math.max(1, state.options.chunkConcurrency ?? 4),
    lockDuration: leaseMs,
    stalledInterval: Math.max(500, Math.round(leaseMs / 2)),
    maxStalledCount: 5,
    autorun: false,
  });
}

/** One chunk graded whole with its run's grader; a chunk whose calls were cancelled goes back to the queue. */
async function gradeChunk(state: WorkerState, job: Job<ChunkJob, ChunkResult>, token?: string): Promise<ChunkResult> {
  const { options } = state;
  // The spec is validated with the schema the producer wrote it with: a field added there reaches every worker.
  const { grader } = await graderFor(state, parseRunSpec(job.data.spec, `run spec of chunk ${job.data.chunk}`));
  const results: ResultRecord[] = [];
  async function* input(): AsyncGenerator<ImportRecord> {
    for (const record of job.data.records) yield fromWire(record);
  }
  for await (const result of grader.gradeStream(input())) results.push(result);
  if (options.cancelSignal?.aborted) {
    // Its calls were cancelled: the chunk goes back for another worker (replies stored so far are reused), not out as errors.
    await job.moveToWait(token);
    throw new WaitingError();
  }
  state.chunks += 1;
  state.items += results.length;
  options.onChunk?.({ runId: job.data.runId, chunk: job.data.chunk, items: results.length });
  return { results };
}

async function closeGraders(state: WorkerState): Promise<void> {
  const closing = Promise.allSettled([...state.graders.values()].map(async (built) => (await built.catch(() => undefined))?.close()));
  await within(closing, closeBoundMs);
}

/** Leaves without waiting on a queue that is gone: connections dropped, the error thrown. */
async function abandonWorker(state: WorkerState, connections: Array<Worker<ChunkJob, ChunkResult> | Queue>, error: unknown): Promise<never> {
  await closeAll(connections, false);
  await closeGraders(state);
  await state.watch.close();
  throw error;
}

/** Resolves at the stop, when the queue is lost for good (kept as the state's failure), or with exitWhenIdle once the queue is idle. */
function whenToStop(state: WorkerState, queue: Queue): Promise<void> {
  const { options, watch } = state;
  return new Promise<void>((resolve) => {
    const stop = () => resolve();
    options.signal?.addEventListener('abort', stop, { once: true });
    watch.failed.catch((error: unknown) => {
      state.failure = error;
      resolve();
    });
    if (options.exitWhenIdle) resolveWhenIdle(state, queue, resolve);
  });
}

/**
 * Idle means nothing waiting, delayed or being graded by anyone: a dead worker's chunk
 * is still "active" until its lease runs out, and must be taken over before we leave.
 * A worker may start before its producer: with nothing done yet it waits up to idleStartMs for work.
 */
function resolveWhenIdle(state: WorkerState, queue: Queue, resolve: () => void): void {
  const { options, watch } = state;
  const startedAt = Date.now();
  let asking = false;
  const poll = setInterval(async () => {
    if (asking) return;
    asking = true;
    try {
      const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
      const empty = Object.values(counts).every((count) => count === 0);
      if (empty && (state.chunks > 0 || Date.now() - startedAt >= (options.idleStartMs ?? 30_000))) {
        clearInterval(poll);
        resolve();
      }
    } catch {
      // Redis away for a moment: ask again next time (the watch gives up on it if it stays away).
    } finally {
      asking = false;
    }
  }, 250);
  const stopPolling = () => clearInterval(poll);
  options.signal?.addEventListener('abort', stopPolling, { once: true });
  watch.failed.catch(stopPolling);
}
