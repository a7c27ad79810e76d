/**
 * The one mapping between command-line flags and the run spec (`src/spec/run-spec.ts`). Each
 * flag is one row: its spec path, how commander declares and parses it, and how its value
 * becomes the spec's. Commands add the rows of the groups they read; the spec is built from the
 * parsed flags here and nowhere else, so a setting added to the schema and given a row reaches
 * every command, queue worker and provenance record without another list to maintain.
 *
 * Model settings have one row for both models a command can call: `--judge-header` and
 * `--generator-header`, `--structured-output` and `--generator-structured-output`.
 *
 * Defaults are not commander's: a flag left out leaves its field absent, and the component that
 * reads the field applies its default. That is how a flag given to a backend that does not read
 * it can be refused by name.
 */
import { readFileSync } from 'node:fs';
import { Option, type Command } from 'commander';
import { RubricateError } from '../errors.js';
import { backendOf, unreadSettings } from '../judges/registry.js';
import { profileNames } from '../judges/profiles.js';
import { validateSampling } from '../grading/sampling.js';
import { parseJudgeTemplate } from '../grading/custom-template.js';
import {
  abstainPolicies,
  agenticToolNames,
  defaultLimits,
  escalationReasons,
  explanationLengths,
  gradingModeNames,
  judgeProtocols,
  modelSpecSchema,
  parseRunSpec,
  parseWith,
  reasoningEfforts,
  structuredOutputModes,
  verdictKinds,
  type Credentials,
  type EscalationReason,
  type ModelSpec,
  type RunSpec,
  type SettingPath,
} from '../spec/run-spec.js';
import { safeParseJson } from '../util/json.js';
import { readAlignmentFile } from '../spec/alignment.js';
import { readCalibrationFile } from '../spec/calibration.js';

/** Which model a model setting's flag is for: `--judge-…`, `--generator-…`, `--audit-…` (serve's audit judge) or `--model-…` (the model under test, `eval`). */
export type ModelRole = 'judge' | 'generator' | 'audit' | 'model';

/** Each role's model flag, key flag and the prefix of its model-setting flags. */
const roleFlags: Record<ModelRole, { model: string; apiKey: string; prefix: string }> = {
  judge: { model: 'judge', apiKey: 'judge-api-key', prefix: '' },
  generator: { model: 'generator', apiKey: 'generator-api-key', prefix: 'generator-' },
  audit: { model: 'audit-judge', apiKey: 'audit-api-key', prefix: 'audit-' },
  model: { model: 'model', apiKey: 'model-api-key', prefix: 'model-' },
};

/** The run-spec groups a command can offer. */
export type FlagGroup = 'model' | 'agentic' | 'plan' | 'alignment' | 'calibration' | 'batching' | 'sampling' | 'protocol' | 'template' | 'calls' | 'jury' | 'cascade' | 'guard' | 'scoring' | 'fleet' | 'text' | 'requests' | 'limits';

