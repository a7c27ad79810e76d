/**
 * Gemini API errors: `{"error":{"code","message","status","details"}}` (google.rpc.Status),
 * with RetryInfo's `retryDelay` in the details of a 429 RESOURCE_EXHAUSTED.
 */
import { RubricateError } from '../../errors.js';
import { retryAfterMilliseconds } from '../openai/http-errors.js';
import { describeBudgetOverflow, readBudgetOverflow } from '../overflow.js';

interface GoogleStatus {
  code?: unknown;
  message?: unknown;
  status?: unknown;
  details?: Array<{ '@type'?: unknown; retryDelay?: unknown; reason?: unknown }>;
}

/** RetryInfo.retryDelay is a protobuf Duration in JSON: "17s", "0.5s". */
function retryDelayMilliseconds(status: GoogleStatus): number | undefined {
  for (const detail of status.details ?? []) {
    if (typeof detail?.retryDelay === 'string') {
      const match = /^(\d+(?:\.\d+)?)s$/.exec(detail.retryDelay);
      if (match) return Number(match[1]) * 1000;
    }
  }
  return undefined;
}

export function geminiHttpError(status: number, headers: Record<string, string | undefined>, body: unknown, endpoint: string): RubricateError {
  // The native API answers one object; a list of them is tolerated.
  const container = Array.isArray(body) ? body[0] : body;
  const error: GoogleStatus = (container && typeof container === 'object' && (container as { error?: unknown }).error && typeof (container as { error: unknown }).error === 'object' ? (container as { error: GoogleStatus }).error : {});
  const statusName = typeof error.status === 'string' ? error.status : undefined;
  const text = typeof error.message === 'string' ? error.message : typeof body === 'string' && body ? body.slice(0, 300) : `HTTP ${status}`;
  const message = `${statusName ? `${statusName}: ` : ''}${text}`;
  const retryAfterMs = retryAfterMilliseconds(headers) ?? retryDelayMilliseconds(error);
  const details = { status, endpoint, ...(statusName ? { type: statusName } : {}), ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  const reasons = (error.details ?? []).map((detail) => detail?.reason).filter((reason): reason is string => typeof reason === 'string');
  if (status === 429 || statusName === 'RESOURCE_EXHAUSTED') return new RubricateError('JUDGE_RATE_LIMITED', `rate limited by Gemini: ${message}`, details);
  if (status === 401 || status === 403 || statusName === 'UNAUTHENTICATED' || statusName === 'PERMISSION_DENIED' || reasons.includes('API_KEY_INVALID') || /API key not valid/i.test(text)) {
    return new RubricateError('JUDGE_AUTH', `Gemini refused the credentials (${status}): ${message}`, details);
  }
  if (status === 404 || statusName === 'NOT_FOUND') return new RubricateError('JUDGE_NOT_FOUND', `Gemini has no such model or endpoint (${status}): ${message}`, details);
  // A model without logprobs will never accept the call, nor will a region without the API.
  if (/logprobs/i.test(text)) return new RubricateError('JUDGE_UNSUPPORTED', `this Gemini model gives no token log-probabilities, so --verdict probability cannot work with it (${status}): ${message}`, details);
  if (statusName === 'FAILED_PRECONDITION') return new RubricateError('JUDGE_UNAVAILABLE', `Gemini cannot serve this request (${status}): ${message}`, details);
  const overflow = readBudgetOverflow(text);
  if (overflow) return new RubricateError('JUDGE_CONTEXT_OVERFLOW', `${describeBudgetOverflow(overflow)}: ${message}`, { ...details, overflow });
  if (status === 504 || statusName === 'DEADLINE_EXCEEDED') return new RubricateError('JUDGE_TIMEOUT', `Gemini timed out (${status}): ${message}`, details);
  if (status >= 500) return new RubricateError('JUDGE_SERVER_ERROR', `Gemini server error ${status}: ${message}`, details);
  return new RubricateError('JUDGE_REQUEST_REJECTED', `Gemini rejected the request (${status}): ${message}`, details);
}
