/**
 * A lean JSON-over-HTTP client on node:http / node:https with keep-alive. The openai SDK
 * over global fetch costs about 1 ms of CPU per call here; this path costs about a quarter
 * of that, which matters when a judge answers thousands of calls per minute.
 */
import http from 'node:http';
import https from 'node:https';
import { RubricateError } from '../../errors.js';
import { safeParseJson } from '../../util/json.js';
import { httpStatusToError, networkErrorToError } from './http-errors.js';
import { redactUrl } from '../../util/redact.js';
import { authenticationHeaders, chatCompletionsUrl, type ChatTransport, type ChatTransportOptions } from './transport.js';

export type HttpTransportOptions = ChatTransportOptions;

export function createHttpTransport(options: HttpTransportOptions): ChatTransport {
  const target = chatCompletionsUrl(options.baseUrl, options.query);
  const secure = target.protocol === 'https:';
  const endpoint = redactUrl(target.toString());
  // Credentials written into the URL (`https://user:pass@host`) become a Basic header, as a browser would send them.
  const userinfo: Record<string, string> = target.username ? { authorization: `Basic ${Buffer.from(`${decodeURIComponent(target.username)}:${decodeURIComponent(target.password)}`).toString('base64')}` } : {};
  const agent = secure
    ? new https.Agent({ keepAlive: true, keepAliveMsecs: 30_000, scheduling: 'lifo' })
    : new http.Agent({ keepAlive: true, keepAliveMsecs: 30_000, scheduling: 'lifo' });
  const request = secure ? https.request : http.request;
  const fixedHeaders: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    ...userinfo,
    ...authenticationHeaders(options),
    ...options.headers,
  };
  const requestOptions = {
    protocol: target.protocol,
    hostname: target.hostname.replace(/^\[|\]$/g, ''),
    port: target.port || (secure ? 443 : 80),
    path: target.pathname + target.search,
    method: 'POST',
    agent,
  };

  return {
    endpoint,
    async postChatCompletion(body, signal, serialized) {
      const payload = serialized ?? JSON.stringify(body);
      return new Promise((resolve, reject) => {
        if (signal.aborted) {
          reject(abortError(signal, endpoint));
          return;
        }
        const outgoing = request({ ...requestOptions, headers: { ...fixedHeaders, 'content-length': String(Buffer.byteLength(payload, 'utf8')) } }, (incoming) => {
          const chunks: Buffer[] = [];
          incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
          incoming.on('error', (error) => finish(networkErrorToError(error, endpoint)));
          incoming.on('end', () => {
            // Most answers arrive in one chunk: skip the copy then.
            const text = (chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)).toString('utf8');
            const status = incoming.statusCode ?? 0;
            const parsed = safeParseJson(text);
            if (status >= 200 && status < 300) {
              if (!parsed.ok) {
                finish(new RubricateError('JUDGE_SERVER_ERROR', `judge returned a malformed response body: ${parsed.error}`, { endpoint, status }));
              } else finish(undefined, parsed.value);
              return;
            }
            finish(httpStatusToError(status, incoming.headers as Record<string, string>, parsed.ok ? parsed.value : text, endpoint));
          });
        });
        const onAbort = () => outgoing.destroy(abortError(signal, endpoint));
        signal.addEventListener('abort', onAbort, { once: true });
        let settled = false;
        function finish(error: RubricateError | undefined, value?: unknown) {
          if (settled) return;
          settled = true;
          signal.removeEventListener('abort', onAbort);
          if (error) reject(error);
          else resolve(value);
        }
        outgoing.on('error', (error) => finish(RubricateError.isInstance(error) ? error : networkErrorToError(error, endpoint)));
        outgoing.end(payload, 'utf8');
      });
    },
    close() {
      agent.destroy();
    },
  };
}

function abortError(signal: AbortSignal, endpoint: string): RubricateError {
  const reason = signal.reason;
  if (RubricateError.isInstance(reason)) return reason;
  return new RubricateError('JUDGE_TIMEOUT', `judge call aborted: ${reason instanceof Error ? reason.message : String(reason ?? 'aborted')}`, { endpoint });
}
