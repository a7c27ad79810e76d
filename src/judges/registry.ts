/**
 * Model specs → judges. One backend per prefix, registered in a map, each declaring the
 * settings it reads (any other one given is refused by name) and where its key comes from:
 *   openai:MODEL            any OpenAI-compatible endpoint (OPENAI_BASE_URL / OPENAI_API_KEY)
 *   azure:DEPLOYMENT        Azure OpenAI (AZURE_OPENAI_ENDPOINT / AZURE_OPENAI_API_KEY, `api-key` header)
 *   anthropic:MODEL         Anthropic's Messages API (ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL)
 *   gemini:MODEL            Gemini's generateContent API (GEMINI_API_KEY or GOOGLE_API_KEY)
 *   gguf:PATH | gguf:hf:…   a local GGUF model through node-llama-cpp (loaded lazily)
 *   scripted:met|unmet|mixed  no model: replies made up to fit each request, labelled as such (trying commands offline)
 *   replay:FILE               verdicts a real judge recorded earlier, by item and criterion (src/judges/replay.ts)
 *   none                    no judge: only criteria with deterministic checks can be graded
 */
import { RubricateError } from '../errors.js';
import { azureEndpoint } from './openai/azure.js';
import { createAnthropicJudge, defaultAnthropicBaseUrl } from './anthropic/anthropic-judge.js';
import { createGeminiJudge, defaultGeminiBaseUrl } from './gemini/gemini-judge.js';
import { createOpenAICompatibleJudge } from './openai/openai-judge.js';
import { createScriptedJudge, parseScriptedVerdicts } from './scripted.js';
import { defaultLocalModelSize, defaultLocalModelUri } from './llamacpp/default-model.js';
import { createReplayJudge } from './replay.js';
import type { Judge } from './types.js';
import { createRegistry, type RegistryName } from '../util/registry.js';
import { modelSettingsSet, modelSpecSchema, parseWith, type Credentials, type ModelSpec, type SettingPath } from '../spec/run-spec.js';
import { registerCredentialHeaders, registerSecret } from '../util/redact.js';
import { registerBackendSettings } from '../spec/backend-settings.js';
import type { z } from 'zod';

/** What a judge is built with besides its model spec: never serialised, never in provenance. */
export interface JudgeBuildOptions extends Credentials {
  environment?: NodeJS.ProcessEnv;
  /** Where local models are downloaded (default: the user cache). */
  cacheDirectory?: string;
  onDownloadProgress?: (done: number, total: number) => void;
}

/** A backend's view of one build: the spec's target (text after the prefix), the spec, the resolved key. */
export interface JudgeBuild<Settings = unknown> {
  target: string;
  model: ModelSpec;
  /** The key given, or the backend's environment variable's: already registered for redaction. */
  apiKey: string | undefined;
  environment: NodeJS.ProcessEnv;
  options: JudgeBuildOptions;
  /** The spec's `settings` as the backend's own `settings` schema parsed them; absent when the spec gives none. */
  settings?: Settings;
}

export interface JudgeBackend<Settings = unknown> {
  create(build: JudgeBuild<Settings>): Promise<Judge | undefined>;
  /** The model-spec settings it reads (`endpoint.baseUrl`, `openai.profile`…): any other one set is refused by name. */
  reads: readonly SettingPath[];
  /** Environment variables of its API key, the first set wins; absent: it takes no key (one given is refused). */
  apiKeyVariables?: readonly string[];
  /**
   * The schema of its own settings, which a model spec gives in `settings` (as an AI SDK provider
   * parses its `providerOptions`): checked with the run spec, a setting it does not name refused
   * by name (make it a `z.strictObject`). Absent: a spec that gives `settings` is refused.
   */
  settings?: z.ZodType<Settings>;
}

export const defaultOpenAIModel = 'gpt-4.1';
export const defaultOpenAIBaseUrl = 'https://api.openai.com/v1';

