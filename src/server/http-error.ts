/**
 * The one mapping from errors to HTTP answers: a RubricateError's code decides the status
 * (`errorCodes[code].httpStatus`), the body is always `{error: {code, message}}`, and
 * refusals that can be retried carry Retry-After.
 */
import type { Context } from 'hono';
import { errorCodes, RubricateError, toRubricateError, type ErrorCode } from '../errors.js';
import { publicMessage } from './public-errors.js';

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
}

/**
 * `details.httpStatus` refines the status where HTTP has a more precise one than the code's
 * (413 for a body over the limit, which is an INPUT_INVALID).
 */
export function httpStatusOf(error: RubricateError): number {
  const refined = error.details.httpStatus;
  if (typeof refined === 'number' && Number.isInteger(refined) && refined >= 400 && refined <= 599) return refined;
  return errorCodes[error.code].httpStatus;
}

/** The answer's body: the code and a message without internal addresses, paths or stacks. */
export function errorBody(error: RubricateError): ErrorBody {
  return { error: { code: error.code, message: publicMessage(error.toJSON().message) } };
}

/** Retry-After in whole seconds for refusals that say when to come back. */
export function retryAfterHeader(error: RubricateError): string | undefined {
  const milliseconds = error.details.retryAfterMs;
  if (typeof milliseconds !== 'number' || !Number.isFinite(milliseconds)) return undefined;
  return String(Math.max(1, Math.ceil(milliseconds / 1000)));
}

export function errorResponse(context: Context, thrown: unknown): Response {
  const error = toRubricateError(thrown);
  const retryAfter = retryAfterHeader(error);
  if (retryAfter) context.header('Retry-After', retryAfter);
  if (error.code === 'UNAUTHORIZED') context.header('WWW-Authenticate', 'Bearer');
  // Internal errors keep their message out of the answer (it may show paths or internals).
  const body = error.code === 'INTERNAL' && !RubricateError.isInstance(thrown) ? { error: { code: error.code, message: 'internal error' } } : errorBody(error);
  return context.json(body, httpStatusOf(error) as 400);
}
