/**
 * What an endpoint accepts and how it answers: a capability profile per server and model.
 * Chosen from the judge spec, the endpoint and the model name; overridable by name
 * (`--judge-profile`); adjusted during a run when the server says that one parameter is
 * not accepted. Output limits and context windows are shared with the native judges.
 */
import { RubricateError } from '../errors.js';

/** Token limits of a model. Absent means unknown (the server will say, and the run learns it). */
export interface ModelLimits {
  /** Most tokens the model generates in one reply, hidden reasoning included. */
  maxOutputTokens?: number;
  /** Prompt plus output, in tokens. */
  contextWindow?: number;
}

export type TokenLimitField = 'max_tokens' | 'max_completion_tokens';
export type StructuredOutputSupport = 'json_schema' | 'json_object' | 'none';
/** `supported`: returned; `ignored`: accepted but none come back; `rejected`: the server answers 400. */
export type LogprobsSupport = 'supported' | 'ignored' | 'rejected';
/** How error bodies are wrapped: `{error: {...}}`, Anthropic's `{type: "error", error}`, or Gemini's JSON array. */
export type ErrorShape = 'openai' | 'anthropic' | 'array';

export interface JudgeProfile extends ModelLimits {
  name: string;
  /** Which field carries the output budget. */
  tokenLimitField: TokenLimitField;
  /** Whether `temperature` is sent (reasoning models accept only their default). */
  temperature: boolean;
  /** Highest temperature accepted (Anthropic's layer caps at 1). */
  maxTemperature: number;
  seed: boolean;
  /** Most capable structured output the endpoint honours; `auto` starts here and steps down. */
  structuredOutput: StructuredOutputSupport;
  logprobs: LogprobsSupport;
  /** Most alternatives per token the server returns. */
  maxTopLogprobs: number;
  /** The model thinks before answering and that thinking counts against the output budget. */
  reasoning: boolean;
  errorShape: ErrorShape;
}

type ProfileTraits = Omit<JudgeProfile, 'name' | keyof ModelLimits>;

const openAITraits: ProfileTraits = {
  tokenLimitField: 'max_completion_tokens',
  temperature: true,
  maxTemperature: 2,
  seed: true,
  structuredOutput: 'json_schema',
  logprobs: 'supported',
  maxTopLogprobs: 20,
  reasoning: false,
  errorShape: 'openai',
};

/** Local and self-hosted servers: `max_tokens` is the one field all of them read (Ollama reads no other). */
const localTraits: ProfileTraits = { ...openAITraits, tokenLimitField: 'max_tokens' };

/** Named profiles; `--judge-profile NAME` picks one whatever the endpoint. */
export const judgeProfiles: Readonly<Record<string, ProfileTraits>> = {
  openai: openAITraits,
  'openai-reasoning': { ...openAITraits, temperature: false, logprobs: 'rejected', reasoning: true },
  vllm: localTraits,
  sglang: localTraits,
  llamacpp: localTraits,
  ollama: localTraits,
  generic: localTraits,
  'anthropic-compat': { ...localTraits, maxTemperature: 1, seed: false, structuredOutput: 'none', logprobs: 'ignored', errorShape: 'anthropic' },
  'gemini-compat': { ...localTraits, logprobs: 'rejected', reasoning: true, errorShape: 'array' },
};

export const profileNames = Object.keys(judgeProfiles);

/**
 * Published output limits and context windows, first match wins. Names are matched after
 * dropping a routing prefix (`openai/gpt-4o`, `models/gemini-2.5-flash`) and case.
 */