interface FlagRow {
  /** The run-spec path set (model rows: the path inside a model spec). */
  path: SettingPath;
  /** The settings a row for a whole group sets (`--rate-limit` → two fields of `fleet`); default the path. */
  sets?: readonly SettingPath[];
  /** Long flag name without dashes (model rows: the judge's; the generator's derives from it). */
  name: string;
  /** `<value>` placeholder; absent for a switch. */
  argument?: string;
  description: string;
  choices?: readonly string[];
  parse?: (value: string, previous: unknown) => unknown;
  /** The flag's value as the spec holds it (seconds → milliseconds…); default: as parsed. */
  toSpec?: (value: never) => unknown;
  group?: FlagGroup;
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

function parseSeconds(name: string) {
  return (value: string): number => {
    const number = Number(value);
    if (!Number.isFinite(number) || number <= 0) throw new RubricateError('CONFIG_INVALID', `--${name} must be a positive number of seconds, got "${value}"`, { field: name });
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
function collectHeader(flag: string) {
  return (value: string, previous: unknown): Record<string, string> => {
    const separator = value.indexOf('=');
    const name = separator === -1 ? '' : value.slice(0, separator).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
      throw new RubricateError('CONFIG_INVALID', `--${flag} must be NAME=VALUE with a valid header name, got "${value.includes('=') ? `${value.slice(0, separator)}=…` : value}"`, { field: flag });
    }
    return { ...(previous as Record<string, string> | undefined), [name.toLowerCase()]: value.slice(separator + 1) };
  };
}

/** `--judge-extra-body JSON`: a JSON object merged into every request body. */
function parseExtraBody(flag: string) {
  return (value: string): Record<string, unknown> => {
    const parsed = safeParseJson(value);
    if (!parsed.ok || typeof parsed.value !== 'object' || parsed.value === null || Array.isArray(parsed.value)) {
      throw new RubricateError('CONFIG_INVALID', `--${flag} must be a JSON object, e.g. '{"chat_template_kwargs": {"enable_thinking": false}}'${parsed.ok ? '' : ` (${parsed.error})`}`, { field: flag });
    }
    return parsed.value as Record<string, unknown>;
  };
}

function parseCriteriaPerCall(value: string): number | 'all' {
  if (value === 'all') return 'all';
  return parsePositiveInteger('criteria-per-call')(value);
}

function parseOrders(value: string): 1 | 2 {
  if (value !== '1' && value !== '2') throw new RubricateError('CONFIG_INVALID', `--orders must be 1 or 2, got "${value}"`, { field: 'orders' });
  return Number(value) as 1 | 2;
}

function parseThinkingBudget(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < -1) throw new RubricateError('CONFIG_INVALID', `--thinking-budget must be -1, 0 or a positive integer, got "${value}"`, { field: 'thinking-budget' });
  return number;
}

function parseRateLimit(value: string): { requestsPerMinute?: number; tokensPerMinute?: number } {
  const [rpm, tpm, ...rest] = value.split(',').map((part) => part.trim());
  const positive = (text: string | undefined) => text === undefined || text === '' || (Number.isInteger(Number(text)) && Number(text) > 0);
  if (rest.length > 0 || !positive(rpm) || !positive(tpm) || (!rpm && !tpm)) {
    throw new RubricateError('CONFIG_INVALID', `--rate-limit is RPM or RPM,TPM (positive integers; RPM may be empty: ",TPM"), got "${value}"`, { field: 'rate-limit' });
  }
  return { ...(rpm ? { requestsPerMinute: Number(rpm) } : {}), ...(tpm ? { tokensPerMinute: Number(tpm) } : {}) };
}

const milliseconds = (seconds: number) => Math.round(seconds * 1000);

/** `--judge-template FILE`: the file's text, its variables checked now (before any call). */
function readJudgeTemplate(file: string): string {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new RubricateError('INPUT_UNREADABLE', `--judge-template: cannot read ${file}: ${(error as Error).message}`, { field: 'judge-template', file });
  }
  parseJudgeTemplate(text);
  return text;
}

/** `--cascade-judge SPEC`, repeatable: a model spec string (`openai:gpt-4.1`), or a model spec as JSON (`{"model": …, "endpoint": {"baseUrl": …}}`). */
/** `--judge-tools fetch,search`: tool names, each one offered. */
function parseToolList(value: string): string[] {
  const names = value.split(',').map((name) => name.trim()).filter((name) => name !== '');
  const unknown = names.find((name) => !(agenticToolNames as readonly string[]).includes(name));
  if (names.length === 0 || unknown !== undefined) throw new RubricateError('CONFIG_INVALID', `--judge-tools: ${unknown === undefined ? 'name at least one tool' : `"${unknown}" is not a tool`} (${agenticToolNames.join(', ')})`, { field: 'judge-tools' });
  return [...new Set(names)];
}

/** A repeatable flag's values, in order. */
function collectString(value: string, previous: unknown): string[] {
  return [...((previous as string[] | undefined) ?? []), value];
}

function collectCascadeJudge(value: string, previous: unknown): ModelSpec[] {
  const trimmed = value.trim();
  let model: ModelSpec;
  if (trimmed.startsWith('{')) {
    const parsed = safeParseJson(trimmed);
    if (!parsed.ok) throw new RubricateError('CONFIG_INVALID', `--cascade-judge is a judge spec or a JSON model spec, got invalid JSON (${parsed.error})`, { field: 'cascade-judge' });
    model = parseWith(modelSpecSchema, parsed.value, '--cascade-judge');
    if (model.model === undefined) throw new RubricateError('CONFIG_INVALID', '--cascade-judge: a JSON model spec needs "model"', { field: 'cascade-judge' });
  } else model = { model: trimmed };
  return [...((previous as ModelSpec[] | undefined) ?? []), model];
}

/** `--escalate-band LOW,HIGH`: P(met) bounds, inclusive, within [0, 1]. */
function parseBand(value: string): [number, number] {
  const parts = value.split(',').map((part) => Number(part.trim()));
  if (parts.length !== 2 || parts.some((part, index) => value.split(',')[index].trim() === '' || !Number.isFinite(part) || part < 0 || part > 1) || parts[0] > parts[1]) {
    throw new RubricateError('CONFIG_INVALID', `--escalate-band is LOW,HIGH with 0 ≤ LOW ≤ HIGH ≤ 1, got "${value}"`, { field: 'escalate-band' });
  }
  return [parts[0], parts[1]];
}

