/**
 * Bearer-token authentication. Tokens are compared as SHA-256 digests with
 * `timingSafeEqual`, so neither the token's content nor its length leaks through timing.
 * Trainers that cannot send headers (OpenRLHF, slime post plain JSON) may put the token in
 * the URL as `?token=…`. A refusal never says what was wrong.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { RubricateError } from '../errors.js';
import { errorResponse } from './http-error.js';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export function tokenMatches(expectedDigest: Buffer, given: string | undefined): boolean {
  if (given === undefined) return false;
  return timingSafeEqual(digest(given), expectedDigest);
}

const bearerPattern = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Middleware that lets a request through only with the right token; no-op without a token. */
export function bearerAuth(token: string | undefined): MiddlewareHandler {
  if (token === undefined || token === '') return async (_context, next) => next();
  const expected = digest(token);
  return async (context, next) => {
    const header = context.req.header('authorization');
    const fromHeader = header ? bearerPattern.exec(header)?.[1] : undefined;
    const fromQuery = context.req.query('token');
    // Both are checked (no early exit on the first), so timing does not tell which one was present.
    const headerOk = tokenMatches(expected, fromHeader ?? '');
    const queryOk = tokenMatches(expected, fromQuery ?? '');
    if ((fromHeader !== undefined && headerOk) || (fromQuery !== undefined && queryOk)) {
      await next();
      return;
    }
    return errorResponse(context, new RubricateError('UNAUTHORIZED', 'unauthorized'));
  };
}
