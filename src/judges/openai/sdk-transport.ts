/**
 * The same calls through the official openai SDK, for setups the lean transport does not
 * cover (corporate proxies, custom fetch). Selected with `--judge-transport sdk`.
 */
import type OpenAI from 'openai';
import { RubricateError } from '../../errors.js';
import { importOptional } from '../../util/optional-package.js';
import { httpStatusToError, networkErrorToError } from './http-errors.js';
import type { ChatTransport } from './transport.js';

export interface SdkTransportOptions {
  baseUrl: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

/** What to do when `--judge-transport sdk` is asked for without the optional openai package. */
export const sdkInstallHint =
  'the SDK transport needs the optional package openai: install it with `npm install openai@6.49.0`, or leave out `--judge-transport sdk` (the default transport needs no package)';

export function createSdkTransport(options: SdkTransportOptions): ChatTransport {
  // Loaded on first use: users of the default transport never load the SDK.
  let sdk: Promise<{ client: OpenAI; APIError: typeof OpenAI.APIError }> | undefined;
  const connect = () =>
    (sdk ??= importOptional<typeof import('openai')>('openai', sdkInstallHint).then(({ default: OpenAIClient }) => ({
      // Retries and timeouts belong to the engine; the SDK must not add its own.
      client: new OpenAIClient({
        baseURL: options.baseUrl,
        apiKey: options.apiKey ?? 'not-needed',
        maxRetries: 0,
        timeout: 24 * 60 * 60 * 1000,
        defaultHeaders: options.headers,
      }),
      APIError: OpenAIClient.APIError,
    })));
  const endpoint = `${options.baseUrl.replace(/\/$/, '')}/chat/completions`;
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
          throw httpStatusToError(error.status, headers, error.error ?? error.message, endpoint);
        }
        throw networkErrorToError((error as { cause?: unknown })?.cause ?? error, endpoint);
      }
    },
    close() {},
  };
}