const endpointSettings = ['endpoint.baseUrl', 'endpoint.headers', 'endpoint.extraBody', 'endpoint.maxReplyBytes', 'endpoint.cacheNamespace'] as const;
const openaiSettings = ['openai.transport', 'openai.structuredOutput', 'openai.reasoningEffort', 'openai.profile'] as const;

const openaiBackend: JudgeBackend = {
  reads: [...endpointSettings, ...openaiSettings],
  apiKeyVariables: ['OPENAI_API_KEY'],
  async create({ target: model, model: spec, apiKey, environment }) {
    if (!model) throw new RubricateError('CONFIG_INVALID', 'judge spec "openai:" needs a model name, e.g. openai:gpt-4.1', { field: 'judge' });
    const baseUrl = spec.endpoint?.baseUrl ?? environment.OPENAI_BASE_URL ?? defaultOpenAIBaseUrl;
    if (!apiKey && baseUrl === defaultOpenAIBaseUrl) {
      throw new RubricateError(
        'CONFIG_INVALID',
        'the OpenAI API needs a key: set OPENAI_API_KEY or pass --judge-api-key (or point OPENAI_BASE_URL / --judge-base-url at a local server)',
        { field: 'judge-api-key' },
      );
    }
    return createOpenAICompatibleJudge({ ...openAICompatibleOptions(spec), model, baseUrl, apiKey, id: `openai:${model}` });
  },
};

const azureBackend: JudgeBackend = {
  reads: [...endpointSettings, ...openaiSettings, 'openai.azureApiVersion'],
  apiKeyVariables: ['AZURE_OPENAI_API_KEY'],
  async create({ target: deployment, model: spec, apiKey, environment }) {
    if (!deployment) throw new RubricateError('CONFIG_INVALID', 'judge spec "azure:" needs a deployment name, e.g. azure:gpt-4o-judge', { field: 'judge' });
    const resource = spec.endpoint?.baseUrl ?? environment.AZURE_OPENAI_ENDPOINT;
    if (!resource) {
      throw new RubricateError('CONFIG_INVALID', 'azure: needs the resource URL: --judge-base-url https://RESOURCE.openai.azure.com (or AZURE_OPENAI_ENDPOINT)', { field: 'judge-base-url' });
    }
    if (!apiKey) throw new RubricateError('CONFIG_INVALID', 'azure: needs a key: --judge-api-key or AZURE_OPENAI_API_KEY', { field: 'judge-api-key' });
    const endpoint = azureEndpoint(resource, deployment, spec.openai?.azureApiVersion ?? environment.AZURE_OPENAI_API_VERSION ?? environment.OPENAI_API_VERSION);
    return createOpenAICompatibleJudge({
      ...openAICompatibleOptions(spec),
      model: deployment,
      baseUrl: endpoint.baseUrl,
      query: endpoint.query,
      apiKey,
      apiKeyHeader: 'api-key',
      provider: 'azure',
      id: `azure:${deployment}`,
    });
  },
};

/** What the OpenAI-compatible judge takes from a model spec, for `openai:` and `azure:` alike. */
function openAICompatibleOptions(spec: ModelSpec) {
  return {
    transport: spec.openai?.transport,
    structuredOutput: spec.openai?.structuredOutput,
    reasoningEffort: spec.openai?.reasoningEffort,
    profile: spec.openai?.profile,
    extraBody: spec.endpoint?.extraBody,
    headers: spec.endpoint?.headers,
    maxReplyBytes: spec.endpoint?.maxReplyBytes,
  };
}

const anthropicBackend: JudgeBackend = {
  reads: endpointSettings,
  apiKeyVariables: ['ANTHROPIC_API_KEY'],
  async create({ target: model, model: spec, apiKey, environment }) {
    if (!model) throw new RubricateError('CONFIG_INVALID', 'judge spec "anthropic:" needs a model name, e.g. anthropic:claude-sonnet-4-5', { field: 'judge' });
    const baseUrl = spec.endpoint?.baseUrl ?? environment.ANTHROPIC_BASE_URL ?? defaultAnthropicBaseUrl;
    if (!apiKey && baseUrl === defaultAnthropicBaseUrl) {
      throw new RubricateError('CONFIG_INVALID', 'the Anthropic API needs a key: set ANTHROPIC_API_KEY or pass --judge-api-key', { field: 'judge-api-key' });
    }
    const { headers, extraBody, maxReplyBytes } = spec.endpoint ?? {};
    return createAnthropicJudge({ model, baseUrl, apiKey, headers, extraBody, maxReplyBytes, id: `anthropic:${model}` });
  },
};

