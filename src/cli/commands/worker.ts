import type { Command } from 'commander';
import { exitCodes } from '../../errors.js';
import { endpointRefusal, ownEndpoints } from '../../queue/endpoint-allow-list.js';
import { quietHelp, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { addDrainTimeoutOption, drainSignal, type DrainFlags } from '../interrupt.js';
import { addQueueTimeoutOption } from '../queue-options.js';
import { parsePositiveInteger } from '../run-spec-flags.js';
import { openRunSession } from '../session.js';

interface WorkerFlags extends DrainFlags {
  queue: string;
  concurrency: number;
  exitWhenIdle?: boolean;
  store?: string;
  judgeApiKey?: string;
  /** Judge endpoints this worker calls (with its key); absent: the one it is configured for. */
  allowEndpoint?: string[];
  lease: number;
  queueTimeout: number;
  quiet?: boolean;
}

/**
 * `rubricate worker`: grades chunks queued by `rubricate grade --queue` on this machine.
 * How to grade comes with each chunk (judge, mode, sampling…); the API key and the reply
 * store are the worker's own (the store defaults to the queue's Redis, so every worker
 * shares one cache and a retried chunk repeats no paid call), and so is the list of judge
 * endpoints it sends that key to.
 */
export function registerWorkerCommand(program: Command, context: CommandContext): void {
  const command = organizeHelp(
    program
      .command('worker')
      .description('grade chunks queued by `rubricate grade --queue` (run any number, on any machines)')
      .requiredOption('--queue <url>', 'the Redis/Valkey queue: redis://… or rediss://…')
      .option('--concurrency <n>', 'judge calls in flight in this worker', parsePositiveInteger('concurrency'), 16)
      .option('--exit-when-idle', 'exit once no chunk is waiting or being graded anywhere')
      .option('--store <url>', 'reply store (default: the queue\'s Redis)')
      .option('--judge-api-key <key>', 'API key (default: OPENAI_API_KEY, AZURE_OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY by judge)')
      .option(
        '--allow-endpoint <url>',
        'a judge endpoint (base URL; paths below it included) this worker may call with its key; repeatable. Default: the endpoint it is configured for (OPENAI_BASE_URL, ANTHROPIC_BASE_URL, AZURE_OPENAI_ENDPOINT, else the provider\'s official URL). Chunks naming another are refused',
        (value: string, previous: string[] | undefined) => [...(previous ?? []), value],
      )
      .option('--lease <seconds>', 'a chunk held by a worker that stopped answering goes to another after this', (value: string) => Number(value), 30)
      .option('--quiet', quietHelp),
    [
      'rubricate worker --queue redis://127.0.0.1:6379 --exit-when-idle',
      'OPENAI_API_KEY=… rubricate worker --queue redis://cache:6379 --allow-endpoint https://api.openai.com/v1 --concurrency 64',
    ],
  );
  addQueueTimeoutOption(command);
  addDrainTimeoutOption(command);
  command.action(async (flags: WorkerFlags) => {
    context.exitCode = await runWorker(flags, context);
  });
}

async function runWorker(flags: WorkerFlags, context: CommandContext): Promise<number> {
  const cancel = drainSignal(context.signal, flags);
  // Loaded when a worker starts: `worker --help` and a refused command line skip BullMQ and the grader.
  const [{ runGradingWorker }, { Grader }] = await Promise.all([import('../../queue/grading-queue.js'), import('../../pipeline/grader.js')]);
  const outcome = await runGradingWorker({
    url: flags.queue,
    exitWhenIdle: flags.exitWhenIdle,
    leaseMs: Math.max(1, flags.lease) * 1000,
    chunkConcurrency: Math.max(2, Math.ceil(flags.concurrency / 4)),
    // First Ctrl-C: no new chunk; chunks in hand get --drain-timeout, then go back to the queue.
    signal: context.signal,
    cancelSignal: cancel,
    reconnectWindowMs: flags.queueTimeout * 1000,
    onNotice: (message) => context.stderr(`worker: ${message}`),
    onChunk: flags.quiet ? undefined : (event) => context.stderr(`worker: graded chunk ${event.chunk} of run ${event.runId} (${event.items} items)`),
    createGrader: async (spec) => {
      // The run's spec as the producer sent it; the concurrency, the key and the store are this worker's own.
      const credentials = flags.judgeApiKey === undefined ? {} : { apiKey: flags.judgeApiKey };
      const session = await openRunSession({ ...spec, calls: { ...spec.calls, concurrency: flags.concurrency } }, credentials, { store: flags.store ?? flags.queue }, { context });
      const refusal = endpointRefusal(session.judges, flags.allowEndpoint ?? (await ownEndpoints(session.judges, credentials)));
      if (refusal) {
        // Nothing goes to that endpoint: its criteria come back in error, with the reason, in the producer's results.
        await session.close();
        context.stderr(`worker: ${refusal.message}`);
        const { judges: _judges, store: _store, ...settings } = session.graderOptions();
        return { grader: new Grader({ ...settings, noJudgeError: refusal, signal: cancel }), close: async () => {} };
      }
      const grader = new Grader({ ...session.graderOptions(), signal: cancel });
      return { grader, close: () => session.close() };
    },
  });
  if (!flags.quiet) context.stderr(`worker: ${outcome.chunks} chunks, ${outcome.items} items graded`);
  return exitCodes.success;
}
