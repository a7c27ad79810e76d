/**
 * Anthropic Messages API errors: `{"type":"error","error":{"type","message"},"request_id"}`
 * with the HTTP status, `retry-after` and `anthropic-ratelimit-*` headers.
 */
import { RubricateError } from '../../errors.js';
import { retryAfterMilliseconds } from '../openai/http-errors.js';
import { describeBudgetOverflow, readBudgetOverflow } from '../overflow.js';

interface AnthropicErrorBody {
  type?: unknown;
  error?: { type?: unknown; message?: unknown };
  request_id?: unknown;
}

const rateLimitFamilies = ['requests', 'tokens', 'input-tokens', 'output-tokens'];

/**
 * When a 429 carries no retry-after: the wait until the exhausted limit resets
 * (`anthropic-ratelimit-<family>-remaining: 0` with an RFC 3339 `…-reset` time).
 */
export function rateLimitResetMilliseconds(headers: Record<string, string | undefined>, now = Date.now()): number | undefined {
  let wait: number | undefined;
  for (const family of rateLimitFamilies) {
    const remaining = headers[`anthropic-ratelimit-${family}-remaining`];
    const reset = headers[`anthropic-ratelimit-${family}-reset`];
    if (remaining === undefined || reset === undefined || Number(remaining) > 0) continue;
    const at = Date.parse(reset);
    if (!Number.isFinite(at)) continue;
    const milliseconds = Math.max(0, at - now);
    wait = wait === undefined ? milliseconds : Math.max(wait, milliseconds);
  }
  return wait;
}

export function anthropicHttpError(status: number, headers: Record<string, string | undefined>, body: unknown, endpoint: string): RubricateError {
  const parsed = (body && typeof body === 'object' ? body : {}) as AnthropicErrorBody;
  const type = typeof parsed.error?.type === 'string' ? parsed.error.type : undefined;
  const text = typeof parsed.error?.message === 'string' ? parsed.error.message : typeof body === 'string' && body ? body.slice(0, 300) : `HTTP ${status}`;
  const requestId = headers['request-id'] ?? (typeof parsed.request_id === 'string' ? parsed.request_id : undefined);
  const message = `${type ? `${type}: ` : ''}${text}`;
  const retryAfterMs = retryAfterMilliseconds(headers) ?? (status === 429 ? rateLimitResetMilliseconds(headers) : undefined);
  const details = { status, endpoint, ...(type ? { type } : {}), ...(requestId ? { requestId } : {}), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  if (status === 429 || type === 'rate_limit_error') return new RubricateError('JUDGE_RATE_LIMITED', `rate limited by Anthropic: ${message}`, details);
  // 529: the API as a whole is overloaded; retried with backoff, and the engine lowers concurrency.
  if (status === 529 || type === 'overloaded_error') return new RubricateError('JUDGE_SERVER_ERROR', `Anthropic is overloaded (${status}): ${message}`, { ...details, status: 529 });
  if (status === 401 || status === 403 || type === 'authentication_error' || type === 'permission_error') {
    return new RubricateError('JUDGE_AUTH', `Anthropic refused the credentials (${status}): ${message}`, details);
  }
  if (status === 404 || type === 'not_found_error') {
    // An unknown model or path never starts working: stop the run (exit 4) instead of failing every call.
    return new RubricateError('JUDGE_NOT_FOUND', `Anthropic has no such model or endpoint (${status}): ${message}`, details);
  }
  if (status === 413 || type === 'request_too_large') return new RubricateError('JUDGE_CONTEXT_OVERFLOW', `request too large for the judge: ${message}`, details);
  // "prompt is too long", "input length and `max_tokens` exceed context limit", "max_tokens: N > M": a batch is split, a budget lowered.
  const overflow = readBudgetOverflow(text);
  if (overflow) return new RubricateError('JUDGE_CONTEXT_OVERFLOW', `${describeBudgetOverflow(overflow)}: ${message}`, { ...details, overflow });
  if (status === 408 || status === 504) return new RubricateError('JUDGE_TIMEOUT', `Anthropic timed out (${status}): ${message}`, details);
  if (status >= 500) return new RubricateError('JUDGE_SERVER_ERROR', `Anthropic server error ${status}: ${message}`, details);
  return new RubricateError('JUDGE_REQUEST_REJECTED', `Anthropic rejected the request (${status}): ${message}`, details);
}