const geminiBackend: JudgeBackend = {
  reads: [...endpointSettings, 'gemini.thinkingBudget'],
  apiKeyVariables: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  async create({ target: model, model: spec, apiKey }) {
    if (!model) throw new RubricateError('CONFIG_INVALID', 'judge spec "gemini:" needs a model name, e.g. gemini:gemini-2.5-flash', { field: 'judge' });
    const baseUrl = spec.endpoint?.baseUrl ?? defaultGeminiBaseUrl;
    if (!apiKey && baseUrl === defaultGeminiBaseUrl) {
      throw new RubricateError('CONFIG_INVALID', 'the Gemini API needs a key: set GEMINI_API_KEY (or GOOGLE_API_KEY) or pass --judge-api-key', { field: 'judge-api-key' });
    }
    const { headers, extraBody, maxReplyBytes } = spec.endpoint ?? {};
    return createGeminiJudge({ model, baseUrl, apiKey, headers, extraBody, maxReplyBytes, thinkingBudget: spec.gemini?.thinkingBudget, id: `gemini:${model}` });
  },
};

const ggufBackend: JudgeBackend = {
  reads: ['endpoint.cacheNamespace', 'local.threads', 'local.sequences', 'local.contextSize'],
  async create({ target, model: spec, environment, options }) {
    if (!target) throw new RubricateError('CONFIG_INVALID', 'judge spec "gguf:" needs a model path or hf:USER/REPO:QUANT', { field: 'judge' });
    const { createLlamaCppJudge, resolveDefaultLocalModel, defaultModelCacheDirectory } = await import('./llamacpp/index.js');
    const cacheDirectory = options.cacheDirectory ?? defaultModelCacheDirectory(environment);
    // `gguf:default` is the embedded default: RUBRICATE_MODEL, else the default model in the cache (downloaded once).
    const model =
      target === 'default'
        ? await resolveDefaultLocalModel({ environment, cacheDirectory, download: true, onProgress: options.onDownloadProgress })
        : target;
    return createLlamaCppJudge({
      model,
      id: target === 'default' ? 'gguf:default' : `gguf:${target}`,
      ...spec.local,
      cacheDirectory,
      onDownloadProgress: options.onDownloadProgress,
    });
  },
};

/** Judge backends by spec prefix; `none` grades checks only. */
const backends = createRegistry(
  { what: 'judge', field: 'judge', display: (prefix) => (prefix === 'none' ? 'none' : `${prefix}:…`) },
  {
    openai: openaiBackend,
    azure: azureBackend,
    anthropic: anthropicBackend,
    gemini: geminiBackend,
    gguf: ggufBackend,
    scripted: { reads: [], create: async ({ target }) => createScriptedJudge(parseScriptedVerdicts(target)) } as JudgeBackend,
    replay: { reads: [], create: async ({ target }) => createReplayJudge(target) } as JudgeBackend,
    none: { reads: [], create: async () => undefined } as JudgeBackend,
  },
);

/** The built-in backends' spec prefixes. */
export type JudgePrefix = RegistryName<typeof backends>;

