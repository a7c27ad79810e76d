/** Judge and engine flags shared by every command that calls a judge. */
import { explanationLengths, type ExplanationLength } from '../grading/explanation.js';
import { Option, type Command } from 'commander';
import { RubricateError } from '../errors.js';
import { createJudge, type JudgeConfig } from '../judges/registry.js';
import { profileNames } from '../judges/profiles.js';
import { validateSampling } from '../grading/sampling.js';
import { safeParseJson } from '../util/json.js';
import type { Judge } from '../judges/types.js';
import type { GraderOptions } from '../pipeline/grader.js';
import { defaultBreakerThreshold } from '../engine/circuit-breaker.js';
import { defaultMaxRetryAfterMs } from '../engine/judge-call.js';
import { defaultMaxReplyBytes } from '../judges/reply-body.js';
import { addStoreOptions, applyFleetLimitsFrom, type StoreFlags } from './store-options.js';
import cliProgress from 'cli-progress';

export { openStore, type OpenedStore } from './store-options.js';

export interface JudgeFlags extends StoreFlags {
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
  explanation?: ExplanationLength;
  criteriaPerCall?: number;
  threads?: number;
  sequences?: number;
  contextSize?: number;
  maxRetryAfter?: number;
  maxReplyBytes?: number;
  breakerThreshold?: number;
  /** `--judge-header K=V`, repeatable. */
  judgeHeader?: Record<string, string>;
  judgeExtraBody?: Record<string, unknown>;
  reasoningEffort?: string;
  judgeProfile?: string;
  azureApiVersion?: string;
  thinkingBudget?: number;
  judgeProtocol?: 'native' | 'prometheus';
  /** `--cache-namespace`: share cached replies across endpoints that use the same name. */
  cacheNamespace?: string;
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

/** `--temperature`: a number in [0, 2], the range every OpenAI-compatible server accepts. */
function parseTemperature(value: string): number {
  const temperature = Number(value);
  const problem = Number.isFinite(temperature) && value.trim() !== '' ? validateSampling({ temperature }) : 'temperature must be a number';
  if (problem) throw new RubricateError('CONFIG_INVALID', `--temperature: ${problem}, got "${value}"`, { field: 'temperature' });
  return temperature;
}

/** `--seed`: an integer (servers reject fractions). */
function parseSeed(value: string): number {
  const seed = Number(value);
  const problem = value.trim() === '' ? 'seed must be an integer' : validateSampling({ seed });
  if (problem) throw new RubricateError('CONFIG_INVALID', `--seed: ${problem}, got "${value}"`, { field: 'seed' });
  return seed;
}

/** `--judge-header NAME=VALUE`, repeatable: collected into one header map. */
function collectHeader(value: string, previous: Record<string, string> | undefined): Record<string, string> {
  const separator = value.indexOf('=');
  const name = separator === -1 ? '' : value.slice(0, separator).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
    throw new RubricateError('CONFIG_INVALID', `--judge-header must be NAME=VALUE with a valid header name, got "${value.includes('=') ? `${value.slice(0, separator)}=…` : value}"`, { field: 'judge-header' });
  }
  return { ...previous, [name.toLowerCase()]: value.slice(separator + 1) };
}

/** `--judge-extra-body JSON`: a JSON object merged into every request body. */
function parseExtraBody(value: string): Record<string, unknown> {
  const parsed = safeParseJson(value);
  if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
    throw new RubricateError('CONFIG_INVALID', `--judge-extra-body must be a JSON object, e.g. '{"chat_template_kwargs": {"enable_thinking": false}}'${parsed.ok ? '' : ` (${parsed.error})`}`, { field: 'judge-extra-body' });
  }
  return parsed.value as Record<string, unknown>;
}

function parseCriteriaPerCall(value: string): number {
  if (value === 'all') return Number.POSITIVE_INFINITY;
  return parsePositiveInteger('criteria-per-call')(value);
}

