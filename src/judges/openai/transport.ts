import { RubricateError } from '../../errors.js';

/** How a chat-completions body reaches an OpenAI-compatible server and its JSON comes back. */
export interface ChatTransport {
  readonly endpoint: string;
  /**
   * Resolves with the parsed JSON body of a 2xx answer; rejects with a JUDGE_* RubricateError.
   * `serialized` is `body` as JSON, when the caller already has it (saves a serialisation).
   */
  postChatCompletion(body: Record<string, unknown>, signal: AbortSignal, serialized?: string): Promise<unknown>;
  close(): void;
}

export interface ChatTransportOptions {
  baseUrl: string;
  apiKey?: string;
  /** Where the key goes: `Authorization: Bearer KEY` (default) or Azure's `api-key: KEY`. */
  apiKeyHeader?: 'authorization' | 'api-key';
  headers?: Record<string, string>;
  /** Query parameters added to every call (Azure's `api-version`); ones already in the base URL are kept. */
  query?: Record<string, string>;
  /** Largest reply body read by the lean transport (default 8 MiB). */
  maxReplyBytes?: number;
}

/**
 * `BASE/chat/completions`, keeping the base URL's path and query (Azure's classic form is
 * `…/openai/deployments/NAME?api-version=V`: both the deployment and the version must survive).
 */
export function chatCompletionsUrl(baseUrl: string, query: Record<string, string> = {}): URL {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new RubricateError('CONFIG_INVALID', `judge base URL is not a URL: "${baseUrl}"`, { field: 'judge-base-url' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new RubricateError('CONFIG_INVALID', `judge base URL must be http or https, got ${url.protocol}`, { field: 'judge-base-url' });
  }
  url.pathname = `${url.pathname.replace(/\/+$/, '')}/chat/completions`;
  url.hash = '';
  for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
  return url;
}

/** Headers that carry the key, by where the server expects it. */
export function authenticationHeaders(options: Pick<ChatTransportOptions, 'apiKey' | 'apiKeyHeader'>): Record<string, string> {
  if (!options.apiKey) return {};
  return options.apiKeyHeader === 'api-key' ? { 'api-key': options.apiKey } : { authorization: `Bearer ${options.apiKey}` };
}
