/**
 * The run spec: every setting of a run in one typed, serialisable value, in named groups. It is
 * parsed once (from the CLI's flags, a server's options or a queued chunk) and each layer takes
 * its group whole: judges a `ModelSpec`, the grading strategy the `GradingPlan`, the engine the
 * `CallPolicy`. Credentials are never part of it, so a spec can travel over the queue and into
 * provenance as it is; they are passed beside it (`Credentials`).
 *
 * One zod schema per group; the types derive from them. A group's optional fields are absent
 * when not given, so a component can tell "not set" (its default applies) from a value it must
 * honour or refuse.
 *
 * @example
 * ```ts
 * const spec = parseRunSpec({ judges: [{ model: 'openai:gpt-4.1-mini' }], plan: { explanation: 'short' } });
 * ```
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import { alignmentSchema } from './alignment.js';
import { backendSettingsField, checkBackendSettings } from './backend-settings.js';
import { calibrationSchema } from './calibration.js';

const positiveInteger = z.int().positive();

/** How much the judge writes before each verdict (see `grading/explanation.ts`). */
export const explanationLengths = ['full', 'short', 'none'] as const;
export type ExplanationLength = (typeof explanationLengths)[number];

export const structuredOutputModes = ['auto', 'json_schema', 'json_object', 'none'] as const;
export type StructuredOutputMode = (typeof structuredOutputModes)[number];

export const reasoningEfforts = ['none', 'minimal', 'low', 'medium', 'high'] as const;

/** What a judge call's reply is read as: a binary verdict, P(met) from token probabilities, or an expected score over an ordinal scale's options. */
export const verdictKinds = ['binary', 'probability', 'expected-score'] as const;

/** The `--mode`s a grading plan takes; each is an entry of the grading-modes registry (`pipeline/grading-modes.ts`). */
export const gradingModeNames = ['per-criterion', 'batched', 'holistic', 'listwise', 'tournament'] as const;

/** Prompt layouts and reply formats a judge may be trained on (`grading/prometheus.ts`, `grading/protocols/`). */
export const judgeProtocols = ['native', 'prometheus', 'r3', 'selene', 'lynx'] as const;
export type JudgeProtocol = (typeof judgeProtocols)[number];

/** Why a cascade hands a criterion to its next judge (see `pipeline/cascade.ts`). */
export const escalationReasons = ['band', 'disagreement', 'abstain', 'error'] as const;
export type EscalationReason = (typeof escalationReasons)[number];
/** How a criterion the judge could not assess counts (see `grading/abstain.ts`): left out, not met, half its points, or the item fails. */
export const abstainPolicies = ['skip', 'not_met', 'half', 'fail'] as const;
export type AbstainPolicy = (typeof abstainPolicies)[number];

/** Where a model is reached: read by every HTTP backend alike. */
export const endpointSchema = z.strictObject({
  /** Base URL (default: the provider's, or its environment variable). */
  baseUrl: z.string().min(1).optional(),
  /** Extra HTTP headers on every call (names lower-cased). */
  headers: z.record(z.string(), z.string()).optional(),
  /** Fields merged into every request body. */
  extraBody: z.record(z.string(), z.unknown()).optional(),
  /** Largest reply body read; a bigger one is JUDGE_REPLY_TOO_LARGE (default 8 MiB). */
  maxReplyBytes: positiveInteger.optional(),
  /** Replaces the endpoint's identity in the reply cache key: models with one namespace share replies. */
  cacheNamespace: z.string().min(1).optional(),
});

/** What only OpenAI-compatible backends (`openai:`, `azure:`) read. */
export const openaiCompatibleSchema = z.strictObject({
  /** `http` (the lean keep-alive client, default) or `sdk` (the openai package). */
  transport: z.enum(['http', 'sdk']).optional(),
  structuredOutput: z.enum(structuredOutputModes).optional(),
  reasoningEffort: z.enum(reasoningEfforts).optional(),
  /** Capability profile name; default chosen from the endpoint and model. */
  profile: z.string().min(1).optional(),
  /** Azure's api-version for classic deployment URLs (`azure:` only). */
  azureApiVersion: z.string().min(1).optional(),
});

/** What only `gemini:` reads. */
export const geminiSchema = z.strictObject({
  /** Thinking tokens per call: 0 off, -1 the model decides; default off where the model allows. */
  thinkingBudget: z.int().min(-1).optional(),
});

/** What only local GGUF models (`gguf:`) read. */
export const localModelSchema = z.strictObject({
  threads: positiveInteger.optional(),
  sequences: positiveInteger.optional(),
  contextSize: positiveInteger.optional(),
});

