/**
 * Redaction of secrets in anything rubricate writes or shows: credentials in URLs, secret
 * query parameters, `Bearer …` credentials, provider-key shapes, and every secret value
 * registered where it entered the program (API keys, secret headers). Clean text comes back
 * as the same string.
 */

export const redactedMarker = '[REDACTED]';

const secretName = '[A-Za-z0-9_.-]*?(?:key|token|secret|signature|sig|password|passwd|pwd|credential|auth|session)[A-Za-z0-9_.-]*';
const urlUserinfo = /\b([a-z][a-z0-9+.-]*:\/\/)([^/?#\s@"'<>]+)@/gi;
const secretQueryParameter = new RegExp(`([?&;]${secretName}=)([^&#\\s"'<>]+)`, 'gi');
const bearerCredential = /\b(Bearer[ \t]+)([A-Za-z0-9._~+/=-]{4,})/g;
const keyShaped = /\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,})\b/g;

const secrets = new Set<string>();
let secretList: string[] = [];

/** Adds a value to scrub from every output; values shorter than 6 characters would hit ordinary text and are ignored. */
export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== 'string') return;
  const trimmed = value.trim();
  if (trimmed.length < 6 || secrets.has(trimmed)) return;
  secrets.add(trimmed);
  secretList = [...secrets].sort((first, second) => second.length - first.length);
}

/** Redacts secrets in any text (messages, URLs, log lines). */
export function redactText(text: string): string {
  let result = text;
  for (const secret of secretList) if (result.includes(secret)) result = result.split(secret).join(redactedMarker);
  return result
    .replace(urlUserinfo, `$1${redactedMarker}@`)
    .replace(secretQueryParameter, `$1${redactedMarker}`)
    .replace(bearerCredential, `$1${redactedMarker}`)
    .replace(keyShaped, redactedMarker);
}

/** A URL fit to show. */
export function redactUrl(url: string): string;
export function redactUrl(url: string | undefined): string | undefined;
export function redactUrl(url: string | undefined): string | undefined {
  return url === undefined ? undefined : redactText(url);
}

/** Redacts every string inside a JSON-like value; returns the same object when nothing changed. */
export function redactDeep<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return redactText(value) as T;
  if (value === null || typeof value !== 'object' || depth > 8 || value instanceof Error) return value;
  if (Array.isArray(value)) {
    let changed: unknown[] | undefined;
    value.forEach((entry, index) => {
      const redacted = redactDeep(entry, depth + 1);
      if (redacted !== entry) (changed ??= [...value])[index] = redacted;
    });
    return (changed ?? value) as T;
  }
  let changed: Record<string, unknown> | undefined;
  for (const key of Object.keys(value)) {
    const entry = (value as Record<string, unknown>)[key];
    const redacted = redactDeep(entry, depth + 1);
    if (redacted !== entry) (changed ??= { ...(value as Record<string, unknown>) })[key] = redacted;
  }
  return (changed ?? value) as T;
}
