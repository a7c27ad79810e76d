import type { Command } from 'commander';
import { exitCodes } from '../../errors.js';
import { checkRunnerFor } from '../../pipeline/check-runner.js';
import { Grader } from '../../pipeline/grader.js';
import { runGradingWorker } from '../../queue/grading-queue.js';
import type { CommandContext } from '../context.js';
import { buildJudges, graderOptionsFrom, openStore, parsePositiveInteger, type JudgeFlags } from '../judge-options.js';
import { judgeFlagsFromSpec } from '../queue-options.js';

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
  program
    .command('worker')
    .description('grade chunks queued by `rubricate grade --queue` (run any number, on any machines)')
    .requiredOption('--queue <url>', 'the Redis/Valkey queue: redis://… or rediss://…')
    .option('--concurrency <n>', 'judge calls in flight in this worker', parsePositiveInteger('concurrency'), 16)
    .option('--exit-when-idle', 'exit once no chunk is waiting or being graded anywhere')
    .option('--store <url>', 'reply store (default: the queue\'s Redis)')
    .option('--judge-api-key <key>', 'API key (default: OPENAI_API_KEY)')
    .option('--lease <seconds>', 'a chunk held by a worker that stopped answering goes to another after this', (value: string) => Number(value), 30)
    .option('--quiet', 'no per-chunk log lines')
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
      const settings = judgeFlagsFromSpec(spec);
      const judgeFlags = { ...settings, concurrency: flags.concurrency, judgeApiKey: flags.judgeApiKey, store: flags.store ?? flags.queue, lease: flags.lease } as JudgeFlags;
      const judges = await buildJudges(judgeFlags);
      const opened = await openStore(judgeFlags, undefined);
      const grader = new Grader({
        judges,
        store: opened.store,
        checkRunner: checkRunnerFor(),
        checkMode: settings.checkMode,
        scoring: settings.scoring,
        omitText: settings.omitText,
        signal: context.signal,
        ...graderOptionsFrom(judgeFlags),
      });
      return {
        grader,
        close: async () => {
          await opened.close();
          for (const judge of judges) await judge.close?.();
        },
      };
    },
  });
  context.stderr(`worker: ${outcome.chunks} chunks, ${outcome.items} items graded`);
  return exitCodes.success;
}
