/** Which request bodies a JSON endpoint accepts (used by `readJsonBody` for every JSON route). */
import { RubricateError } from '../errors.js';

/**
 * The refusal of a body that is not declared as JSON, or undefined. Every JSON endpoint reads its
 * body through `readJsonBody`, which calls this first, so unknown routes still answer 404.
 */
export function contentTypeRefusal(contentType: string | undefined): RubricateError | undefined {
  if (isJsonContentType(contentType)) return undefined;
  return new RubricateError('UNSUPPORTED_MEDIA_TYPE', `send the body as JSON with "Content-Type: application/json"${contentType ? ` (got "${contentType}")` : ' (no Content-Type given)'}`, {
    field: 'content-type',
  });
}

/** Media types a JSON endpoint accepts: application/json and any `+json` type. */
export function isJsonContentType(value: string | undefined): boolean {
  if (!value) return false;
  const type = value.split(';')[0].trim().toLowerCase();
  return type === 'application/json' || (type.startsWith('application/') && type.endsWith('+json'));
}
