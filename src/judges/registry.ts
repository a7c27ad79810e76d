/**
 * Judge specs → judges. One factory per prefix, registered in a map:
 *   openai:MODEL            any OpenAI-compatible endpoint (OPENAI_BASE_URL / OPENAI_API_KEY)
 *   azure:DEPLOYMENT        Azure OpenAI (AZURE_OPENAI_ENDPOINT / AZURE_OPENAI_API_KEY, `api-key` header)
 *   anthropic:MODEL         Anthropic's Messages API (ANTHROPIC_API_KEY / ANTHROPIC_BASE_URL)
 *   gemini:MODEL            Gemini's generateContent API (GEMINI_API_KEY or GOOGLE_API_KEY)
 *   gguf:PATH | gguf:hf:…   a local GGUF model through node-llama-cpp (loaded lazily)
 *   none                    no judge: only criteria with deterministic checks can be graded
 */
import { RubricateError } from '../errors.js';
import { azureEndpoint } from './openai/azure.js';
import { createAnthropicJudge, defaultAnthropicBaseUrl } from './anthropic/anthropic-judge.js';
import { createGeminiJudge, defaultGeminiBaseUrl } from './gemini/gemini-judge.js';
import { createOpenAICompatibleJudge, type StructuredOutputMode } from './openai/openai-judge.js';
import type { Judge } from './types.js';
import { createRegistry, type RegistryName } from '../util/registry.js';

export interface JudgeConfig {
  /** `openai:MODEL`, `gguf:PATH`, `gguf:hf:USER/REPO:QUANT` or `none`; absent → the default rule. */
  spec?: string;
  baseUrl?: string;
  apiKey?: string;
  transport?: 'http' | 'sdk';
  structuredOutput?: StructuredOutputMode;
  extraBody?: Record<string, unknown>;
  /** Extra HTTP headers sent with every call (`--judge-header`). */
  headers?: Record<string, string>;
  /** `reasoning_effort` for reasoning models (`--reasoning-effort`). */
  reasoningEffort?: string;
  /** Capability profile name (`--judge-profile`); default: chosen from the endpoint and model. */
  profile?: string;
  /** Azure OpenAI api-version (`--azure-api-version`), classic deployment URLs. */
  azureApiVersion?: string;
  /** Gemini: thinking tokens per call (0 turns thinking off where the model allows; -1 lets the model decide). */
  thinkingBudget?: number;
  /** Local models: threads (default: physical cores) and parallel sequences. */
  threads?: number;
  sequences?: number;
  contextSize?: number;
  cacheDirectory?: string;
  environment?: NodeJS.ProcessEnv;
  /** Largest judge reply read (HTTP judges); default 8 MiB. */
  maxReplyBytes?: number;
  onDownloadProgress?: (done: number, total: number) => void;
}

export type JudgeFactory = (target: string, config: JudgeConfig) => Promise<Judge | undefined>;

export const defaultOpenAIModel = 'gpt-4.1';
export const defaultOpenAIBaseUrl = 'https://api.openai.com/v1';

const openaiFactory: JudgeFactory = async (model, config) => {
  const environment = config.environment ?? process.env;
  if (!model) throw new RubricateError('CONFIG_INVALID', 'judge spec "openai:" needs a model name, e.g. openai:gpt-4.1', { field: 'judge' });
  const baseUrl = config.baseUrl ?? environment.OPENAI_BASE_URL ?? defaultOpenAIBaseUrl;
  const apiKey = config.apiKey ?? environment.OPENAI_API_KEY;
  if (!apiKey && baseUrl === defaultOpenAIBaseUrl) {
    throw new RubricateError(
      'CONFIG_INVALID',
      'the OpenAI API needs a key: set OPENAI_API_KEY or pass --judge-api-key (or point OPENAI_BASE_URL / --judge-base-url at a local server)',
      { field: 'judge-api-key' },
    );
  }
  return createOpenAICompatibleJudge({
    model,
    baseUrl,
    apiKey,
    transport: config.transport,
    structuredOutput: config.structuredOutput,
    extraBody: config.extraBody,
    headers: config.headers,
    reasoningEffort: config.reasoningEffort,
    profile: config.profile,
    id: `openai:${model}`,
    maxReplyBytes: config.maxReplyBytes,
  });
};

