/** Judge and engine flags shared by every command that calls a judge. */
import { Option, type Command } from 'commander';
import { defaultCachePath, SqliteReplyStore, type ReplyStore } from '../engine/reply-store.js';
import { RubricateError } from '../errors.js';
import { createJudge, type JudgeConfig } from '../judges/registry.js';
import type { Judge } from '../judges/types.js';
import type { GraderOptions } from '../pipeline/grader.js';
import { defaultBreakerThreshold } from '../engine/circuit-breaker.js';
import { defaultMaxRetryAfterMs } from '../engine/engine.js';
import { defaultMaxReplyBytes } from '../judges/reply-body.js';
import { existsSync, rmSync } from 'node:fs';
import cliProgress from 'cli-progress';

export interface JudgeFlags {
  /** One spec, or several for a jury. */
  judge?: string[];
  samples?: number;
  juryAggregate?: 'majority' | 'mean';
  mode?: 'per-criterion' | 'batched' | 'holistic';
  likertLevels?: number;
  contextBudget?: number;
  judgeBaseUrl?: string;
  judgeApiKey?: string;
  judgeTransport?: 'http' | 'sdk';
  structuredOutput?: 'auto' | 'json_schema' | 'json_object' | 'none';
  concurrency: number;
  maxAttempts: number;
  timeout: number;
  temperature?: number;
  maxTokens?: number;
  seed?: number;
  verdict?: 'binary' | 'probability';
  criteriaPerCall?: number;
  cache?: string | false;
  threads?: number;
  sequences?: number;
  contextSize?: number;
  maxRetryAfter?: number;
  maxReplyBytes?: number;
  breakerThreshold?: number;
}

export function parsePositiveInteger(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 1) throw new RubricateError('CONFIG_INVALID', `--${name} must be a positive integer, got "${value}"`, { field: name });
    return number;
  };
}

export function parseNumber(name: string, minimum = Number.NEGATIVE_INFINITY) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isFinite(number) || number < minimum) throw new RubricateError('CONFIG_INVALID', `--${name} must be a number${minimum > Number.NEGATIVE_INFINITY ? ` ≥ ${minimum}` : ''}, got "${value}"`, { field: name });
    return number;
  };
}

function parseNonNegativeInteger(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isInteger(number) || number < 0) throw new RubricateError('CONFIG_INVALID', `--${name} must be an integer ≥ 0, got "${value}"`, { field: name });
    return number;
  };
}

function parseCriteriaPerCall(value: string): number {
  if (value === 'all') return Number.POSITIVE_INFINITY;
  return parsePositiveInteger('criteria-per-call')(value);
}

export function addJudgeOptions(command: Command, { batching = true } = {}): Command {
  command
    .option('--judge <spec>', 'openai:MODEL | gguf:PATH | gguf:hf:USER/REPO:QUANT | none; repeat for a jury (default: OPENAI_* endpoint if set, else the embedded local model)', collect)
    .option('--samples <n>', 'samples per judge for self-consistency (needs --temperature > 0)', parsePositiveInteger('samples'), 1)
    .addOption(new Option('--jury-aggregate <how>', 'how jury votes combine per criterion').choices(['majority', 'mean']).default('majority'))
    .option('--judge-base-url <url>', 'OpenAI-compatible base URL (default: OPENAI_BASE_URL)')
    .option('--judge-api-key <key>', 'API key (default: OPENAI_API_KEY)')
    .addOption(new Option('--judge-transport <transport>', 'HTTP client for OpenAI-compatible judges').choices(['http', 'sdk']).default('http'))
    .addOption(new Option('--structured-output <mode>', 'reply format requested from the judge').choices(['auto', 'json_schema', 'json_object', 'none']).default('auto'))
    .option('--concurrency <n>', 'judge calls in flight', parsePositiveInteger('concurrency'), 16)
    .option('--max-attempts <n>', 'attempts per criterion before its error is final', parsePositiveInteger('max-attempts'), 5)
    .option('--timeout <seconds>', 'per-call timeout', parseNumber('timeout', 0.001), 120)
    .option('--temperature <t>', 'judge sampling temperature', parseNumber('temperature', 0), 0)
    .option('--max-tokens <n>', 'max tokens per verdict', parsePositiveInteger('max-tokens'), 1024)
    .option('--seed <n>', 'sampling seed passed to the judge', parseNumber('seed'))
    .addOption(new Option('--verdict <kind>', 'binary verdicts, or P(met) from token probabilities').choices(['binary', 'probability']).default('binary'))
    .option('--cache <path>', 'reply cache (SQLite) path (default: the user cache directory)')
    .option('--no-cache', 'do not reuse replies from earlier runs (a killed run still resumes)')
    .option('--threads <n>', 'CPU threads for a local GGUF judge (default: physical cores)', parsePositiveInteger('threads'))
    .option('--sequences <n>', 'parallel sequences for a local GGUF judge', parsePositiveInteger('sequences'))
    .option('--context-size <n>', 'context length for a local GGUF judge', parsePositiveInteger('context-size'))
    .option('--max-retry-after <seconds>', 'longest wait a judge\'s Retry-After may impose per retry (never beyond --timeout)', parseNumber('max-retry-after', 0), defaultMaxRetryAfterMs / 1000)
    .option('--max-reply-bytes <n>', 'largest judge reply read; a bigger one is JUDGE_REPLY_TOO_LARGE', parsePositiveInteger('max-reply-bytes'), defaultMaxReplyBytes)
    .option('--breaker-threshold <n>', `consecutive hard judge failures (unreachable, rejected, unreadable) that stop the run with exit 4; 0 never stops (default ${defaultBreakerThreshold}; serve: 0)`, parseNonNegativeInteger('breaker-threshold'));
  if (batching) {
    command
      .option('--criteria-per-call <k>', 'criteria per judge call (a number, or "all"); default 1', parseCriteriaPerCall)
      .addOption(new Option('--mode <mode>', 'per-criterion calls, batched calls, or one holistic Likert call per item').choices(['per-criterion', 'batched', 'holistic']))
      .option('--likert-levels <n>', 'levels of the holistic scale', parsePositiveInteger('likert-levels'), 10)
      .option('--context-budget <tokens>', 'judge context budget: longer responses are read in chunks for evidence, never truncated', parsePositiveInteger('context-budget'));
  }
  return command;
}

