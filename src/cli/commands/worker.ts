import type { Command } from 'commander';
import { exitCodes } from '../../errors.js';
import { Grader } from '../../pipeline/grader.js';
import { runGradingWorker } from '../../queue/grading-queue.js';
import { quietHelp, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { parsePositiveInteger } from '../run-spec-flags.js';
import { openRunSession } from '../session.js';

interface WorkerFlags {
  queue: string;
  concurrency: number;
  exitWhenIdle?: boolean;
  store?: string;
  judgeApiKey?: string;
  lease: number;
  quiet?: boolean;
}

/**
 * `rubricate worker`: grades chunks queued by `rubricate grade --queue` on this machine.
 * How to grade comes with each chunk (judge, mode, sampling…); the API key and the reply
 * store are the worker's own (the store defaults to the queue's Redis, so every worker
 * shares one cache and a retried chunk repeats no paid call).
 */
export function registerWorkerCommand(program: Command, context: CommandContext): void {
  organizeHelp(
    program
      .command('worker')
      .description('grade chunks queued by `rubricate grade --queue` (run any number, on any machines)')
      .requiredOption('--queue <url>', 'the Redis/Valkey queue: redis://… or rediss://…')
      .option('--concurrency <n>', 'judge calls in flight in this worker', parsePositiveInteger('concurrency'), 16)
      .option('--exit-when-idle', 'exit once no chunk is waiting or being graded anywhere')
      .option('--store <url>', 'reply store (default: the queue\'s Redis)')
      .option('--judge-api-key <key>', 'API key (default: OPENAI_API_KEY)')
      .option('--lease <seconds>', 'a chunk held by a worker that stopped answering goes to another after this', (value: string) => Number(value), 30)
      .option('--quiet', quietHelp),
    [
      'rubricate worker --queue redis://127.0.0.1:6379 --exit-when-idle',
      'OPENAI_API_KEY=… rubricate worker --queue redis://cache:6379 --concurrency 64',
    ],
  )
    .action(async (flags: WorkerFlags) => {
      context.exitCode = await runWorker(flags, context);
    });
}

async function runWorker(flags: WorkerFlags, context: CommandContext): Promise<number> {
  const outcome = await runGradingWorker({
    url: flags.queue,
    exitWhenIdle: flags.exitWhenIdle,
    leaseMs: Math.max(1, flags.lease) * 1000,
    chunkConcurrency: Math.max(2, Math.ceil(flags.concurrency / 4)),
    signal: context.signal,
    onChunk: flags.quiet ? undefined : (event) => context.stderr(`worker: graded chunk ${event.chunk} of run ${event.runId} (${event.items} items)`),
    createGrader: async (spec) => {
      // The run's spec as the producer sent it; the concurrency, the key and the store are this worker's own.
      const session = await openRunSession({ ...spec, calls: { ...spec.calls, concurrency: flags.concurrency } }, flags.judgeApiKey === undefined ? {} : { apiKey: flags.judgeApiKey }, { store: flags.store ?? flags.queue }, { context });
      const grader = new Grader({ ...session.graderOptions(), signal: context.signal });
      return { grader, close: () => session.close() };
    },
  });
  if (!flags.quiet) context.stderr(`worker: ${outcome.chunks} chunks, ${outcome.items} items graded`);
  return exitCodes.success;
}