/** `--escalate-on band,error,…`: the reasons that send a criterion to the next judge. */
function parseEscalationReasons(value: string): EscalationReason[] {
  const reasons = value.split(',').map((part) => part.trim());
  const unknown = reasons.find((reason) => !(escalationReasons as readonly string[]).includes(reason));
  if (unknown !== undefined) throw new RubricateError('CONFIG_INVALID', `--escalate-on takes ${escalationReasons.join(', ')} (comma-separated), got "${unknown}"`, { field: 'escalate-on' });
  return [...new Set(reasons)] as EscalationReason[];
}

/** How to reach a model; the generator's flag names derive from the judge's. */
const modelRows: readonly FlagRow[] = [
  { path: 'endpoint.baseUrl', name: 'judge-base-url', argument: '<url>', description: 'OpenAI-compatible (or the provider\'s) base URL (default: OPENAI_BASE_URL, or the provider\'s variable)' },
  { path: 'endpoint.headers', name: 'judge-header', argument: '<name=value>', description: 'extra HTTP header for every call (repeatable)', parse: collectHeader('judge-header') },
  { path: 'endpoint.extraBody', name: 'judge-extra-body', argument: '<json>', description: 'JSON object merged into every request body, e.g. \'{"chat_template_kwargs":{"enable_thinking":false}}\'', parse: parseExtraBody('judge-extra-body') },
  { path: 'endpoint.maxReplyBytes', name: 'max-reply-bytes', argument: '<n>', description: 'largest reply read; a bigger one is JUDGE_REPLY_TOO_LARGE (default 8 MiB)', parse: parsePositiveInteger('max-reply-bytes') },
  { path: 'endpoint.cacheNamespace', name: 'cache-namespace', argument: '<name>', description: 'cached replies are kept per endpoint (host and path) for servers other than the official APIs; runs given the same name share them whatever the endpoint' },
  { path: 'openai.transport', name: 'judge-transport', argument: '<transport>', description: 'openai:/azure: HTTP client: http (default) or sdk (the openai package)', choices: ['http', 'sdk'] },
  { path: 'openai.structuredOutput', name: 'structured-output', argument: '<mode>', description: 'openai:/azure: reply format requested (default auto: the best the endpoint takes)', choices: structuredOutputModes },
  { path: 'openai.reasoningEffort', name: 'reasoning-effort', argument: '<level>', description: 'openai:/azure: reasoning_effort for reasoning models (none turns thinking off where supported)', choices: reasoningEfforts },
  { path: 'openai.profile', name: 'judge-profile', argument: '<name>', description: 'openai:/azure: capability profile of the endpoint (default: chosen from the URL and model)', choices: profileNames },
  { path: 'openai.azureApiVersion', name: 'azure-api-version', argument: '<version>', description: 'azure: api-version for classic deployment URLs (default 2024-10-21)' },
  { path: 'gemini.thinkingBudget', name: 'thinking-budget', argument: '<tokens>', description: 'gemini: thinking tokens per call (0 off, -1 model decides; default off where the model allows)', parse: parseThinkingBudget },
  { path: 'local.threads', name: 'threads', argument: '<n>', description: 'gguf: CPU threads (default: the math cores the 1-minute load average leaves free)', parse: parsePositiveInteger('threads') },
  { path: 'local.sequences', name: 'sequences', argument: '<n>', description: 'gguf: parallel sequences', parse: parsePositiveInteger('sequences') },
  { path: 'local.contextSize', name: 'context-size', argument: '<n>', description: 'gguf: context length', parse: parsePositiveInteger('context-size') },
];

/** `--model-top-p`: a number in (0, 1]. */
function parseTopP(value: string): number {
  const topP = Number(value);
  if (value.trim() === '' || !Number.isFinite(topP) || topP <= 0 || topP > 1) throw new RubricateError('CONFIG_INVALID', `--model-top-p must be a number in (0, 1], got "${value}"`, { field: 'model-top-p' });
  return topP;
}

