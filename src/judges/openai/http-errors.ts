import { RubricateError } from '../../errors.js';

/** Parses Retry-After (seconds or an HTTP date) and the non-standard retry-after-ms. */
export function retryAfterMilliseconds(headers: Record<string, string | undefined>, now = Date.now()): number | undefined {
  const milliseconds = headers['retry-after-ms'];
  if (milliseconds !== undefined) {
    const value = Number(milliseconds);
    if (Number.isFinite(value) && value >= 0) return value;
  }
  const retryAfter = headers['retry-after'];
  if (retryAfter === undefined) return undefined;
  const seconds = Number(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(retryAfter);
  if (Number.isFinite(date)) return Math.max(0, date - now);
  return undefined;
}

/** Best-effort extraction of an OpenAI-style `{error: {message}}` body. */
export function errorMessageFromBody(body: unknown, fallback: string): string {
  if (body && typeof body === 'object') {
    const error = (body as { error?: unknown }).error;
    if (typeof error === 'string') return error;
    if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') {
      return (error as { message: string }).message;
    }
    if (typeof (body as { message?: unknown }).message === 'string') return (body as { message: string }).message;
    if (typeof (body as { detail?: unknown }).detail === 'string') return (body as { detail: string }).detail;
  }
  return fallback;
}

const contextOverflowPattern = /context[_ ]length|maximum context|too many tokens|context window|prompt is too long/i;

/** Maps a non-2xx HTTP answer of a chat-completions endpoint to a coded error. */
export function httpStatusToError(
  status: number,
  headers: Record<string, string | undefined>,
  body: unknown,
  endpoint: string,
): RubricateError {
  const message = errorMessageFromBody(body, typeof body === 'string' && body ? body.slice(0, 300) : `HTTP ${status}`);
  const retryAfterMs = retryAfterMilliseconds(headers);
  const details = { status, endpoint, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  if (status === 429) return new RubricateError('JUDGE_RATE_LIMITED', `rate limited by the judge: ${message}`, details);
  if (status === 408) return new RubricateError('JUDGE_TIMEOUT', `judge request timed out (408): ${message}`, details);
  if (status === 401 || status === 403) {
    return new RubricateError('JUDGE_AUTH', `the judge endpoint refused the credentials (${status}): ${message}`, details);
  }
  if (status >= 500) return new RubricateError('JUDGE_SERVER_ERROR', `judge server error ${status}: ${message}`, details);
  if (contextOverflowPattern.test(message)) {
    return new RubricateError('JUDGE_CONTEXT_OVERFLOW', `prompt too long for the judge: ${message}`, details);
  }
  return new RubricateError('JUDGE_REQUEST_REJECTED', `judge rejected the request (${status}): ${message}`, details);
}

/** Socket-level failures (refused, reset, DNS): shared by every HTTP judge. */
export { networkErrorToError } from '../http/json-client.js';