function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}

/** Builds every judge named (a jury when several); an empty list means `none`. */
export async function buildJudges(flags: JudgeFlags): Promise<Judge[]> {
  const specs = flags.judge && flags.judge.length > 0 ? flags.judge : [undefined];
  const judges: Judge[] = [];
  for (const spec of specs) {
    const judge = await buildJudge({ ...flags, judge: spec === undefined ? undefined : [spec] });
    if (judge) judges.push(judge);
    else if (specs.length > 1) throw new RubricateError('CONFIG_INVALID', '"none" cannot be a member of a jury', { field: 'judge' });
  }
  return judges;
}

export async function buildJudge(flags: JudgeFlags): Promise<Judge | undefined> {
  const config: JudgeConfig = {
    spec: flags.judge?.[0],
    baseUrl: flags.judgeBaseUrl,
    apiKey: flags.judgeApiKey,
    transport: flags.judgeTransport,
    structuredOutput: flags.structuredOutput,
    threads: flags.threads,
    sequences: flags.sequences,
    contextSize: flags.contextSize,
    maxReplyBytes: flags.maxReplyBytes,
    onDownloadProgress: downloadProgressBar(),
  };
  return createJudge(config);
}

export interface OpenedStore {
  store: ReplyStore | undefined;
  /** Called after a successful run: removes a run-only journal. */
  finish(): void;
  close(): void;
}

/**
 * The reply store: the shared cache by default; with --no-cache, a journal beside the
 * output that only a rerun of the same command reads, deleted once the run completes.
 */
export function openStore(flags: Pick<JudgeFlags, 'cache'>, outputPath: string | undefined): OpenedStore {
  if (flags.cache === false) {
    if (!outputPath) return { store: undefined, finish() {}, close() {} };
    const journalPath = `${outputPath}.journal.sqlite`;
    const store = new SqliteReplyStore(journalPath);
    return {
      store,
      finish() {
        store.close();
        for (const suffix of ['', '-wal', '-shm']) {
          if (existsSync(journalPath + suffix)) rmSync(journalPath + suffix, { force: true });
        }
      },
      close: () => store.close(),
    };
  }
  const store = new SqliteReplyStore(typeof flags.cache === 'string' ? flags.cache : defaultCachePath());
  return { store, finish() {}, close: () => store.close() };
}

export function graderOptionsFrom(
  flags: JudgeFlags,
): Pick<GraderOptions, 'concurrency' | 'maxAttempts' | 'timeoutMs' | 'sampling' | 'verdictMode' | 'criteriaPerCall' | 'mode' | 'holisticLevels' | 'samples' | 'juryAggregate' | 'contextBudgetTokens' | 'breakerThreshold' | 'maxRetryAfterMs'> {
  return {
    mode: flags.mode,
    holisticLevels: flags.likertLevels,
    samples: flags.samples,
    juryAggregate: flags.juryAggregate,
    contextBudgetTokens: flags.contextBudget,
    concurrency: flags.concurrency,
    maxAttempts: flags.maxAttempts,
    timeoutMs: Math.round(flags.timeout * 1000),
    ...(flags.breakerThreshold !== undefined ? { breakerThreshold: flags.breakerThreshold } : {}),
    ...(flags.maxRetryAfter !== undefined ? { maxRetryAfterMs: Math.round(flags.maxRetryAfter * 1000) } : {}),
    sampling: {
      temperature: flags.temperature ?? 0,
      maxTokens: flags.maxTokens ?? 1024,
      ...(flags.seed !== undefined ? { seed: flags.seed } : {}),
    },
    verdictMode: flags.verdict,
    criteriaPerCall: flags.criteriaPerCall,
  };
}

/** A one-time model download shows a byte progress bar on a terminal, and a line per 10% otherwise. */
function downloadProgressBar(): (done: number, total: number) => void {
  let bar: cliProgress.SingleBar | undefined;
  let lastDecile = -1;
  return (done, total) => {
    if (process.stderr.isTTY) {
      if (!bar) {
        bar = new cliProgress.SingleBar({ format: 'downloading model {bar} {percentage}% | {value}/{total} MB', stream: process.stderr }, cliProgress.Presets.shades_classic);
        bar.start(Math.round(total / 1e6), 0);
      }
      bar.update(Math.round(done / 1e6));
      if (done >= total) bar.stop();
      return;
    }
    const decile = total > 0 ? Math.floor((done / total) * 10) : 0;
    if (decile !== lastDecile) {
      lastDecile = decile;
      process.stderr.write(`downloading model: ${decile * 10}% of ${Math.round(total / 1e6)} MB\n`);
    }
  };
}