/** Everything else a run sets, by group. */
const runRows: readonly FlagRow[] = [
  { group: 'model', path: 'sampling.temperature', name: 'model-temperature', argument: '<t>', description: "model under test: sampling temperature, 0 to 2 (default: the model's own)", parse: parseTemperature },
  { group: 'model', path: 'sampling.topP', name: 'model-top-p', argument: '<p>', description: "model under test: nucleus sampling top_p in (0, 1] (default: the model's own)", parse: parseTopP },
  { group: 'model', path: 'sampling.maxTokens', name: 'model-max-tokens', argument: '<n>', description: "model under test: max tokens per response (default: the model's own)", parse: parsePositiveInteger('model-max-tokens') },
  { group: 'model', path: 'sampling.seed', name: 'model-seed', argument: '<n>', description: 'model under test: sampling seed (an integer)', parse: parseSeed },
  { group: 'model', path: 'sampling.samplesPerPrompt', name: 'samples-per-prompt', argument: '<n>', description: 'responses sampled per prompt (pass@k, GRPO-style groups), each graded on its own line (default 1)', parse: parsePositiveInteger('samples-per-prompt') },
  {
    group: 'batching',
    path: 'plan.mode',
    name: 'mode',
    argument: '<mode>',
    description: 'per-criterion calls (default), batched calls, one holistic Likert call per item, listwise (the responses of a group in one call) or tournament (a group\'s responses compared in pairs)',
    choices: gradingModeNames,
  },
  { group: 'batching', path: 'plan.groupBy', name: 'group-by', argument: '<field>', description: 'listwise/tournament: the field naming each item\'s group, e.g. metadata.prompt_id (default: items in a row with the same prompt, rubric and reference)' },
  { group: 'batching', path: 'plan.listwise', name: 'listwise', argument: '<verdicts>', description: 'listwise: a verdict per response and criterion (criteria, default) or one Likert score per response (holistic)', choices: ['criteria', 'holistic'] },
  { group: 'batching', path: 'plan.tournament', name: 'tournament', argument: '<pairs>', description: 'tournament: all pairs (default) or circular (each response against the next)', choices: ['circular', 'all'] },
  { group: 'batching', path: 'plan.orders', name: 'orders', argument: '<n>', description: 'listwise/tournament: presentation orders, 1 or 2 (the reverse too, reporting position consistency); default listwise 1, tournament 2', parse: parseOrders },
  { group: 'batching', path: 'plan.criteriaPerCall', name: 'criteria-per-call', argument: '<k>', description: 'criteria per judge call (a number, or "all"); default 1', parse: parseCriteriaPerCall },
  { group: 'batching', path: 'plan.likertLevels', name: 'likert-levels', argument: '<n>', description: 'levels of the --mode holistic (or --listwise holistic) scale (default 10)', parse: parsePositiveInteger('likert-levels') },
  { group: 'batching', path: 'plan.contextBudget', name: 'context-budget', argument: '<tokens>', description: 'judge context budget: longer responses are read in chunks for evidence, never truncated', parse: parsePositiveInteger('context-budget') },
  {
    group: 'plan',
    path: 'plan.verdict',
    name: 'verdict',
    argument: '<kind>',
    description: "binary verdicts (default), P(met) from token probabilities, or expected-score: G-Eval's probability-weighted mean over an ordinal scale's options (P(met) for yes/no criteria)",
    choices: verdictKinds,
  },
  { group: 'plan', path: 'plan.topLogprobs', name: 'top-logprobs', argument: '<n>', description: 'with --verdict probability or expected-score: alternatives asked per token, 1 to 20 (default 20)', parse: parsePositiveInteger('top-logprobs') },
  {
    group: 'plan',
    path: 'plan.explanation',
    name: 'explanation',
    argument: '<length>',
    description: "what the judge writes before each verdict: full (endpoints' default), short (local judges' default) or none (one generated token per verdict on a local judge)",
    choices: explanationLengths,
  },
  {
    group: 'plan',
    path: 'plan.abstain',
    name: 'abstain',
    argument: '<policy>',
    description: 'let the judge answer cannot_assess where the response does not let it decide, counted as: skip (left out of the score), not_met, half (half its points) or fail (the item scores 0); off by default',
    choices: abstainPolicies,
  },
  {
    group: 'alignment',
    path: 'plan.alignment',
    name: 'alignment',
    argument: '<file>',
    description: 'apply an alignment written by rubricate align (labelled examples, reworded criteria, a calibrator); its hash goes into the cache keys and the results',
    parse: readAlignmentFile,
  },
  {
    group: 'protocol',
    path: 'plan.protocol',
    name: 'judge-protocol',
    argument: '<protocol>',
    description: "prompt layout and reply format: native (rubricate's own, default), prometheus (1–5 rubrics, [RESULT] replies), r3 (R3's pointwise, binary and pairwise JSON), selene (Atla Selene's **Result:** replies) or lynx (Patronus Lynx: faithfulness to the reference, PASS/FAIL)",
    choices: judgeProtocols,
  },
  { group: 'template', path: 'plan.template', name: 'judge-template', argument: '<file>', description: 'your own grading prompt for each criterion: {{response}} and {{criterion}} required, {{conversation}}, {{reference}}, {{verdict_format}} optional; a "--- system ---" line starts a system message, "--- user ---" the user message', parse: readJudgeTemplate },
  { group: 'sampling', path: 'plan.sampling.temperature', name: 'temperature', argument: '<t>', description: 'judge sampling temperature, 0 (default) to 2', parse: parseTemperature },
  { group: 'sampling', path: 'plan.sampling.maxTokens', name: 'max-tokens', argument: '<n>', description: 'max tokens per verdict (default 1024; compare: 512)', parse: parsePositiveInteger('max-tokens') },
  { group: 'sampling', path: 'plan.sampling.seed', name: 'seed', argument: '<n>', description: 'sampling seed passed to the judge (an integer)', parse: parseSeed },
  { group: 'calls', path: 'calls.concurrency', name: 'concurrency', argument: '<n>', description: 'judge calls in flight (default 16)', parse: parsePositiveInteger('concurrency') },
  { group: 'calls', path: 'calls.maxAttempts', name: 'max-attempts', argument: '<n>', description: 'attempts per criterion before its error is final (default 5)', parse: parsePositiveInteger('max-attempts') },
  { group: 'calls', path: 'calls.timeoutMs', name: 'timeout', argument: '<seconds>', description: 'per-call timeout (default 120)', parse: parseNumber('timeout', 0.001), toSpec: milliseconds },
  { group: 'calls', path: 'calls.maxRetryAfterMs', name: 'max-retry-after', argument: '<seconds>', description: "longest wait a judge's Retry-After may impose per retry, never beyond --timeout (default 60)", parse: parseNumber('max-retry-after', 0), toSpec: milliseconds },
  {
    group: 'calls',
    path: 'calls.breakerThreshold',
    name: 'breaker-threshold',
    argument: '<n>',
    description: 'consecutive hard judge failures (unreachable, rejected, unreadable) that stop the run with exit 4; 0 never stops (default 20; serve: 0)',
    parse: parseNonNegativeInteger('breaker-threshold'),
  },
  { group: 'jury', path: 'jury.samples', name: 'samples', argument: '<n>', description: 'samples per judge for self-consistency (needs --temperature > 0)', parse: parsePositiveInteger('samples') },
  { group: 'jury', path: 'jury.aggregate', name: 'jury-aggregate', argument: '<how>', description: 'how jury votes combine per criterion: majority (default) or mean', choices: ['majority', 'mean'] },
  {
    group: 'cascade',
    path: 'cascade.judges',
    name: 'cascade-judge',
    argument: '<spec>',
    description: 'a judge a criterion escalates to after --judge (repeat for more, in order): a spec such as openai:gpt-4.1, or a JSON model spec {"model": …, "endpoint": {"baseUrl": …}}; its key comes from its provider\'s variable',
    parse: collectCascadeJudge,
  },
  { group: 'cascade', path: 'cascade.band', name: 'escalate-band', argument: '<low,high>', description: "escalate a criterion whose P(met) is within [low, high] (needs --verdict probability)", parse: parseBand },
  { group: 'cascade', path: 'cascade.escalateOn', name: 'escalate-on', argument: '<reasons>', description: `what escalates, comma-separated: ${escalationReasons.join(', ')} (default: each that applies)`, parse: parseEscalationReasons },
  { group: 'guard', path: 'guard.modelUnderTest', name: 'model-under-test', argument: '<model>', description: "the model whose answers are graded (default: each item's metadata.model; a pair's model_a and model_b)" },
  { group: 'guard', path: 'guard.selfPreference', name: 'self-preference', argument: '<policy>', description: 'when a judge is the model under test or of its family: warn (default: grade, record it and say so) or refuse (grade nothing it would judge)', choices: ['warn', 'refuse'] },
  { group: 'scoring', path: 'scoring.name', name: 'scoring', argument: '<name>', description: "scoring: healthbench, weighted_mean, normalized, compliance, ifeval, profbench, … (default: the format's own, else weighted_mean)" },
  { group: 'scoring', path: 'scoring.checkMode', name: 'check-mode', argument: '<mode>', description: 'IFEval strict (default) or loose evaluation of checks', choices: ['strict', 'loose'] },
  {
    group: 'scoring',
    path: 'scoring.failedAsZero',
    name: 'failed-as-zero',
    description: 'count failed judge calls as "not met" in the metrics (as ResearchRubrics, RuscaRL and AdvancedIF do); reported, never the default',
  },
  {
    group: 'calibration',
    path: 'scoring.calibration',
    name: 'calibration',
    argument: '<file>',
    description: 'apply a score calibration written by rubricate calibrate --format results: each result also gets the overall score people would give, from its criteria\u2019s verdicts (null, naming what is missing, when a criterion has no verdict)',
    parse: readCalibrationFile,
  },
  { group: 'fleet', path: 'fleet.globalConcurrency', name: 'global-concurrency', argument: '<n>', description: 'judge calls in flight per endpoint across every process sharing the Redis --store', parse: parsePositiveInteger('global-concurrency') },
  { group: 'fleet', path: 'fleet', sets: ['fleet.requestsPerMinute', 'fleet.tokensPerMinute'], name: 'rate-limit', argument: '<rpm[,tpm]>', description: 'requests (and tokens) per minute per endpoint across every process sharing the Redis --store', parse: parseRateLimit },
  { group: 'fleet', path: 'fleet.leaseMs', name: 'lease', argument: '<seconds>', description: "with fleet limits: how long a crashed process's calls keep their slots (default 10)", parse: parseSeconds('lease'), toSpec: milliseconds },
  { group: 'fleet', path: 'cacheTtlMs', name: 'cache-ttl', argument: '<seconds>', description: 'treat stored replies older than this as absent', parse: parseSeconds('cache-ttl'), toSpec: milliseconds },
  {
    group: 'limits',
    path: 'limits.maxGroupSize',
    name: 'max-group-size',
    argument: '<n>',
    description: `largest group of responses graded together (--mode listwise or tournament; serve: every /v1/score/group request); a larger one is refused before any judge call, LIMIT_EXCEEDED (default ${defaultLimits.maxGroupSize})`,
    parse: parsePositiveInteger('max-group-size'),
  },
  {
    group: 'limits',
    path: 'limits.maxTournamentPairs',
    name: 'max-tournament-pairs',
    argument: '<n>',
    description: `most comparisons one tournament group may take, counted before any is made; beyond, LIMIT_EXCEEDED (default ${defaultLimits.maxTournamentPairs}: all pairs of 128 responses; --tournament circular takes one per response)`,
    parse: parsePositiveInteger('max-tournament-pairs'),
  },
  {
    group: 'limits',
    path: 'limits.maxRepeats',
    name: 'max-repeats',
    argument: '<n>',
    description: `largest --repeats, --samples, --max-attempts, --best-of, --rounds, --variants, --iterations or --responses-per-prompt: each multiplies every item's judge calls; a larger one is refused at start (default ${defaultLimits.maxRepeats})`,
    parse: parsePositiveInteger('max-repeats'),
  },
  {
    group: 'limits',
    path: 'limits.maxSteps',
    name: 'max-steps',
    argument: '<n>',
    description: `most steps of one trajectory graded by step-scoped criteria (process rewards: one judge task per criterion and step); a longer one is refused before any judge call, LIMIT_EXCEEDED (default ${defaultLimits.maxSteps})`,
    parse: parsePositiveInteger('max-steps'),
  },
  { group: 'agentic', path: 'agentic.tools', name: 'judge-tools', argument: '<list>', description: 'an agentic judge: tools it may call before each verdict, comma-separated: fetch (a cited page, from --fetch-allow hosts), search (--documents), check (a deterministic check it runs on the response), steps (the trajectory\u2019s steps); the reference is never shown to it (docs/agentic-judge.md)', parse: parseToolList },
  { group: 'agentic', path: 'agentic.maxToolCalls', name: 'judge-tool-budget', argument: '<n>', description: 'with --judge-tools: tool calls one verdict may make; one more asked for is an error, JUDGE_TOOL_BUDGET (default 4)', parse: parsePositiveInteger('judge-tool-budget') },
  { group: 'agentic', path: 'agentic.fetchAllow', name: 'fetch-allow', argument: '<host>', description: 'with --judge-tools fetch: a host it may read (example.org, *.example.org, host:port); repeat for more; a loopback or private address only when named as itself (127.0.0.1:8080)', parse: collectString },
  { group: 'agentic', path: 'agentic.fetchMaxBytes', name: 'fetch-max-bytes', argument: '<bytes>', description: 'with --judge-tools fetch: bytes one verdict may read over all its fetches (default 262144)', parse: parsePositiveInteger('fetch-max-bytes') },
  { group: 'agentic', path: 'agentic.fetchTimeoutMs', name: 'fetch-timeout', argument: '<seconds>', description: 'with --judge-tools fetch: time one fetch may take, redirects included (default 10)', parse: parseSeconds('fetch-timeout'), toSpec: milliseconds },
  { group: 'agentic', path: 'agentic.documents', name: 'documents', argument: '<path>', description: 'with --judge-tools search: the documents searched, a folder of .txt/.md/.html/.json files or a JSONL file of {id, text, title?, url?}' },
  { group: 'text', path: 'omitText', name: 'no-text', description: 'leave prompt and response text out of the results', toSpec: (text: boolean) => !text },
  { group: 'requests', path: 'keepRequests', name: 'keep-requests', description: "keep each judge call's exact request, raw reply and latency in the results (redacted; large), for the report to show behind each verdict" },
];