export function addJudgeOptions(command: Command, { batching = true } = {}): Command {
  command
    .option('--judge <spec>', 'openai:MODEL | anthropic:MODEL | gemini:MODEL | gguf:PATH | gguf:hf:USER/REPO:QUANT | none; repeat for a jury (default: OPENAI_* endpoint if set, else the embedded local model)', collect)
    .option('--samples <n>', 'samples per judge for self-consistency (needs --temperature > 0)', parsePositiveInteger('samples'), 1)
    .addOption(new Option('--jury-aggregate <how>', 'how jury votes combine per criterion').choices(['majority', 'mean']).default('majority'))
    .option('--judge-base-url <url>', 'OpenAI-compatible base URL (default: OPENAI_BASE_URL)')
    .option('--judge-header <name=value>', 'extra HTTP header for every judge call (repeatable)', collectHeader)
    .option('--judge-extra-body <json>', 'JSON object merged into every request body, e.g. \'{"chat_template_kwargs":{"enable_thinking":false}}\'', parseExtraBody)
    .addOption(new Option('--reasoning-effort <level>', 'reasoning_effort for reasoning models (none turns thinking off where supported)').choices(['none', 'minimal', 'low', 'medium', 'high']))
    .addOption(new Option('--judge-profile <name>', 'capability profile of the endpoint (default: chosen from the URL and model)').choices(profileNames))
    .option('--azure-api-version <version>', 'api-version for azure: classic deployment URLs (default 2024-10-21)')
    .option('--judge-api-key <key>', 'API key (default: OPENAI_API_KEY, AZURE_OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY by judge)')
    .addOption(new Option('--judge-transport <transport>', 'HTTP client for OpenAI-compatible judges').choices(['http', 'sdk']).default('http'))
    .addOption(new Option('--structured-output <mode>', 'reply format requested from the judge').choices(['auto', 'json_schema', 'json_object', 'none']).default('auto'))
    .option('--concurrency <n>', 'judge calls in flight', parsePositiveInteger('concurrency'), 16)
    .option('--max-attempts <n>', 'attempts per criterion before its error is final', parsePositiveInteger('max-attempts'), 5)
    .option('--timeout <seconds>', 'per-call timeout', parseNumber('timeout', 0.001), 120)
    .option('--temperature <t>', 'judge sampling temperature, 0 to 2', parseTemperature, 0)
    .option('--max-tokens <n>', 'max tokens per verdict', parsePositiveInteger('max-tokens'), 1024)
    .option('--seed <n>', 'sampling seed passed to the judge (an integer)', parseSeed)
    .addOption(new Option('--verdict <kind>', 'binary verdicts, or P(met) from token probabilities').choices(['binary', 'probability']).default('binary'))
    .addOption(
      new Option('--explanation <length>', 'what the judge writes before each verdict: full (endpoints\' default), short (local judges\' default) or none (one generated token per verdict on a local judge)').choices([
        ...explanationLengths,
      ]),
    )
    .option('--cache <path>', 'reply cache (SQLite) path (default: the user cache directory)')
    .option('--no-cache', 'do not reuse replies from earlier runs (a killed run still resumes)')
    .option('--cache-namespace <name>', 'cached replies are kept per endpoint (host and path) for servers other than the official APIs; runs given the same name share them whatever the endpoint')
    .option('--threads <n>', 'CPU threads for a local GGUF judge (default: physical cores)', parsePositiveInteger('threads'))
    .option('--sequences <n>', 'parallel sequences for a local GGUF judge', parsePositiveInteger('sequences'))
    .option('--context-size <n>', 'context length for a local GGUF judge', parsePositiveInteger('context-size'))
    .option('--thinking-budget <tokens>', 'gemini: judges: thinking tokens per call (0 off, -1 model decides; default off where the model allows)', parseThinkingBudget)
    .addOption(new Option('--judge-protocol <protocol>', "prompt layout and reply format: rubricate's own, or Prometheus' (1–5 rubrics, [RESULT] replies)").choices(['native', 'prometheus']).default('native'))
    .option('--max-retry-after <seconds>', 'longest wait a judge\'s Retry-After may impose per retry (never beyond --timeout)', parseNumber('max-retry-after', 0), defaultMaxRetryAfterMs / 1000)
    .option('--max-reply-bytes <n>', 'largest judge reply read; a bigger one is JUDGE_REPLY_TOO_LARGE', parsePositiveInteger('max-reply-bytes'), defaultMaxReplyBytes)
    .option('--breaker-threshold <n>', `consecutive hard judge failures (unreachable, rejected, unreadable) that stop the run with exit 4; 0 never stops (default ${defaultBreakerThreshold}; serve: 0)`, parseNonNegativeInteger('breaker-threshold'));
  addStoreOptions(command);
  if (batching) {
    command
      .option('--criteria-per-call <k>', 'criteria per judge call (a number, or "all"); default 1', parseCriteriaPerCall)
      .addOption(new Option('--mode <mode>', 'per-criterion calls, batched calls, or one holistic Likert call per item').choices(['per-criterion', 'batched', 'holistic']))
      .option('--likert-levels <n>', 'levels of the holistic scale', parsePositiveInteger('likert-levels'), 10)
      .option('--context-budget <tokens>', 'judge context budget: longer responses are read in chunks for evidence, never truncated', parsePositiveInteger('context-budget'));
  }
  return command;
}

function parseThinkingBudget(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < -1) throw new RubricateError('CONFIG_INVALID', `--thinking-budget must be -1, 0 or a positive integer, got "${value}"`, { field: 'thinking-budget' });
  return number;
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
  return applyFleetLimitsFrom(judges, flags);
}

export async function buildJudge(flags: JudgeFlags): Promise<Judge | undefined> {
  const config: JudgeConfig = {
    spec: flags.judge?.[0],
    baseUrl: flags.judgeBaseUrl,
    apiKey: flags.judgeApiKey,
    transport: flags.judgeTransport,
    structuredOutput: flags.structuredOutput,
    headers: flags.judgeHeader,
    extraBody: flags.judgeExtraBody,
    reasoningEffort: flags.reasoningEffort,
    profile: flags.judgeProfile,
    azureApiVersion: flags.azureApiVersion,
    threads: flags.threads,
    sequences: flags.sequences,
    contextSize: flags.contextSize,
    maxReplyBytes: flags.maxReplyBytes,
    thinkingBudget: flags.thinkingBudget,
    onDownloadProgress: downloadProgressBar(),
  };
  const judge = await createJudge(config);
  if (judge && flags.cacheNamespace !== undefined) judge.provenance.cacheNamespace = flags.cacheNamespace;
  return judge;
}

export function graderOptionsFrom(
  flags: JudgeFlags,
): Pick<GraderOptions, 'concurrency' | 'maxAttempts' | 'timeoutMs' | 'sampling' | 'verdictMode' | 'criteriaPerCall' | 'mode' | 'holisticLevels' | 'samples' | 'juryAggregate' | 'contextBudgetTokens' | 'protocol' | 'explanation' | 'breakerThreshold' | 'maxRetryAfterMs'> {
  return {
    protocol: flags.judgeProtocol,
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
    explanation: flags.explanation,
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
