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
import { Queue, QueueEvents, Worker, type Job } from 'bullmq';
import { RubricateError, type ErrorCode } from '../errors.js';
import type { Grader } from '../pipeline/grader.js';
import type { ResultRecord } from '../results/results.js';
import type { ImportRecord, InvalidRecord } from '../rubric/records.js';
import type { Item } from '../rubric/schema.js';
import { describeRedisUrl, redisOptionsFromUrl } from '../store/redis-connection.js';
import { canonicalJson } from '../util/json.js';
import { sha256Hex } from '../util/hash.js';
import { mapInOrder } from '../util/ordered-stream.js';
import { parseRunSpec, type RunSpec } from '../spec/run-spec.js';

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
  // Connection trouble shows up as waiting (and resuming) or as failed jobs; an unheard 'error' would end the process.
  emitter.on('error', () => {});
}

export interface ProduceOptions {
  url: string;
  spec: RunSpec;
  /** Items per job (default 20). */
  chunkSize?: number;
  /** Chunks queued but not yet written (default 64): memory stays bounded on any input size. */
  window?: number;
  /** Attempts per chunk when a worker fails it (its items' own errors are results, not failures). */
  attempts?: number;
  signal?: AbortSignal;
}

/** The producer: yields result records in input order as workers complete the chunks. */
export async function* gradeThroughQueue(records: AsyncIterable<ImportRecord>, options: ProduceOptions): AsyncGenerator<ResultRecord> {
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
  // Jobs in submission order; those past `written` are queued or running, not yet written.
  const submitted: string[] = [];
  let written = 0;
  try {
    try {
      await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
    } catch (error) {
      throw new RubricateError('STORE_UNAVAILABLE', `cannot reach the queue at ${describeRedisUrl(options.url)}: ${(error as Error).message}`, { field: 'queue' }, { cause: error });
    }
    // Each chunk is added to the queue before the next record is read (in order, so job ids follow the input).
    async function* jobs(): AsyncGenerator<Job<ChunkJob, ChunkResult>> {
      let chunk: WireRecord[] = [];
      const submit = async (recordsOfChunk: WireRecord[]) => {
        const index = submitted.length;
        const job = await queue.add(
          'chunk',
          { runId, chunk: index, spec: options.spec, records: recordsOfChunk },
          { jobId: `${runId}-${index}`, attempts: Math.max(1, options.attempts ?? 3), backoff: { type: 'fixed', delay: 1_000 }, removeOnComplete: { age: 3_600 }, removeOnFail: { age: 24 * 3_600 } },
        );
        submitted.push(job.id!);
        return job;
      };
      for await (const record of records) {
        if (options.signal?.aborted) return;
        chunk.push(toWire(record));
        if (chunk.length >= chunkSize) {
          yield await submit(chunk);
          chunk = [];
        }
      }
      if (chunk.length > 0 && !options.signal?.aborted) yield await submit(chunk);
    }
    const finished = (job: Job<ChunkJob, ChunkResult>) =>
      (job.waitUntilFinished(events) as Promise<ChunkResult>).catch((reason: unknown) => {
        throw new RubricateError('INTERNAL', `chunk ${job.data.chunk} of the run failed on the workers: ${reason instanceof Error ? reason.message : String(reason)}`, { runId });
      });
    for await (const result of mapInOrder(jobs(), finished, { window })) {
      written += 1;
      yield* result.results;
    }
  } finally {
    if (submitted.length > written) {
      // Stopped early: take this run's waiting chunks off the queue so workers do not grade them for nobody.
      await Promise.allSettled(submitted.slice(written).map((id) => queue.remove(id)));
    }
    await Promise.allSettled([events.close(), queue.close()]);
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
  signal?: AbortSignal;
  onChunk?: (event: { runId: string; chunk: number; items: number }) => void;
}

/** A worker: grades chunks until told to stop (or, with exitWhenIdle, until the queue is empty everywhere). */
export async function runGradingWorker(options: WorkerOptions): Promise<{ chunks: number; items: number }> {
  const connection = connectionFor(options.url);
  const graders = new Map<string, Promise<{ grader: Grader; close(): Promise<void> }>>();
  const leaseMs = options.leaseMs ?? 30_000;
  let chunks = 0;
  let items = 0;
  const graderFor = (spec: RunSpec) => {
    const key = sha256Hex(canonicalJson(spec));
    let built = graders.get(key);
    if (!built) {
      built = options.createGrader(spec);
      graders.set(key, built);
      built.catch(() => graders.delete(key));
    }
    return built;
  };
  const worker = new Worker<ChunkJob, ChunkResult>(
    gradingQueueName,
    async (job: Job<ChunkJob, ChunkResult>) => {
      // The spec is validated with the schema the producer wrote it with: a field added there reaches every worker.
      const { grader } = await graderFor(parseRunSpec(job.data.spec, `run spec of chunk ${job.data.chunk}`));
      const results: ResultRecord[] = [];
      async function* input(): AsyncGenerator<ImportRecord> {
        for (const record of job.data.records) yield fromWire(record);
      }
      for await (const result of grader.gradeStream(input())) results.push(result);
      chunks += 1;
      items += results.length;
      options.onChunk?.({ runId: job.data.runId, chunk: job.data.chunk, items: results.length });
      return { results };
    },
    {
      connection,
      prefix: queuePrefix,
      concurrency: Math.max(1, options.chunkConcurrency ?? 4),
      lockDuration: leaseMs,
      stalledInterval: Math.max(500, Math.round(leaseMs / 2)),
      maxStalledCount: 5,
      autorun: false,
    },
  );
  silence(worker);
  const queue = new Queue(gradingQueueName, { connection, prefix: queuePrefix });
  silence(queue);
  try {
    await Promise.all([worker.waitUntilReady(), queue.waitUntilReady()]);
  } catch (error) {
    await Promise.allSettled([worker.close(true), queue.close()]);
    throw new RubricateError('STORE_UNAVAILABLE', `cannot reach the queue at ${describeRedisUrl(options.url)}: ${(error as Error).message}`, { field: 'queue' }, { cause: error });
  }
  const stopped = new Promise<void>((resolve) => {
    const stop = () => resolve();
    options.signal?.addEventListener('abort', stop, { once: true });
    if (options.exitWhenIdle) {
      // Idle means nothing waiting, delayed or being graded by anyone: a dead worker's chunk
      // is still "active" until its lease runs out, and must be taken over before we leave.
      // A worker may start before its producer: with nothing done yet it waits up to idleStartMs for work.
      const startedAt = Date.now();
      const poll = setInterval(async () => {
        try {
          const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
          const empty = Object.values(counts).every((count) => count === 0);
          if (empty && (chunks > 0 || Date.now() - startedAt >= (options.idleStartMs ?? 30_000))) {
            clearInterval(poll);
            resolve();
          }
        } catch {
          // Redis away for a moment: ask again next time.
        }
      }, 250);
      options.signal?.addEventListener('abort', () => clearInterval(poll), { once: true });
    }
  });
  const running = worker.run();
  await stopped;
  await worker.close();
  await running.catch(() => undefined);
  await queue.close();
  for (const built of graders.values()) await (await built.catch(() => undefined))?.close();
  return { chunks, items };
}
