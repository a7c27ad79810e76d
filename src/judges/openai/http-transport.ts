/**
 * Chat completions over the shared lean client (../http/json-client.ts). The openai SDK
 * over global fetch costs about 1 ms of CPU per call here; this path costs about a quarter
 * of that, which matters when a judge answers thousands of calls per minute.
 */
import { redactUrl } from '../../util/redact.js';
import { createJsonClient } from '../http/json-client.js';
import { httpStatusToError } from './http-errors.js';
import { authenticationHeaders, chatCompletionsUrl, type ChatTransport, type ChatTransportOptions } from './transport.js';

export type HttpTransportOptions = ChatTransportOptions;

export function createHttpTransport(options: HttpTransportOptions): ChatTransport {
  // The base URL's path and query survive (Azure's deployment and api-version).
  const target = chatCompletionsUrl(options.baseUrl, options.query);
  const endpoint = redactUrl(target.toString());
  // Credentials written into the URL (`https://user:pass@host`) become a Basic header, as a browser would send them.
  const userinfo: Record<string, string> = target.username ? { authorization: `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}` } : {};
  const fixedHeaders: Record<string, string> = {
    ...userinfo,
    ...authenticationHeaders(options),
    ...options.headers,
  };
  const client = createJsonClient({ url: target, headers: fixedHeaders, mapError: httpStatusToError, endpoint, maxReplyBytes: options.maxReplyBytes });
  return {
    endpoint,
    // Not async: the client's promise is handed on as it is, without one more promise and its turns per call.
    postChatCompletion(body, signal, serialized) {
      try {
        return client.post(serialized ?? JSON.stringify(body), signal);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    close() {
      client.close();
    },
  };
}