/** How a role is named in help and errors. */
function roleLabel(role: ModelRole): string {
  return role === 'audit' ? 'audit judge' : role === 'model' ? 'model under test' : role;
}

/** The flag of a model row for a role: `--judge-header` / `--generator-header` / `--audit-header`, `--threads` / `--generator-threads`. */
function modelFlagName(row: FlagRow, role: ModelRole): string {
  return role === 'judge' ? row.name : `${roleFlags[role].prefix}${row.name.replace(/^judge-/, '')}`;
}

function optionOf(row: FlagRow, name = row.name, description = row.description): Option {
  const option = new Option(`--${name}${row.argument ? ` ${row.argument}` : ''}`, description);
  if (row.choices) option.choices(row.choices);
  if (row.parse) option.argParser(row.parse);
  return option;
}

/** The option attribute commander stores a flag under (`--judge-base-url` → `judgeBaseUrl`, `--no-text` → `text`). */
function attributeOf(name: string): string {
  return name.replace(/^no-/, '').replace(/-([a-z])/g, (_match, letter: string) => letter.toUpperCase());
}

/**
 * `--judge SPEC` (repeatable: a jury) or `--generator SPEC`, its key, and every model-setting
 * flag of that role.
 */
export function addModelOptions(command: Command, role: ModelRole): Command {
  if (role === 'judge') {
    command
      .option('--judge <spec>', 'openai:MODEL | azure:DEPLOYMENT | anthropic:MODEL | gemini:MODEL | gguf:PATH | gguf:hf:USER/REPO:QUANT | scripted:met|unmet|mixed (no model, offline) | replay:FILE (recorded verdicts, offline) | none; repeat for a jury (default: RUBRICATE_JUDGE, else the OPENAI_* endpoint if set, else RUBRICATE_MODEL; with none of them a command that needs a judge stops and lists the choices)', (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
      .option('--judge-api-key <key>', 'API key (default: OPENAI_API_KEY, AZURE_OPENAI_API_KEY, ANTHROPIC_API_KEY or GEMINI_API_KEY by judge)');
  } else if (role === 'generator') {
    command
      .option('--generator <spec>', 'model that writes rubrics: openai:MODEL | gguf:PATH | gguf:default | … (default: the same rule as --judge)')
      .option('--generator-api-key <key>', 'API key of the generator (default: the provider\'s variable, as for --judge)');
  } else if (role === 'model') {
    command
      .option('--model <spec>', 'the model under test, whose responses are sampled and graded: openai:MODEL (--model-base-url for vLLM, SGLang, llama.cpp, Ollama) | azure:DEPLOYMENT | anthropic:MODEL | gemini:MODEL | gguf:PATH | scripted or scripted:NAME (made-up responses, offline); repeat to evaluate several models, one run each, and compare them (paired, by item)', (value: string, previous: string[] | undefined) => [...(previous ?? []), value])
      .option('--model-api-key <key>', "API key of the model under test (default: the provider's variable, as for --judge)");
  } else {
    command
      .option('--audit-judge <spec>', 'the reward-hacking monitor\'s judge: openai:MODEL | anthropic:MODEL | … (a sampled share of answered items graded again by it, in the background)')
      .option('--audit-api-key <key>', 'API key of the audit judge (default: the provider\'s variable, as for --judge)');
  }
  for (const row of modelRows) command.addOption(optionOf(row, modelFlagName(row, role), role === 'judge' ? row.description : `${roleLabel(role)}: ${row.description}`));
  return command;
}

/** The run-setting groups each command has the flags of: only those are read back into its spec. */
const runGroupsOfCommand = new WeakMap<Command, Set<FlagGroup>>();

/** The run-setting flags of the groups a command reads. */
export function addRunOptions(command: Command, groups: readonly FlagGroup[]): Command {
  const added = runGroupsOfCommand.get(command) ?? new Set<FlagGroup>();
  runGroupsOfCommand.set(command, added);
  for (const group of groups) added.add(group);
  for (const row of runRows) if (row.group && groups.includes(row.group)) command.addOption(optionOf(row));
  return command;
}

/** The run-setting groups whose flags a command has (see `addRunOptions`). */
export function runGroupsOf(command: Command): readonly FlagGroup[] {
  return [...(runGroupsOfCommand.get(command) ?? [])];
}

type ParsedFlags = Record<string, unknown>;

function assign(target: Record<string, unknown>, path: SettingPath, value: unknown): void {
  const keys = path.split('.');
  let current = target;
  for (const key of keys.slice(0, -1)) current = (current[key] ??= {}) as Record<string, unknown>;
  const last = keys[keys.length - 1];
  // A row for a whole group (`--rate-limit` → fleet) merges into it.
  current[last] = value !== null && typeof value === 'object' && !Array.isArray(value) && typeof current[last] === 'object' ? { ...(current[last] as object), ...value } : value;
}

/** The flags that were given, as a value for its row's path (a switch left at its default is not given). */
function givenValue(row: FlagRow, flags: ParsedFlags, name: string, isDefault: (attribute: string) => boolean): { given: boolean; value?: unknown } {
  const attribute = attributeOf(name);
  const value = flags[attribute];
  if (value === undefined || isDefault(attribute)) return { given: false };
  return { given: true, value: row.toSpec ? (row.toSpec as (value: unknown) => unknown)(value) : value };
}

/** The model spec the flags give for one spec string of a role (every `--judge` of a jury shares the settings). */
function modelSpecOf(flags: ParsedFlags, role: ModelRole, model: string | undefined): ModelSpec {
  const spec: Record<string, unknown> = model === undefined ? {} : { model };
  for (const row of modelRows) {
    const { given, value } = givenValue(row, flags, modelFlagName(row, role), () => false);
    if (given) assign(spec, row.path, value);
  }
  return spec as ModelSpec;
}

/** A model's spec and key as the flags of a role give them. */
export function modelFromFlags(flags: object, role: ModelRole): { models: ModelSpec[]; credentials: Credentials } {
  const parsed = flags as ParsedFlags;
  const given = parsed[attributeOf(roleFlags[role].model)] as string[] | string | undefined;
  const specs = given === undefined ? [] : Array.isArray(given) ? given : [given];
  const models = (specs.length > 0 ? specs : [undefined]).map((model) => modelSpecOf(parsed, role, model));
  const apiKey = parsed[attributeOf(roleFlags[role].apiKey)] as string | undefined;
  return { models, credentials: apiKey === undefined ? {} : { apiKey } };
}

/**
 * The run spec of a command's parsed flags: the judges' model specs and every run-setting row
 * given. `isDefault` tells a switch left at commander's own default (`--no-text` unset).
 */
export function runSpecFromFlags(flags: object, isDefault: (attribute: string) => boolean = () => false, groups?: readonly FlagGroup[]): RunSpec {
  const parsed = flags as ParsedFlags;
  const { models } = modelFromFlags(parsed, 'judge');
  const spec: Record<string, unknown> = { judges: models.some((model) => Object.keys(model).length > 0) ? models : [] };
  // The model under test: only for a command with its flags (`bench-local` has a `--model` of its own).
  if (groups?.includes('model')) spec.models = modelFromFlags(parsed, 'model').models.filter((model) => Object.keys(model).length > 0);
  // Only the rows of the groups given: a command's own option of the same name (meta's --group-by) is not a run setting.
  for (const row of groups ? runRows.filter((candidate) => candidate.group !== undefined && groups.includes(candidate.group)) : runRows) {
    const { given, value } = givenValue(row, parsed, row.name, isDefault);
    if (given) assign(spec, row.path, value);
  }
  return parseRunSpec(spec, 'flags');
}

/** The flag of a model-spec setting for a role, as the user typed it. */
export function flagOfSetting(path: SettingPath, role: ModelRole): string {
  if (path === 'apiKey') return `--${roleFlags[role].apiKey}`;
  const row = modelRows.find((candidate) => candidate.path === path);
  return row ? `--${modelFlagName(row, role)}` : path;
}

/**
 * Refuses, before any call, a model flag the chosen backend does not read (`--structured-output`
 * with `anthropic:`, `--threads` with `openai:`): exit 2, naming the flag and the backend.
 */
export function refuseUnreadModelFlags(models: readonly ModelSpec[], credentials: Credentials, role: ModelRole): void {
  for (const model of models) {
    const unread = unreadSettings(model, credentials);
    if (unread.length === 0) continue;
    const { prefix } = backendOf(model);
    const flags = unread.map((path) => flagOfSetting(path, role));
    throw new RubricateError('CONFIG_INVALID', `${flags.join(', ')} ${flags.length === 1 ? 'does' : 'do'} not apply to ${prefix === 'none' ? `--${roleFlags[role].model} none` : `${prefix}: ${role === 'model' ? 'the model under test' : `${roleLabel(role)}s`}`}: leave ${flags.length === 1 ? 'it' : 'them'} out`, {
      field: flags[0].replace(/^--/, ''),
    });
  }
}

/** The run-setting flag that sets a spec path (`calls.timeoutMs` → `--timeout`). */
export function runFlagOf(path: SettingPath): string {
  const row = runRows.find((candidate) => (candidate.sets ?? [candidate.path]).includes(path));
  return row ? `--${row.name}` : path;
}

/** Every row's spec path, for the test that every schema setting has a flag (or is library-only). */
export const flagPaths = { model: modelRows.flatMap((row) => row.sets ?? [row.path]), run: runRows.flatMap((row) => row.sets ?? [row.path]) };

/** The run spec of a command's flags as commander parsed them (a switch left at its default is not given). */
export function runSpecOf(command: Command): RunSpec {
  return runSpecFromFlags(command.opts(), (attribute) => command.getOptionValueSource(attribute) === 'default', runGroupsOf(command));
}
