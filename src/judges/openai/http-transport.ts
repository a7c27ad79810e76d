/**
 * Chat completions over the shared lean client (../http/json-client.ts). The openai SDK
 * over global fetch costs about 1 ms of CPU per call here; this path costs about a quarter
 * of that, which matters when a judge answers thousands of calls per minute.
 */
import { RubricateError } from '../../errors.js';
import { createJsonClient } from '../http/json-client.js';
import { httpStatusToError } from './http-errors.js';
import type { ChatTransport } from './transport.js';

export interface HttpTransportOptions {
  baseUrl: string;
  apiKey?: string;
  headers?: Record<string, string>;
}

export function createHttpTransport(options: HttpTransportOptions): ChatTransport {
  const base = new URL(options.baseUrl.endsWith('/') ? options.baseUrl : `${options.baseUrl}/`);
  const secure = base.protocol === 'https:';
  if (!secure && base.protocol !== 'http:') {
    throw new RubricateError('CONFIG_INVALID', `judge base URL must be http or https, got ${base.protocol}`, { field: 'judge-base-url' });
  }
  const target = new URL('chat/completions', base);
  const endpoint = target.toString();
  const fixedHeaders: Record<string, string> = {
    ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    ...options.headers,
  };
  const client = createJsonClient({ url: target, headers: fixedHeaders, mapError: httpStatusToError, endpoint });
  return {
    endpoint,
    async postChatCompletion(body, signal, serialized) {
      return client.post(serialized ?? JSON.stringify(body), signal);
    },
    close() {
      client.close();
    },
  };
}