/**
 * How to reach a model: a judge, a generator, an audit judge.
 *
 * @example
 * ```ts
 * import { modelSpecSchema } from 'rubricate';
 * const model = modelSpecSchema.parse({ model: 'openai:gpt-4.1-mini', endpoint: { baseUrl: 'http://localhost:8000/v1' } });
 * ```
 */
export const modelSpecSchema = z.strictObject({
  /** `openai:MODEL`, `azure:DEPLOYMENT`, `anthropic:MODEL`, `gemini:MODEL`, `gguf:PATH`, `none`; absent: the default rule. */
  model: z.string().min(1).optional(),
  endpoint: endpointSchema.optional(),
  openai: openaiCompatibleSchema.optional(),
  gemini: geminiSchema.optional(),
  local: localModelSchema.optional(),
  /** What a backend added with `registerJudge` reads, under the names its own schema gives them (`spec/backend-settings.ts`). */
  settings: backendSettingsField.optional(),
}).superRefine(checkBackendSettings);

/** Sampling every OpenAI-compatible server accepts: temperature in [0, 2], an integer seed. */
const temperatureRange = { error: 'temperature must be between 0 and 2' };
export const samplingSchema = z.strictObject({
  temperature: z.number(temperatureRange).min(0, temperatureRange).max(2, temperatureRange).optional(),
  maxTokens: z.int({ error: 'max tokens must be a positive integer' }).positive({ error: 'max tokens must be a positive integer' }).optional(),
  seed: z.int({ error: 'seed must be an integer' }).optional(),
});

/**
 * How the model under test is sampled (`rubricate eval`): recorded with every response it gives.
 * Absent fields are left to the model's own defaults (nothing is sent for them).
 */
export const modelSamplingSchema = z.strictObject({
  temperature: z.number(temperatureRange).min(0, temperatureRange).max(2, temperatureRange).optional(),
  /** Nucleus sampling: the probability mass sampled from, in (0, 1]. */
  topP: z.number({ error: 'top_p must be a number in (0, 1]' }).gt(0, { error: 'top_p must be a number in (0, 1]' }).max(1, { error: 'top_p must be a number in (0, 1]' }).optional(),
  maxTokens: z.int({ error: 'max tokens must be a positive integer' }).positive({ error: 'max tokens must be a positive integer' }).optional(),
  seed: z.int({ error: 'seed must be an integer' }).optional(),
  /** Responses sampled per prompt (pass@k, GRPO-style groups); each is graded on its own line. Default 1. */
  samplesPerPrompt: positiveInteger.optional(),
});

/** What each judge call asks and how its reply is read. */
export const gradingPlanSchema = z.strictObject({
  /**
   * `per-criterion` (default), `batched`, `holistic` (one Likert call per item), `listwise` (the
   * responses of a group in one call) or `tournament` (the responses of a group compared in pairs).
   */
  mode: z.enum(gradingModeNames).optional(),
  /** Listwise and tournament: the item field naming each item's group (a dotted path: `metadata.prompt_id`); default: items in a row with the same prompt, rubric and reference. */
  groupBy: z.string().min(1).optional(),
  /** Listwise: a verdict per response and criterion (`criteria`, default), or one Likert score per response on the whole rubric (`holistic`). */
  listwise: z.enum(['criteria', 'holistic']).optional(),
  /** Tournament: `all` pairs (default) or `circular` (each response against the next). */
  tournament: z.enum(['circular', 'all']).optional(),
  /** Listwise and tournament: presentation orders, 1 or 2 (the reverse too, reporting position consistency); default listwise 1, tournament 2. */
  orders: z.union([z.literal(1), z.literal(2)]).optional(),
  /** Criteria per call in batched mode, or `all` (the whole rubric); default 1. */
  criteriaPerCall: z.union([positiveInteger, z.literal('all')]).optional(),
  /** `binary` verdicts (default), P(met) from token probabilities, or `expected-score`: G-Eval's probability-weighted mean over an ordinal scale's options (P(met) for binary criteria). */
  verdict: z.enum(verdictKinds).optional(),
  /** Probability verdicts: alternatives asked per token (default 20, the most OpenAI returns). */
  topLogprobs: z.int().min(1).max(20).optional(),
  /** Default `full` for endpoints, `short` for local judges. */
  explanation: z.enum(explanationLengths).optional(),
  /** `native` (rubricate's templates, default), `prometheus` (1–5 rubrics, `[RESULT] n`), `r3`, `selene` or `lynx` (their own layouts and reply formats). */
  protocol: z.enum(judgeProtocols).optional(),
  /** A grading prompt of the user's own (the text of `--judge-template FILE`; variables in `grading/custom-template.ts`). */
  template: z.string().min(1).optional(),
  /** Levels of the holistic scale (holistic mode and listwise holistic only; default 10). */
  likertLevels: positiveInteger.optional(),
  /** Judge context budget in tokens: longer responses are read in chunks for evidence. */
  contextBudget: positiveInteger.optional(),
  sampling: samplingSchema.optional(),
  /** Let the judge answer cannot_assess, counted by this policy; absent: off (the judge must decide). */
  abstain: z.enum(abstainPolicies).optional(),
  /**
   * What `rubricate align` learnt from labels (examples, rewordings, a calibrator), applied to every
   * call (`spec/alignment.ts`). One setting, given whole by one flag: lazy, so that `settingPaths`
   * sees a leaf rather than the alignment's own fields.
   */
  alignment: z.lazy(() => alignmentSchema).optional(),
});