/**
 * Adds a backend for `prefix:…` specs, with the schema of its own settings when it has some.
 *
 * @example
 * ```ts
 * import { z } from 'zod';
 * import { createJudge, registerJudge } from 'rubricate';
 * registerJudge('echo', { reads: ['endpoint.cacheNamespace'], create: async ({ target }) => createJudge({ model: `scripted:${target}` }) });
 * // A backend's own settings: parsed with the run spec, an unknown one refused by name.
 * registerJudge<{ volume: number }>('loud', {
 *   reads: [],
 *   settings: z.strictObject({ volume: z.int().min(0).max(11).default(5) }),
 *   create: async ({ target, settings }) => createJudge({ model: `scripted:${target}-${settings?.volume ?? 5}` }),
 * });
 * await createJudge({ model: 'loud:x', settings: { volume: 11 } });
 * ```
 */
export function registerJudge<Settings>(prefix: string, backend: JudgeBackend<Settings>): void {
  backends.register(prefix, backend as JudgeBackend);
  registerBackendSettings(prefix, backend.settings);
}

/**
 * The judge to use when none is named: RUBRICATE_JUDGE if set; an OpenAI-compatible
 * endpoint when OPENAI_BASE_URL or OPENAI_API_KEY is set; otherwise the embedded local model.
 *
 * @example
 * ```ts
 * import { createJudge, defaultJudgeSpec } from 'rubricate';
 * const judge = await createJudge({ model: defaultJudgeSpec() });
 * ```
 */
export function defaultJudgeSpec(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.RUBRICATE_JUDGE) return environment.RUBRICATE_JUDGE;
  if (environment.OPENAI_BASE_URL || environment.OPENAI_API_KEY) {
    return `openai:${environment.RUBRICATE_JUDGE_MODEL ?? environment.OPENAI_MODEL ?? defaultOpenAIModel}`;
  }
  return 'gguf:default';
}

/**
 * The default rule without its last resort: undefined when nothing names a judge (no
 * RUBRICATE_JUDGE, no OpenAI endpoint or key, no RUBRICATE_MODEL file), where the rule would
 * download the embedded local model. Commands ask for a choice instead ({@link noJudgeConfigured}).
 */
export function configuredJudgeSpec(environment: NodeJS.ProcessEnv = process.env): string | undefined {
  const spec = defaultJudgeSpec(environment);
  return spec === 'gguf:default' && !environment.RUBRICATE_MODEL ? undefined : spec;
}

/** The error of a command that needs a model none of its flags or variables names: the three ways forward. */
export function noJudgeConfigured(role: 'judge' | 'generator' = 'judge'): RubricateError {
  const flag = `--${role}`;
  return new RubricateError(
    'CONFIG_INVALID',
    [
      `no ${role} given (${flag}) and none configured: nothing was sent, and no model is downloaded unasked. Choose one:`,
      `  an endpoint: ${flag} openai:MODEL with OPENAI_BASE_URL (vLLM, Ollama, a llama.cpp server…) and/or OPENAI_API_KEY; also anthropic:, gemini:, azure:`,
      `  a local model: ${flag} gguf:default (${defaultLocalModelUri}, ${defaultLocalModelSize}, downloaded once) or ${flag} gguf:/path/model.gguf`,
      `  offline, made-up verdicts to try the pipeline: ${flag} scripted, or \`rubricate fake-judge\` as the endpoint`,
      ...(role === 'judge' ? ['  (--judge none grades deterministic checks only)'] : []),
    ].join('\n'),
    { field: role },
  );
}

/** A judge spec naming a backend and its target (`openai:gpt-4.1`, `gguf:default`): always builds a judge. */
export type JudgeSpec = `${string}:${string}`;

/** A model spec's backend: its prefix, target and registry entry (the default rule when the spec names none). */
export function backendOf(model: ModelSpec, environment: NodeJS.ProcessEnv = process.env): { spec: string; prefix: string; target: string; backend: JudgeBackend } {
  const spec = model.model ?? defaultJudgeSpec(environment);
  const separator = spec.indexOf(':');
  const prefix = separator === -1 ? spec : spec.slice(0, separator);
  const backend = backends.find(prefix);
  if (!backend) throw backends.unknown(spec);
  return { spec, prefix, target: separator === -1 ? '' : spec.slice(separator + 1), backend };
}

