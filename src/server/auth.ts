/**
 * Bearer-token authentication. Tokens are compared as SHA-256 digests with
 * `timingSafeEqual`, so neither the token's content nor its length leaks through timing.
 * Trainers that cannot send headers (OpenRLHF, slime post plain JSON) may put the token in
 * the URL as `?token=…`. A refusal never says what was wrong.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { MiddlewareHandler } from 'hono';
import { RubricateError } from '../errors.js';
import { requestHeader } from './body.js';
import { errorResponse } from './http-error.js';

function digest(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

export function tokenMatches(expectedDigest: Buffer, given: string | undefined): boolean {
  if (given === undefined) return false;
  return timingSafeEqual(digest(given), expectedDigest);
}

const bearerPattern = /^Bearer[ \t]+(\S+)[ \t]*$/i;

/** Checks the credentials of a request: the bearer token of an Authorization header, or `?token=`. */
export type CredentialCheck = (authorization: string | undefined, queryToken: string | undefined) => boolean;

/** A credential check for `token`; without a token, everything is allowed. */
export function credentialCheck(token: string | undefined): CredentialCheck {
  if (token === undefined || token === '') return () => true;
  const expected = digest(token);
  return (authorization, queryToken) => {
    const fromHeader = authorization ? bearerPattern.exec(authorization)?.[1] : undefined;
    // Both are checked (no early exit on the first), so timing does not tell which one was present.
    const headerOk = tokenMatches(expected, fromHeader ?? '');
    const queryOk = tokenMatches(expected, queryToken ?? '');
    return (fromHeader !== undefined && headerOk) || (queryToken !== undefined && queryOk);
  };
}

/** Middleware that lets a request through only with the right token; no-op without a token. */
export function bearerAuth(token: string | undefined): MiddlewareHandler {
  if (token === undefined || token === '') return async (_context, next) => next();
  const check = credentialCheck(token);
  return async (context, next) => {
    if (check(requestHeader(context, 'authorization'), context.req.query('token'))) {
      await next();
      return;
    }
    return errorResponse(context, new RubricateError('UNAUTHORIZED', 'unauthorized'));
  };
}