const modelLimitTable: Array<[RegExp, Required<ModelLimits>]> = [
  // OpenAI
  [/^gpt-5(\.\d+)?-chat/, { maxOutputTokens: 16_384, contextWindow: 128_000 }],
  [/^gpt-5/, { maxOutputTokens: 128_000, contextWindow: 400_000 }],
  [/^gpt-4\.1/, { maxOutputTokens: 32_768, contextWindow: 1_047_576 }],
  [/^gpt-4o-2024-05-13/, { maxOutputTokens: 4_096, contextWindow: 128_000 }],
  [/^(gpt-4o|chatgpt-4o)/, { maxOutputTokens: 16_384, contextWindow: 128_000 }],
  [/^gpt-4-turbo/, { maxOutputTokens: 4_096, contextWindow: 128_000 }],
  [/^gpt-4(-\d{4})?$/, { maxOutputTokens: 8_192, contextWindow: 8_192 }],
  [/^gpt-3\.5-turbo/, { maxOutputTokens: 4_096, contextWindow: 16_385 }],
  [/^o1-mini/, { maxOutputTokens: 65_536, contextWindow: 128_000 }],
  [/^o1-preview/, { maxOutputTokens: 32_768, contextWindow: 128_000 }],
  [/^o\d/, { maxOutputTokens: 100_000, contextWindow: 200_000 }],
  // Anthropic
  [/^claude-(opus-4-[5-9]|sonnet-4|haiku-4|3-7-sonnet)/, { maxOutputTokens: 64_000, contextWindow: 200_000 }],
  [/^claude-opus-4/, { maxOutputTokens: 32_000, contextWindow: 200_000 }],
  [/^claude-3-5-/, { maxOutputTokens: 8_192, contextWindow: 200_000 }],
  [/^claude-3-/, { maxOutputTokens: 4_096, contextWindow: 200_000 }],
  // Google
  [/^gemini-(2\.5|3)/, { maxOutputTokens: 65_536, contextWindow: 1_048_576 }],
  [/^gemini-1\.5-pro/, { maxOutputTokens: 8_192, contextWindow: 2_097_152 }],
  [/^gemini-/, { maxOutputTokens: 8_192, contextWindow: 1_048_576 }],
];

function bareModelName(model: string): string {
  return model.slice(model.lastIndexOf('/') + 1).toLowerCase();
}

/** Published limits of a model by name; empty when the model is not known (local models, deployments). */
export function modelLimitsFor(model: string): ModelLimits {
  const name = bareModelName(model);
  for (const [pattern, limits] of modelLimitTable) if (pattern.test(name)) return { ...limits };
  return {};
}

/** OpenAI reasoning models: o-series and GPT-5 (not the `-chat` variants). */
export function isOpenAIReasoningModel(model: string): boolean {
  const name = bareModelName(model);
  return /^o\d+($|-)/.test(name) || (/^gpt-5/.test(name) && !/^gpt-5(\.\d+)?-chat/.test(name));
}

export interface ProfileChoice {
  /** Judge prefix (`openai`, `azure`). */
  provider: string;
  model: string;
  baseUrl: string;
  /** `--judge-profile`: a name from `judgeProfiles`. */
  override?: string;
}

/** The profile name an endpoint and model imply. */
export function profileNameFor(choice: Omit<ProfileChoice, 'override'>): string {
  let host = '';
  let port = '';
  try {
    const url = new URL(choice.baseUrl);
    host = url.hostname.toLowerCase();
    port = url.port;
  } catch {
    // An unreadable base URL is reported by the transport; the profile falls back to generic.
  }
  if (host === 'api.anthropic.com') return 'anthropic-compat';
  if (host === 'generativelanguage.googleapis.com') return 'gemini-compat';
  if (isOpenAIReasoningModel(choice.model)) return 'openai-reasoning';
  if (choice.provider === 'azure' || host === 'api.openai.com' || host.endsWith('.openai.azure.com')) return 'openai';
  if (port === '11434') return 'ollama';
  return 'generic';
}

/** The profile for a judge: the named override, else the one its endpoint and model imply; limits from the model table. */
export function chooseProfile(choice: ProfileChoice): JudgeProfile {
  const name = choice.override ?? profileNameFor(choice);
  const traits = judgeProfiles[name];
  if (!traits) {
    throw new RubricateError('CONFIG_INVALID', `unknown judge profile "${name}" (expected one of ${profileNames.join(', ')})`, { field: 'judge-profile' });
  }
  return { name, ...traits, ...modelLimitsFor(choice.model) };
}