/** How each call is made: attempts, time and parallelism. */
export const callPolicySchema = z.strictObject({
  /** Calls per criterion before its error is final (default 5). */
  maxAttempts: positiveInteger.optional(),
  /** Per-call timeout (default 120 s). */
  timeoutMs: z.number().positive().optional(),
  /** Longest wait a Retry-After may impose per retry (default 60 s, never beyond the timeout). */
  maxRetryAfterMs: z.number().min(0).optional(),
  /** First retry delay; later ones double, with jitter (default 500 ms). */
  retryBaseDelayMs: z.number().min(0).optional(),
  /** Longest delay between retries (default 30 s). */
  retryMaxDelayMs: z.number().min(0).optional(),
  /** Calls in flight (default 16); adapts down on 429/503. */
  concurrency: positiveInteger.optional(),
  /** Consecutive hard failures that stop the run (default 20; 0 never stops). */
  breakerThreshold: z.int().min(0).optional(),
});

/** Several judges, or several samples of one, decide each criterion together. */
export const jurySchema = z.strictObject({
  /** `majority` (default) or `mean` of the votes. */
  aggregate: z.enum(['majority', 'mean']).optional(),
  /** Samples per judge (self-consistency; needs a temperature above 0). Default 1. */
  samples: positiveInteger.optional(),
});

const probabilityBound = z.number().min(0).max(1);

/** Cheap judges first: a criterion goes to the next judge only when the rule says so. */
export const cascadeSchema = z.strictObject({
  /** The judges after the run's own (`judges`), in the order criteria escalate to them. */
  judges: z.array(modelSpecSchema).min(1).optional(),
  /** An earlier judge's P(met) inside [low, high] (inclusive) escalates. */
  band: z.tuple([probabilityBound, probabilityBound]).refine(([low, high]) => low <= high, { message: 'the band is [low, high] with low ≤ high' }).optional(),
  /** Reasons that escalate (default: every reason that applies to the run). */
  escalateOn: z.array(z.enum(escalationReasons)).min(1).optional(),
});

/** The self-preference guard: a judge grading its own model's (or family's) answers. */
export const guardSchema = z.strictObject({
  /** The model whose answers are graded, for every item (items may name theirs in `metadata.model`). */
  modelUnderTest: z.string().min(1).optional(),
  /** `warn` (default): grade and record it; `refuse`: grade nothing a judge of the same model or family would. */
  selfPreference: z.enum(['warn', 'refuse']).optional(),
});

/** How graded items become scores. */
export const scoringSpecSchema = z.strictObject({
  /** A registered scoring; default the input format's own, else `weighted_mean`. */
  name: z.string().min(1).optional(),
  /** Count failed judge calls as "not met" in the metrics (as some references do); never the default. */
  failedAsZero: z.boolean().optional(),
  /** IFEval strict or loose evaluation of deterministic checks (default strict). */
  checkMode: z.enum(['strict', 'loose']).optional(),
  /**
   * A score calibration written by `rubricate calibrate --format results` (`spec/calibration.ts`):
   * each result also gets the overall score people would give, from its criteria's verdicts. One
   * setting, given whole by one flag: lazy, so that `settingPaths` sees a leaf.
   */
  calibration: z.lazy(() => calibrationSchema).optional(),
});

/** Limits shared by every process on one Redis store. */
export const fleetSchema = z.strictObject({
  globalConcurrency: positiveInteger.optional(),
  requestsPerMinute: positiveInteger.optional(),
  tokensPerMinute: positiveInteger.optional(),
  /** How long a crashed process's calls keep their slots (default 10 s). */
  leaseMs: z.number().positive().optional(),
});