const azureFactory: JudgeFactory = async (deployment, config) => {
  const environment = config.environment ?? process.env;
  if (!deployment) throw new RubricateError('CONFIG_INVALID', 'judge spec "azure:" needs a deployment name, e.g. azure:gpt-4o-judge', { field: 'judge' });
  const resource = config.baseUrl ?? environment.AZURE_OPENAI_ENDPOINT;
  if (!resource) {
    throw new RubricateError('CONFIG_INVALID', 'azure: needs the resource URL: --judge-base-url https://RESOURCE.openai.azure.com (or AZURE_OPENAI_ENDPOINT)', { field: 'judge-base-url' });
  }
  const apiKey = config.apiKey ?? environment.AZURE_OPENAI_API_KEY;
  if (!apiKey) throw new RubricateError('CONFIG_INVALID', 'azure: needs a key: --judge-api-key or AZURE_OPENAI_API_KEY', { field: 'judge-api-key' });
  const endpoint = azureEndpoint(resource, deployment, config.azureApiVersion ?? environment.AZURE_OPENAI_API_VERSION ?? environment.OPENAI_API_VERSION);
  return createOpenAICompatibleJudge({
    model: deployment,
    baseUrl: endpoint.baseUrl,
    query: endpoint.query,
    apiKey,
    apiKeyHeader: 'api-key',
    provider: 'azure',
    transport: config.transport,
    structuredOutput: config.structuredOutput,
    extraBody: config.extraBody,
    headers: config.headers,
    reasoningEffort: config.reasoningEffort,
    profile: config.profile,
    id: `azure:${deployment}`,
  });
};

const anthropicFactory: JudgeFactory = async (model, config) => {
  const environment = config.environment ?? process.env;
  if (!model) throw new RubricateError('CONFIG_INVALID', 'judge spec "anthropic:" needs a model name, e.g. anthropic:claude-sonnet-4-5', { field: 'judge' });
  const baseUrl = config.baseUrl ?? environment.ANTHROPIC_BASE_URL ?? defaultAnthropicBaseUrl;
  const apiKey = config.apiKey ?? environment.ANTHROPIC_API_KEY;
  if (!apiKey && baseUrl === defaultAnthropicBaseUrl) {
    throw new RubricateError('CONFIG_INVALID', 'the Anthropic API needs a key: set ANTHROPIC_API_KEY or pass --judge-api-key', { field: 'judge-api-key' });
  }
  return createAnthropicJudge({ model, baseUrl, apiKey, headers: config.headers, extraBody: config.extraBody, id: `anthropic:${model}` });
};

const geminiFactory: JudgeFactory = async (model, config) => {
  const environment = config.environment ?? process.env;
  if (!model) throw new RubricateError('CONFIG_INVALID', 'judge spec "gemini:" needs a model name, e.g. gemini:gemini-2.5-flash', { field: 'judge' });
  const baseUrl = config.baseUrl ?? defaultGeminiBaseUrl;
  const apiKey = config.apiKey ?? environment.GEMINI_API_KEY ?? environment.GOOGLE_API_KEY;
  if (!apiKey && baseUrl === defaultGeminiBaseUrl) {
    throw new RubricateError('CONFIG_INVALID', 'the Gemini API needs a key: set GEMINI_API_KEY (or GOOGLE_API_KEY) or pass --judge-api-key', { field: 'judge-api-key' });
  }
  return createGeminiJudge({ model, baseUrl, apiKey, headers: config.headers, extraBody: config.extraBody, thinkingBudget: config.thinkingBudget, id: `gemini:${model}` });
};

