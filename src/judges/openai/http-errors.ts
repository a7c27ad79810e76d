import { RubricateError } from '../../errors.js';
import { describeBudgetOverflow, readBudgetOverflow } from '../overflow.js';

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

/** The parts of a server's error body we act on. */
export interface ServerErrorBody {
  message?: string;
  /** The request field the server names as the problem (OpenAI `param`). */
  param?: string;
  code?: string;
  type?: string;
  /** The error object itself, for server-specific fields (llama.cpp `n_ctx`, `n_prompt_tokens`). */
  fields: Record<string, unknown>;
}

function stringOrNumber(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : typeof value === 'number' ? String(value) : undefined;
}

/**
 * Reads the error of any shape servers send: OpenAI `{error: {message, type, param, code}}`,
 * Anthropic `{type: "error", error: {type, message}}`, vLLM's older flat `{object: "error",
 * message, …}`, FastAPI `{detail}`, `{error: "text"}`, and Gemini's array `[{error: {…}}]`.
 */
export function readErrorBody(body: unknown): ServerErrorBody {
  let value = Array.isArray(body) ? body[0] : body;
  if (typeof value === 'string') return { message: value.trim().slice(0, 500) || undefined, fields: {} };
  if (!value || typeof value !== 'object') return { fields: {} };
  const outer = value as Record<string, unknown>;
  if (typeof outer.error === 'string') return { message: outer.error, fields: outer };
  if (outer.error && typeof outer.error === 'object' && !Array.isArray(outer.error)) value = outer.error;
  const fields = value as Record<string, unknown>;
  let message = typeof fields.message === 'string' ? fields.message : undefined;
  if (message === undefined && typeof fields.detail === 'string') message = fields.detail;
  if (message === undefined && Array.isArray(fields.detail)) {
    // FastAPI validation errors: name the field (`body.chat_template_kwargs: Extra inputs are not permitted`).
    message = fields.detail
      .map((entry) => {
        const { msg, loc } = (entry ?? {}) as { msg?: unknown; loc?: unknown };
        if (typeof msg !== 'string') return JSON.stringify(entry);
        return Array.isArray(loc) ? `${loc.join('.')}: ${msg}` : msg;
      })
      .join('; ');
  }
  return { message, param: stringOrNumber(fields.param), code: stringOrNumber(fields.code), type: stringOrNumber(fields.type ?? fields.status), fields };
}

/** Maps a non-2xx HTTP answer of a chat-completions endpoint to a coded error. */
export function httpStatusToError(
  status: number,
  headers: Record<string, string | undefined>,
  body: unknown,
  endpoint: string,
): RubricateError {
  const server = readErrorBody(body);
  const message = server.message ?? `HTTP ${status}`;
  const retryAfterMs = retryAfterMilliseconds(headers);
  const details = {
    status,
    endpoint,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    ...(server.param !== undefined ? { param: server.param } : {}),
    ...(server.code !== undefined && server.code !== String(status) ? { serverCode: server.code } : {}),
  };
  if (status === 429) return new RubricateError('JUDGE_RATE_LIMITED', `rate limited by the judge: ${message}`, details);
  if (status === 408) return new RubricateError('JUDGE_TIMEOUT', `judge request timed out (408): ${message}`, details);
  if (status === 401 || status === 403) {
    return new RubricateError('JUDGE_AUTH', `the judge endpoint refused the credentials (${status}): ${message}`, details);
  }
  if (status >= 500) return new RubricateError('JUDGE_SERVER_ERROR', `judge server error ${status}: ${message}`, details);
  if (status === 404) {
    return new RubricateError('JUDGE_NOT_FOUND', `the judge endpoint has no such model, deployment or path (404): ${message}`, details);
  }
  const overflow = readBudgetOverflow(message, server.fields);
  if (overflow) return new RubricateError('JUDGE_CONTEXT_OVERFLOW', `${describeBudgetOverflow(overflow)}: ${message}`, { ...details, overflow });
  if (server.code === 'content_filter' || server.code === 'content_policy_violation') {
    return new RubricateError('JUDGE_CONTENT_FILTERED', `the provider's content filter refused the request: ${message}`, details);
  }
  return new RubricateError('JUDGE_REQUEST_REJECTED', `judge rejected the request (${status}): ${message}`, details);
}

/** Socket-level failures (refused, reset, DNS): shared by every HTTP judge. */
export { networkErrorToError } from '../http/json-client.js';
