/**
 * Batch API calls with redirects followed by hand. The global `fetch` follows them itself and,
 * on a redirect to another origin, drops only `Authorization`: Anthropic's `x-api-key`, Azure's
 * `api-key` and any `--judge-header` would go to the other host. Neither OpenAI, Azure nor
 * Anthropic documents result files served from elsewhere, but a download may be redirected to
 * signed storage, so: a redirect on the same origin keeps every header; one to another origin is
 * followed for a download (GET) with none of the configured headers at all, and refused for a
 * call that carries a body; a redirect from https to http, to another scheme, or past
 * `maxRedirects` is refused.
 */
import { RubricateError } from '../errors.js';
import { redactUrl } from '../util/redact.js';

const maxRedirects = 5;

export interface BatchHttpRequest {
  method: string;
  /** Every header of the call, credentials included: they go to the first URL's origin only. */
  headers: Record<string, string>;
  body?: string | FormData;
}

function refused(reason: string, endpoint: string): RubricateError {
  return new RubricateError('JUDGE_SERVER_ERROR', `batch API redirect refused: ${reason}`, { endpoint });
}

/** The final answer of a call; network errors are thrown as `fetch` throws them. */
export async function fetchWithoutCrossOriginCredentials(url: string, request: BatchHttpRequest, endpoint: string): Promise<Response> {
  const origin = new URL(url).origin;
  let current = new URL(url);
  let { method, body } = request;
  for (let redirects = 0; ; redirects += 1) {
    const sameOrigin = current.origin === origin;
    const response = await fetch(current, { method, headers: sameOrigin ? request.headers : {}, body, redirect: 'manual' });
    const location = response.headers.get('location');
    if (response.status < 300 || response.status >= 400 || location === null) return response;
    await response.body?.cancel();
    if (redirects >= maxRedirects) throw refused(`more than ${maxRedirects} redirects from ${redactUrl(url)}`, endpoint);
    const next = new URL(location, current);
    if (next.protocol !== 'http:' && next.protocol !== 'https:') throw refused(`to a ${next.protocol} URL`, endpoint);
    if (current.protocol === 'https:' && next.protocol === 'http:') throw refused(`from https to http (${redactUrl(next.origin)})`, endpoint);
    // 303, and 301/302 after a POST, turn into a GET without the body (as fetch does); 307/308 repeat the call.
    if (response.status === 303 || ((response.status === 301 || response.status === 302) && method === 'POST')) {
      method = 'GET';
      body = undefined;
    }
    if (next.origin !== origin && (method !== 'GET' || body !== undefined)) throw refused(`a ${method} to another origin (${redactUrl(next.origin)}) would take the request there`, endpoint);
    current = next;
  }
}

/** A failed reply's body (its JSON where it parses, else its text) and headers, for the provider's own error mapping. */
export async function failedReply(response: Response): Promise<{ body: unknown; headers: Record<string, string> }> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // A non-JSON error body is reported as text.
  }
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return { body, headers };
}