const ggufFactory: JudgeFactory = async (target, config) => {
  if (!target) throw new RubricateError('CONFIG_INVALID', 'judge spec "gguf:" needs a model path or hf:USER/REPO:QUANT', { field: 'judge' });
  const { createLlamaCppJudge, resolveDefaultLocalModel, defaultModelCacheDirectory } = await import('./llamacpp/index.js');
  const environment = config.environment ?? process.env;
  const cacheDirectory = config.cacheDirectory ?? defaultModelCacheDirectory(environment);
  // `gguf:default` is the embedded default: RUBRICATE_MODEL, else the default model in the cache (downloaded once).
  const model =
    target === 'default'
      ? await resolveDefaultLocalModel({ environment, cacheDirectory, download: true, onProgress: config.onDownloadProgress })
      : target;
  return createLlamaCppJudge({
    model,
    id: target === 'default' ? 'gguf:default' : `gguf:${target}`,
    threads: config.threads,
    sequences: config.sequences,
    contextSize: config.contextSize,
    cacheDirectory,
    onDownloadProgress: config.onDownloadProgress,
  });
};

/** Judge backends by spec prefix; `none` grades checks only. */
const factories = createRegistry(
  { what: 'judge', field: 'judge', display: (prefix) => (prefix === 'none' ? 'none' : `${prefix}:…`) },
  {
    openai: openaiFactory,
    azure: azureFactory,
    anthropic: anthropicFactory,
    gemini: geminiFactory,
    gguf: ggufFactory,
    none: (async () => undefined) as JudgeFactory,
  },
);

/** The built-in backends' spec prefixes. */
export type JudgePrefix = RegistryName<typeof factories>;

export function registerJudge(prefix: string, factory: JudgeFactory): void {
  factories.register(prefix, factory);
}

/**
 * The judge to use when none is named: RUBRICATE_JUDGE if set; an OpenAI-compatible
 * endpoint when OPENAI_BASE_URL or OPENAI_API_KEY is set; otherwise the embedded local model.
 */
export function defaultJudgeSpec(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.RUBRICATE_JUDGE) return environment.RUBRICATE_JUDGE;
  if (environment.OPENAI_BASE_URL || environment.OPENAI_API_KEY) {
    return `openai:${environment.RUBRICATE_JUDGE_MODEL ?? environment.OPENAI_MODEL ?? defaultOpenAIModel}`;
  }
  return 'gguf:default';
}

/** A judge spec naming a backend and its target (`openai:gpt-4.1`, `gguf:default`): always builds a judge. */
export type JudgeSpec = `${string}:${string}`;

/**
 * Splits `prefix:target` and builds the judge. A `prefix:target` spec always gives a `Judge`
 * (a factory that returns none for one is an error); `none` gives `undefined` (checks only);
 * with no spec the default rule picks one.
 */
export async function createJudge(config: JudgeConfig & { spec: JudgeSpec }): Promise<Judge>;
export async function createJudge(config: JudgeConfig & { spec: 'none' }): Promise<undefined>;
export async function createJudge(config: JudgeConfig): Promise<Judge | undefined>;
export async function createJudge(config: JudgeConfig): Promise<Judge | undefined> {
  const spec = config.spec ?? defaultJudgeSpec(config.environment);
  const separator = spec.indexOf(':');
  const prefix = separator === -1 ? spec : spec.slice(0, separator);
  const target = separator === -1 ? '' : spec.slice(separator + 1);
  const factory = factories.find(prefix);
  if (!factory) throw factories.unknown(spec);
  const judge = await factory(target, config);
  if (!judge && separator !== -1) {
    throw new RubricateError('CONFIG_INVALID', `judge "${spec}" did not build a judge (use "none" for checks only)`, { field: 'judge' });
  }
  return judge;
}