/**
 * The settings of a model spec (and the key beside it) that its backend would not read: each is
 * refused rather than dropped. `apiKey` stands for a key given to a backend that takes none.
 *
 * @example
 * ```ts
 * import { unreadSettings } from 'rubricate';
 * // ['openai.structuredOutput']: the anthropic backend does not read it
 * const unread = unreadSettings({ model: 'anthropic:claude-sonnet-4-5', openai: { structuredOutput: 'none' } });
 * ```
 */
export function unreadSettings(model: ModelSpec, credentials: Credentials = {}, environment?: NodeJS.ProcessEnv): SettingPath[] {
  const { backend } = backendOf(model, environment);
  const unread = modelSettingsSet(model).filter((path) => !backend.reads.includes(path) && !(path === 'settings' && backend.settings));
  if (credentials.apiKey !== undefined && !backend.apiKeyVariables) unread.push('apiKey');
  return unread;
}

/**
 * The API key a backend uses: the one given, else its environment variable's. Every key enters
 * through here and is registered for redaction at once, whichever backend or wrapper sends it.
 */
export function apiKeyFor(model: ModelSpec, credentials: Credentials = {}, environment: NodeJS.ProcessEnv = process.env): string | undefined {
  const { backend } = backendOf(model, environment);
  const key = credentials.apiKey ?? backend.apiKeyVariables?.map((name) => environment[name]).find((value) => value !== undefined && value !== '');
  registerSecret(key);
  return key;
}

/**
 * Builds the judge a model spec names. A `prefix:target` spec always gives a `Judge` (a backend
 * that returns none for one is an error); `none` gives `undefined` (checks only); with no
 * `model` the default rule picks one. A setting the backend does not read is CONFIG_INVALID
 * naming it, before anything is built.
 *
 * @example
 * ```ts
 * import { createJudge } from 'rubricate';
 * const judge = await createJudge({ model: 'openai:gpt-4.1-mini', endpoint: { baseUrl: 'http://localhost:8000/v1' } });
 * ```
 */
export async function createJudge(model: ModelSpec & { model: JudgeSpec }, options?: JudgeBuildOptions): Promise<Judge>;
export async function createJudge(model: ModelSpec & { model: 'none' }, options?: JudgeBuildOptions): Promise<undefined>;
export async function createJudge(model: ModelSpec, options?: JudgeBuildOptions): Promise<Judge | undefined>;
export async function createJudge(input: ModelSpec, options: JudgeBuildOptions = {}): Promise<Judge | undefined> {
  const model = parseWith(modelSpecSchema, input, 'judge spec');
  const environment = options.environment ?? process.env;
  const { spec, prefix, target, backend } = backendOf(model, environment);
  const unread = unreadSettings(model, options, environment);
  if (unread.length > 0) {
    throw new RubricateError('CONFIG_INVALID', `${unread.join(', ')} ${unread.length === 1 ? 'is' : 'are'} not read by ${prefix === 'none' ? 'judge "none"' : `${prefix}: judges`}: leave ${unread.length === 1 ? 'it' : 'them'} out`, { field: unread[0] });
  }
  if (model.endpoint?.headers) registerCredentialHeaders(model.endpoint.headers);
  // Checked with the spec already (`spec/backend-settings.ts`); parsed again here for the backend's own values (defaults, transforms).
  const settings = backend.settings && model.settings !== undefined ? parseWith(backend.settings, model.settings, `judge spec settings (${prefix}:)`) : undefined;
  const judge = await backend.create({ target, model, apiKey: apiKeyFor(model, options, environment), environment, options, ...(settings !== undefined ? { settings } : {}) });
  if (!judge && spec.includes(':')) {
    throw new RubricateError('CONFIG_INVALID', `judge "${spec}" did not build a judge (use "none" for checks only)`, { field: 'judge' });
  }
  // Replies are cached per namespace instead of per endpoint (`--cache-namespace`).
  if (judge && model.endpoint?.cacheNamespace !== undefined) judge.provenance.cacheNamespace = model.endpoint.cacheNamespace;
  return judge;
}
