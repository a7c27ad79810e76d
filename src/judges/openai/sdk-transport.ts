/**
 * The same calls through the official openai SDK, for setups the lean transport does not
 * cover (corporate proxies, custom fetch). Selected with `--judge-transport sdk`.
 */
import type OpenAI from 'openai';
import { RubricateError } from '../../errors.js';
import { importOptional } from '../../util/optional-package.js';
import { safeParseJson } from '../../util/json.js';
import { redactUrl, registerCredentialHeaders } from '../../util/redact.js';
import { httpStatusToError, networkErrorToError, readErrorBody } from './http-errors.js';
import { authenticationHeaders, chatCompletionsUrl, type ChatTransport, type ChatTransportOptions } from './transport.js';

export type SdkTransportOptions = ChatTransportOptions;

/** What to do when `--judge-transport sdk` is asked for without the optional openai package. */
export const sdkInstallHint =
  'the SDK transport needs the optional package openai: install it with `npm install openai@6.49.0`, or leave out `--judge-transport sdk` (the default transport needs no package)';

export function createSdkTransport(options: SdkTransportOptions): ChatTransport {
  // The SDK appends `/chat/completions` to its base URL as text: a query in the base URL would
  // swallow the path. Give it the path alone and the query as default query parameters.
  const target = chatCompletionsUrl(options.baseUrl, options.query);
  const defaultQuery = Object.fromEntries(target.searchParams);
  const baseURL = `${target.origin}${target.pathname.replace(/\/chat\/completions$/, '')}`;
  registerCredentialHeaders({ ...authenticationHeaders(options), ...options.headers });
  const endpoint = redactUrl(target.toString());
  // Loaded on first use: users of the default transport never load the SDK.
  let sdk: Promise<{ client: OpenAI; APIError: typeof OpenAI.APIError }> | undefined;
  const connect = () =>
    (sdk ??= importOptional<typeof import('openai')>('openai', sdkInstallHint).then(({ default: OpenAIClient }) => ({
      // Retries and timeouts belong to the engine; the SDK must not add its own.
      client: new OpenAIClient({
        baseURL,
        apiKey: options.apiKey ?? 'not-needed',
        maxRetries: 0,
        timeout: 24 * 60 * 60 * 1000,
        ...(Object.keys(defaultQuery).length > 0 ? { defaultQuery } : {}),
        // With Azure's `api-key` header (or no key at all) the SDK's own Bearer header must not be sent.
        defaultHeaders: {
          ...(options.apiKeyHeader === 'api-key' || !options.apiKey ? { authorization: null } : {}),
          ...(options.apiKeyHeader === 'api-key' ? authenticationHeaders(options) : {}),
          ...options.headers,
        },
        fetch: fetchWithReadableErrors,
      }),
      APIError: OpenAIClient.APIError,
    })));
  return {
    endpoint,
    async postChatCompletion(body, signal) {
      const { client, APIError } = await connect();
      try {
        return await client.chat.completions.create(body as unknown as OpenAI.ChatCompletionCreateParamsNonStreaming, { signal });
      } catch (error) {
        if (signal.aborted) {
          const reason = signal.reason;
          throw RubricateError.isInstance(reason) ? reason : new RubricateError('JUDGE_TIMEOUT', 'judge call aborted', { endpoint });
        }
        if (error instanceof APIError && typeof error.status === 'number') {
          const headers: Record<string, string> = {};
          (error.headers as Headers | undefined)?.forEach((value: string, key: string) => {
            headers[key] = value;
          });
          throw httpStatusToError(error.status, headers, error.error ? { error: error.error } : error.message, endpoint);
        }
        throw networkErrorToError((error as { cause?: unknown })?.cause ?? error, endpoint);
      }
    },
    close() {},
  };
}

/**
 * The SDK reads an error's message only from `{error: {...}}` bodies. Servers that answer
 * otherwise (Gemini's JSON arrays, vLLM's flat `{object: "error", message}`, plain text) would
 * leave "400 status code (no body)"; rewrite those bodies into the shape the SDK reads.
 */
async function fetchWithReadableErrors(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const response = await fetch(input, init);
  if (response.ok) return response;
  const text = await response.text();
  const parsed = safeParseJson(text);
  const server = readErrorBody(parsed.ok ? parsed.value : text);
  const error = { ...server.fields, message: server.message ?? (text.trim().slice(0, 300) || `HTTP ${response.status}`), type: server.type ?? null, param: server.param ?? null, code: server.code ?? null };
  const headers = new Headers(response.headers);
  headers.delete('content-length');
  headers.delete('content-encoding');
  headers.set('content-type', 'application/json');
  return new Response(JSON.stringify({ error }), { status: response.status, statusText: response.statusText, headers });
}
