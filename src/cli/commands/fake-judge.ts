/**
 * `rubricate fake-judge`: the scripted judge (`scripted:…`) as an OpenAI-compatible endpoint on
 * loopback, with the OpenAI Batch API in front of it. Every documented command then runs as
 * written, with no key and no model (OPENAI_BASE_URL points at it), and a user's pipeline can
 * test its wiring against a real HTTP server. What it answers is labelled as made up, on stdout
 * and in every explanation it writes. On loopback it answers loopback Host names only; on any
 * other address it says on every start that a made-up judge is on the network. Request bodies
 * are bounded (413 beyond `--max-body-bytes`, never read whole).
 */
import { listenError } from '../../util/listen-error.js';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { exitCodes } from '../../errors.js';
import { parseScriptedVerdicts, scriptedReplyText, scriptedTokenProbabilities, scriptedVerdicts } from '../../judges/scripted.js';
import type { ChatMessage, OutputSchema } from '../../judges/types.js';
import { startFakeJudge, type FakeJudgeRequest } from '../../testing/fake-judge.js';
import { startFakeOpenAIBatch } from '../../testing/fake-openai-batch.js';
import { defaultFakeMaxBodyBytes } from '../../testing/request-bounds.js';
import { isLoopbackHostname } from '../../util/loopback-host.js';
import { parsePositiveInteger } from '../run-spec-flags.js';
import { organizeHelp } from '../help.js';
import type { CommandContext } from '../context.js';

interface FakeJudgeFlags {
  port: number;
  host: string;
  verdicts: string;
  maxBodyBytes: number;
}

function port(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535) throw new InvalidArgumentError('a port number from 0 to 65535');
  return number;
}

/** A chat-completions body as the scripted judge's request: its messages' text and its JSON schema. */
function asJudgeRequest(request: FakeJudgeRequest): { messages: ChatMessage[]; output?: OutputSchema } {
  const messages = request.messages.map((message) => ({
    role: message.role as ChatMessage['role'],
    content: Array.isArray(message.content) ? message.content.map((part: { text?: unknown }) => (typeof part?.text === 'string' ? part.text : '')).join('\n') : String(message.content),
  }));
  const format = request.body.response_format as { json_schema?: { name?: string; schema?: Record<string, unknown> } } | undefined;
  const schema = format?.json_schema?.schema;
  return schema ? { messages, output: { name: format?.json_schema?.name ?? 'reply', schema } } : { messages };
}

export function registerFakeJudgeCommand(program: Command, context: CommandContext): void {
  organizeHelp(
    program
      .command('fake-judge')
      .description('serve the scripted judge (no model: made-up replies, labelled as such) as an OpenAI-compatible endpoint on loopback, to try commands offline or test wiring')
      .option('--port <n>', 'port (0: a free one, printed)', port, 0)
      .option('--host <address>', 'address to listen on (beyond loopback, a warning on every start: made-up verdicts on the network)', '127.0.0.1')
      .option('--max-body-bytes <n>', `largest request body read; 413 beyond, the rest never read (default ${defaultFakeMaxBodyBytes})`, parsePositiveInteger('max-body-bytes'), defaultFakeMaxBodyBytes)
      .addOption(new Option('--verdicts <kind>', 'every criterion met, none, or each decided by a hash of its request').choices([...scriptedVerdicts]).default('mixed')),
    [
      'rubricate fake-judge --port 8765 &',
      'OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=scripted rubricate grade --input examples/items.jsonl --judge openai:gpt-4.1-mini --out scripted-results.jsonl',
    ],
  )
    .action(async (flags: FakeJudgeFlags) => {
      context.exitCode = await runFakeJudge(flags, context);
    });
}

async function runFakeJudge(flags: FakeJudgeFlags, context: CommandContext): Promise<number> {
  const verdicts = parseScriptedVerdicts(flags.verdicts);
  const chat = await startFakeJudge(
    (request) => {
      const content = scriptedReplyText(asJudgeRequest(request), verdicts);
      // Token probabilities in chat completions' shape, when asked for (`--verdict probability`).
      const logprobs = request.body.logprobs ? { content: scriptedTokenProbabilities(content).map(({ token, logprob, top }) => ({ token, logprob, top_logprobs: top })) } : undefined;
      return { content, ...(logprobs ? { logprobs } : {}) };
    },
    { keepRequests: false, maxBodyBytes: flags.maxBodyBytes },
  );
  // The Batch API (files, batches) in front of the chat endpoint, which it also serves: one URL for both.
  let front: Awaited<ReturnType<typeof startFakeOpenAIBatch>>;
  try {
    front = await startFakeOpenAIBatch({ backendBaseUrl: chat.baseUrl, listen: { port: flags.port, host: flags.host, maxBodyBytes: flags.maxBodyBytes } });
  } catch (error) {
    await chat.close();
    throw listenError(flags.host, flags.port, error as NodeJS.ErrnoException, 'the fake judge');
  }
  try {
    context.stdout(JSON.stringify({ event: 'listening', url: front.baseUrl, judge: `scripted:${verdicts}`, scripted: true }));
    if (!isLoopbackHostname(flags.host.replace(/^\[|\]$/g, ''))) {
      context.stderr(
        `WARNING: rubricate fake-judge is listening on ${flags.host}, beyond loopback: any machine that reaches it gets MADE-UP verdicts (scripted:${verdicts}), not a model's. ` +
          'Bind to 127.0.0.1 unless another machine must reach it, and never point a real evaluation or a trainer at it.',
      );
    }
    context.stderr(
      `rubricate fake-judge: a scripted judge, not a model: every reply is made up to fit its request (${verdicts}).\n` +
        `  export OPENAI_BASE_URL=${front.baseUrl} OPENAI_API_KEY=scripted   # then run any command with an openai: judge; Ctrl-C stops it`,
    );
    await new Promise<void>((resolve) => {
      if (context.signal.aborted) resolve();
      else context.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    context.stdout(JSON.stringify({ event: 'stopped', requests: chat.served }));
    return exitCodes.success;
  } finally {
    await front.close();
    await chat.close();
  }
}
