/** Flags and helpers for distributed grading: `grade --queue` and `grade --shard` (workers receive the run spec whole). */
import type { Command } from 'commander';
import { RubricateError } from '../errors.js';
import type { ImportRecord } from '../rubric/records.js';
import { isRedisUrl } from '../store/index.js';
import { parseNumber } from './run-spec-flags.js';
import { defaultQueueReconnectWindowMs } from '../queue/queue-watch.js';

export interface QueueFlags {
  queue?: string;
  chunkSize?: number;
  shard?: { index: number; count: number };
  /** Seconds a lost queue may take to come back. */
  queueTimeout: number;
}

/** `--queue-timeout`, on `grade` and `worker`: the bound on waiting for a queue that went away. */
export function addQueueTimeoutOption(command: Command): Command {
  return command.option(
    '--queue-timeout <seconds>',
    'how long to wait for the queue\'s Redis when it cannot be reached (5 s at most at start-up) before stopping with STORE_UNAVAILABLE (exit 4)',
    parseNumber('queue-timeout', 0.001),
    defaultQueueReconnectWindowMs / 1000,
  );
}

function parseShard(value: string): { index: number; count: number } {
  const match = /^(\d+)\/(\d+)$/.exec(value.trim());
  const index = Number(match?.[1]);
  const count = Number(match?.[2]);
  if (!match || count < 1 || index >= count) throw new RubricateError('CONFIG_INVALID', `--shard is I/N with 0 ≤ I < N (e.g. 0/4 for the first of four), got "${value}"`, { field: 'shard' });
  return { index, count };
}

function parseQueueUrl(value: string): string {
  if (!isRedisUrl(value)) throw new RubricateError('CONFIG_INVALID', `--queue takes a Redis URL (redis://… or rediss://…)`, { field: 'queue' });
  return value;
}

export function addQueueOptions(command: Command): Command {
  command
    .option('--queue <url>', 'grade on `rubricate worker` processes through this Redis/Valkey queue (redis://… or rediss://…), writing results here in input order')
    .option('--chunk-size <n>', 'with --queue: items per queued job', (value: string) => {
      const number = Number(value);
      if (!Number.isInteger(number) || number < 1) throw new RubricateError('CONFIG_INVALID', `--chunk-size must be a positive integer, got "${value}"`, { field: 'chunk-size' });
      return number;
    }, 20)
    .option('--shard <i/n>', 'grade only records I, I+N, I+2N… of the input (0-based; for array jobs), then join the outputs with `rubricate merge`', parseShard)
    .hook('preAction', (_command, action) => {
      const options = action.opts() as { queue?: string };
      if (options.queue !== undefined) parseQueueUrl(options.queue);
      else if (action.getOptionValueSource('queueTimeout') === 'cli') throw new RubricateError('CONFIG_INVALID', '--queue-timeout applies to a run with --queue', { field: 'queue-timeout' });
    });
  return addQueueTimeoutOption(command);
}

/** Every N-th record of the input, starting at I (invalid records count, so shards partition the lines). */
export async function* shardOf<T = ImportRecord>(records: AsyncIterable<T>, shard: QueueFlags['shard']): AsyncGenerator<T> {
  let ordinal = 0;
  for await (const record of records) {
    if (!shard || ordinal % shard.count === shard.index) yield record;
    ordinal += 1;
  }
}