/**
 * Bounds on work whose size comes from a request or a flag, checked before any memory or judge
 * call is spent on it. A group or tournament over its bound is `LIMIT_EXCEEDED` (HTTP 413; on the
 * command line its items are in error); a count over `maxRepeats` is refused at start-up.
 */
export const limitsSchema = z.strictObject({
  /** Responses in one group (listwise, tournament, `/v1/score/group`); default `defaultLimits.maxGroupSize`. */
  maxGroupSize: positiveInteger.optional(),
  /** Comparisons one tournament group may take (both orders count as one); default `defaultLimits.maxTournamentPairs`. */
  maxTournamentPairs: positiveInteger.optional(),
  /** Largest count that multiplies every item's judge calls: `--repeats`, `--samples`, `--max-attempts`, `--best-of`, `--variants`, `--rounds`, `--iterations`, `--responses-per-prompt`; default `defaultLimits.maxRepeats`. */
  maxRepeats: positiveInteger.optional(),
  /** Steps of one trajectory graded by step-scoped criteria (process rewards); default `defaultLimits.maxSteps`. */
  maxSteps: positiveInteger.optional(),
});

/** The bounds when none is given: an RL group of 512 responses, all pairs of 128 (or a circular tournament of 512), 100 repeats, and 64 steps per trajectory. */
export const defaultLimits = { maxGroupSize: 512, maxTournamentPairs: 8128, maxRepeats: 100, maxSteps: 64 } as const satisfies Required<z.infer<typeof limitsSchema>>;

/**
 * A count that multiplies every item's judge calls (`--repeats`, `--samples`, `--best-of`, …),
 * refused over `limits.maxRepeats` before anything is made for it: CONFIG_INVALID naming the
 * flag and the bound's own flag.
 */
export function checkRepeatCount(limits: Limits, flag: string, count: number): void {
  const bound = limits.maxRepeats ?? defaultLimits.maxRepeats;
  if (count > bound) {
    throw new RubricateError('CONFIG_INVALID', `${flag} ${count} is over the bound of ${bound} (--max-repeats): it multiplies every item's judge calls; give a smaller ${flag}, or raise --max-repeats`, {
      field: flag.replace(/^--/, ''),
      limit: 'max-repeats',
      maximum: bound,
    });
  }
}

/** Tools an agentic judge may call before its verdict (`src/judges/agentic/`). */
export const agenticToolNames = ['fetch', 'search', 'check', 'steps'] as const;
export type AgenticToolName = (typeof agenticToolNames)[number];

/**
 * The agentic judge: the judge may call these tools in a bounded loop before each verdict. Every
 * other field is read only when `tools` is given, each only by its own tool (refused otherwise).
 */
export const agenticSchema = z.strictObject({
  /** The tools offered (`fetch`, `search`, `check`, `steps`); absent: the judge calls none. */
  tools: z.array(z.enum(agenticToolNames)).min(1).optional(),
  /** Tool calls one verdict may make (default 4); one more asked for is JUDGE_TOOL_BUDGET. */
  maxToolCalls: positiveInteger.optional(),
  /** `fetch`: the hosts it may read (`example.org`, `*.example.org`, `127.0.0.1:8080`); a loopback or private address only when named here as itself. */
  fetchAllow: z.array(z.string().min(1)).min(1).optional(),
  /** `fetch`: bytes one verdict may read over all its fetches (default 262144). */
  fetchMaxBytes: positiveInteger.optional(),
  /** `fetch`: time one fetch may take, redirects included (default 10 s). */
  fetchTimeoutMs: z.number().positive().optional(),
  /** `search`: the documents searched, a folder of text files or a JSONL file of `{id, text, title?, url?}`. */
  documents: z.string().min(1).optional(),
});

/**
 * Every setting of a run, in groups (`judges`, `plan`, `calls`, `jury`, `scoring`…).
 *
 * @example
 * ```ts
 * import { runSpecSchema } from 'rubricate';
 * const groups = Object.keys(runSpecSchema.shape); // judges, plan, calls, jury, scoring…
 * ```
 */
