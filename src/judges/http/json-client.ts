/**
 * The lean JSON-over-HTTP client every HTTP judge uses (OpenAI-compatible, Anthropic,
 * Gemini): node:http / node:https with keep-alive, one fixed URL and header set per judge,
 * and a provider-specific mapping of non-2xx answers to coded errors. The SDKs over global
 * fetch cost several times more CPU per call; this path is what makes thousands of calls a
 * minute cheap.
 */
import http from 'node:http';
import https from 'node:https';
import { RubricateError } from '../../errors.js';
import { safeParseJson } from '../../util/json.js';
import { defaultMaxReplyBytes, readBoundedBody } from '../reply-body.js';
import { registerCredentialHeaders } from '../../util/redact.js';

/** Turns a non-2xx answer (body parsed as JSON when it is JSON, else its text) into an error. */
export type HttpErrorMapper = (status: number, headers: Record<string, string | undefined>, body: unknown, endpoint: string) => RubricateError;

export interface JsonClientOptions {
  url: URL;
  headers: Record<string, string>;
  mapError: HttpErrorMapper;
  /** Field named in a configuration error about the URL. */
  urlField?: string;
  /** How the endpoint is named in errors and provenance (default: the URL without query or credentials). */
  endpoint?: string;
  /** Largest reply body read (default 8 MiB); beyond it the call fails with JUDGE_REPLY_TOO_LARGE. */
  maxReplyBytes?: number;
}

export interface JsonClient {
  /** The URL posted to (for provenance and error messages; carries no credentials). */
  readonly endpoint: string;
  /** Posts `payload` (a JSON text); resolves with the parsed body of a 2xx answer, rejects with a JUDGE_* error. */
  post(payload: string, signal: AbortSignal): Promise<unknown>;
  close(): void;
}

/** The listener options of every call (one object, not one per call). */
const listenOnce = Object.freeze({ once: true });

export function createJsonClient(options: JsonClientOptions): JsonClient {
  const target = options.url;
  const secure = target.protocol === 'https:';
  if (!secure && target.protocol !== 'http:') {
    throw new RubricateError('CONFIG_INVALID', `judge base URL must be http or https, got ${target.protocol}`, { field: options.urlField ?? 'judge-base-url' });
  }
  const endpoint = options.endpoint ?? `${target.origin}${target.pathname}`;
  const agent = secure
    ? new https.Agent({ keepAlive: true, keepAliveMsecs: 30_000, scheduling: 'lifo' })
    : new http.Agent({ keepAlive: true, keepAliveMsecs: 30_000, scheduling: 'lifo' });
  const request = secure ? https.request : http.request;
  const maxReplyBytes = options.maxReplyBytes ?? defaultMaxReplyBytes;
  const fixedHeaders: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json', ...options.headers };
  registerCredentialHeaders(fixedHeaders);
  const protocol = target.protocol;
  const hostname = target.hostname.replace(/^\[|\]$/g, '');
  const port = target.port || (secure ? 443 : 80);
  const path = target.pathname + target.search;

  return {
    endpoint,
    post(payload, signal) {
      return new Promise((resolve, reject) => {
        if (signal.aborted) {
          reject(abortError(signal, endpoint));
          return;
        }
        const headers = { ...fixedHeaders, 'content-length': String(Buffer.byteLength(payload, 'utf8')) };
        const outgoing = request({ protocol, hostname, port, path, method: 'POST', agent, headers }, (incoming) => {
          // Bounded: a reply of hundreds of megabytes is cut off unread (JUDGE_REPLY_TOO_LARGE).
          readBoundedBody(incoming, maxReplyBytes, endpoint, (error) => networkErrorToError(error, endpoint)).then((bytes) => {
            const text = bytes.toString('utf8');
            const status = incoming.statusCode ?? 0;
            const parsed = safeParseJson(text);
            if (status >= 200 && status < 300) {
              if (!parsed.ok) {
                finish(new RubricateError('JUDGE_SERVER_ERROR', `judge returned a malformed response body: ${parsed.error}`, { endpoint, status }));
              } else finish(undefined, parsed.value);
              return;
            }
            finish(options.mapError(status, incoming.headers as Record<string, string>, parsed.ok ? parsed.value : text, endpoint));
          }, finish);
        });
        const onAbort = () => outgoing.destroy(abortError(signal, endpoint));
        signal.addEventListener('abort', onAbort, listenOnce);
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

/** A base URL with a trailing slash, so relative paths resolve under it. */
export function baseUrlOf(baseUrl: string, field = 'judge-base-url'): URL {
  try {
    return new URL(baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  } catch {
    throw new RubricateError('CONFIG_INVALID', `judge base URL is not a URL: ${JSON.stringify(baseUrl)}`, { field });
  }
}

function abortError(signal: AbortSignal, endpoint: string): RubricateError {
  const reason = signal.reason;
  if (RubricateError.isInstance(reason)) return reason;
  return new RubricateError('JUDGE_TIMEOUT', `judge call aborted: ${reason instanceof Error ? reason.message : String(reason ?? 'aborted')}`, { endpoint });
}

/** Maps socket-level failures (refused, reset, DNS) to a retryable connection error. */
export function networkErrorToError(error: unknown, endpoint: string): RubricateError {
  const code = (error as { code?: string })?.code;
  const message = error instanceof Error ? error.message : String(error);
  return new RubricateError('JUDGE_CONNECTION', `cannot reach the judge at ${endpoint}: ${code ? `${code} ` : ''}${message}`, {
    endpoint,
    ...(code ? { errno: code } : {}),
  });
}