export const runSpecSchema = z.strictObject({
  /** One model spec per judge; several form a jury. Empty: the default judge rule. */
  judges: z.array(modelSpecSchema).default([]),
  /** The model under test, whose responses `rubricate eval` samples before grading them; empty: the responses come with the input. */
  models: z.array(modelSpecSchema).default([]),
  /** How the model under test is sampled. */
  sampling: modelSamplingSchema.default({}),
  plan: gradingPlanSchema.default({}),
  calls: callPolicySchema.default({}),
  jury: jurySchema.default({}),
  scoring: scoringSpecSchema.default({}),
  fleet: fleetSchema.default({}),
  cascade: cascadeSchema.default({}),
  guard: guardSchema.default({}),
  limits: limitsSchema.default({}),
  agentic: agenticSchema.default({}),
  /** Stored replies older than this count as absent. */
  cacheTtlMs: z.number().positive().optional(),
  /** Leave prompt and response text out of the results. */
  omitText: z.boolean().default(false),
  /** Keep each judge call's exact request, raw reply and latency in the results (large; redacted like every output). */
  keepRequests: z.boolean().default(false),
});

export type ModelSpec = z.infer<typeof modelSpecSchema>;
export type GradingPlan = z.infer<typeof gradingPlanSchema>;
export type ModelSampling = z.infer<typeof modelSamplingSchema>;
export type CallPolicy = z.infer<typeof callPolicySchema>;
export type JurySettings = z.infer<typeof jurySchema>;
export type ScoringSpec = z.infer<typeof scoringSpecSchema>;
export type FleetLimits = z.infer<typeof fleetSchema>;
export type GuardSpec = z.infer<typeof guardSchema>;
export type Limits = z.infer<typeof limitsSchema>;
export type AgenticSettings = z.infer<typeof agenticSchema>;
export type RunSpec = z.infer<typeof runSpecSchema>;
/** A run spec as written: every group and field may be left out. */
export type RunSpecInput = z.input<typeof runSpecSchema>;

/** What authenticates a model call: passed beside a `ModelSpec`, never inside it. */
export interface Credentials {
  /** The API key; default: the backend's environment variable. */
  apiKey?: string;
}

/** A spec path such as `plan.explanation` or `openai.structuredOutput`. */
export type SettingPath = string;

/**
 * Parses a spec (options a library user wrote, a chunk a worker took off the queue) with its
 * defaults filled in; a wrong field is CONFIG_INVALID naming its path.
 *
 * @example
 * ```ts
 * import { parseRunSpec } from 'rubricate';
 * const spec = parseRunSpec({ judges: [{ model: 'openai:gpt-4.1-mini' }], plan: { explanation: 'short' } });
 * ```
 */
export function parseRunSpec(input: unknown, source = 'run spec'): RunSpec {
  return parseWith(runSpecSchema, input, source);
}

export function parseWith<Schema extends z.ZodType>(schema: Schema, input: unknown, source: string): z.infer<Schema> {
  const parsed = schema.safeParse(input);
  if (parsed.success) return parsed.data;
  throw zodIssueError(parsed.error, { code: 'CONFIG_INVALID', prefix: `${source}: `, pathInMessage: true, unknownKeys: 'first' });
}

/**
 * The leaf settings of a group (paths of fields holding values, not groups), in schema order:
 * what flag mappings and the queue test enumerate, so a field added to the schema is seen by both.
 */
export function settingPaths(schema: z.ZodType = runSpecSchema, prefix = ''): SettingPath[] {
  const object = unwrapObject(schema);
  if (!object) return [prefix];
  return Object.entries(object.shape)
    .filter(([, field]) => !isBackendOwned(field as z.ZodType))
    .flatMap(([key, field]) => settingPaths(field as z.ZodType, prefix ? `${prefix}.${key}` : key));
}

/** A backend's own settings: named by the backend's schema, not this one's. */
function isBackendOwned(field: z.ZodType): boolean {
  return (field instanceof z.ZodOptional ? field.unwrap() : field) === backendSettingsField;
}

function unwrapObject(schema: z.ZodType): z.ZodObject | undefined {
  let current: z.ZodType = schema;
  // Optional and default wrappers hold the field's own schema.
  while (current instanceof z.ZodOptional || current instanceof z.ZodDefault) current = current.unwrap() as z.ZodType;
  return current instanceof z.ZodObject ? current : undefined;
}

/** The value at a dotted path of a plain object (absent on the way: undefined). */
export function settingAt(value: unknown, path: SettingPath): unknown {
  let current = value;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = Object.hasOwn(current, key) ? (current as Record<string, unknown>)[key] : undefined;
  }
  return current;
}

/** The settings a model spec sets, as paths (`endpoint.baseUrl`, `openai.profile`…), `model` excepted. */
export function modelSettingsSet(model: ModelSpec): SettingPath[] {
  const paths = settingPaths(modelSpecSchema).filter((path) => path !== 'model' && settingAt(model, path) !== undefined);
  return model.settings === undefined ? paths : [...paths, 'settings'];
}
