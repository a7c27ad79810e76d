/**
 * The one redaction function for everything rubricate writes or shows: results lines, metrics
 * files, reports, logs, stderr, and every HTTP answer. It removes
 *   - credentials in URLs (`scheme://user:password@host`),
 *   - values of URL query parameters named like a secret (`?api_key=…`, `&token=…`, `sig=…`),
 *   - `Bearer …` credentials,
 *   - every secret value rubricate was configured with (API keys, the server token) and the
 *     secrets of the environment (variables named like *_KEY, *_TOKEN, *_SECRET, *_PASSWORD),
 *     wherever they appear, e.g. echoed back in a judge's 401 body.
 * Text without any of these comes back as the same string, so redacting is free for the common
 * case and never changes a cache key or a hash of clean text.
 */

export const redactedMarker = '[REDACTED]';

/** Query-parameter (and header-like) names whose values are secrets. */
const secretNamePattern = '[A-Za-z0-9_.-]*?(?:key|token|secret|signature|sig|password|passwd|pwd|credential|auth|session)[A-Za-z0-9_.-]*';

const urlUserinfo = /\b([a-z][a-z0-9+.-]*:\/\/)([^/?#\s@"'<>]+)@/gi;
const secretQueryParameter = new RegExp(`([?&;]${secretNamePattern}=)([^&#\\s"'<>]+)`, 'gi');
const bearerCredential = /\b(Bearer[ \t]+)([A-Za-z0-9._~+/=-]{4,})/g;
/** Shapes of provider keys, redacted even when not configured here (e.g. a key of another account). */
const keyShaped = /\b(?:sk-(?:proj-|ant-)?[A-Za-z0-9_-]{16,}|AIza[0-9A-Za-z_-]{30,})\b/g;

/** Shortest configured secret worth scrubbing: shorter values would match ordinary text. */
const minimumSecretLength = 6;
const secrets = new Set<string>();
let secretList: string[] = [];
let environmentScanned = false;

const secretEnvironmentName = /(?:^|_)(?:API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD)$/i;

/**
 * Adds a secret value to scrub from every output (an API key, the server token). Called where
 * the value enters the program; unknown or short values are ignored.
 */
export function registerSecret(value: string | undefined | null): void {
  if (typeof value !== 'string') return;
  const trimmed = value.trim();
  if (trimmed.length < minimumSecretLength || secrets.has(trimmed)) return;
  secrets.add(trimmed);
  // Longest first, so a secret that contains another is replaced whole.
  secretList = [...secrets].sort((first, second) => second.length - first.length);
}

/** Header names whose values are credentials (`authorization`, `x-api-key`, `api-key`, `x-goog-api-key`, cookies…). */
export const credentialHeaderName = /key|token|secret|auth|cookie|password|signature|session|credential/i;

/**
 * Registers the credentials in a set of headers about to be sent. Every client that sends a
 * request with a key (the JSON client of every HTTP judge, the SDK transport, the Batch API
 * clients) builds its headers through this, so a key is scrubbed from every output whichever
 * backend carried it.
 */
export function registerCredentialHeaders(headers: Readonly<Record<string, string | null | undefined>>): void {
  for (const [name, value] of Object.entries(headers)) {
    if (!credentialHeaderName.test(name) || typeof value !== 'string') continue;
    // `Bearer KEY`: the key is the secret (a body may echo it with or without the scheme).
    registerSecret(/^Bearer\s+(\S+)$/i.exec(value)?.[1] ?? value);
  }
}

function scanEnvironment(): void {
  if (environmentScanned) return;
  environmentScanned = true;
  // Environment values must look like credentials (long, no spaces): a variable such as
  // SOME_KEY=default must not make the word "default" disappear from every message.
  for (const [name, value] of Object.entries(process.env)) {
    if (secretEnvironmentName.test(name) && value !== undefined && value.length >= 12 && !/\s/.test(value)) registerSecret(value);
  }
}

/** Forgets the registered secrets (tests). */
export function clearRegisteredSecrets(): void {
  secrets.clear();
  secretList = [];
  environmentScanned = false;
}

/** Quick test for the characters every redaction needs, so clean text costs one scan. */
function mayHoldSecret(text: string): boolean {
  return text.includes('://') || text.includes('=') || text.includes('Bearer') || text.includes('sk-') || text.includes('AIza') || secretList.length > 0;
}

/** Redacts secrets in any text (messages, log lines, URLs). */
export function redactText(text: string): string {
  scanEnvironment();
  if (text.length === 0 || !mayHoldSecret(text)) return text;
  let result = text;
  for (const secret of secretList) if (result.includes(secret)) result = result.split(secret).join(redactedMarker);
  if (result.includes('://')) result = result.replace(urlUserinfo, `$1${redactedMarker}@`);
  if (result.includes('=')) result = result.replace(secretQueryParameter, `$1${redactedMarker}`);
  if (result.includes('Bearer')) result = result.replace(bearerCredential, `$1${redactedMarker}`);
  if (result.includes('sk-') || result.includes('AIza')) result = result.replace(keyShaped, redactedMarker);
  return result;
}

/** A URL fit to show: credentials and secret query values replaced. Same string when clean. */
export function redactUrl(url: string): string;
export function redactUrl(url: string | undefined): string | undefined;
export function redactUrl(url: string | undefined): string | undefined {
  return url === undefined ? undefined : redactText(url);
}

/**
 * Redacts every string inside a JSON-like value (log objects, error details). Returns the same
 * object when nothing changed, so clean values are not copied.
 */
export function redactDeep<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return redactText(value) as T;
  if (value === null || typeof value !== 'object' || depth > 8) return value;
  if (value instanceof Error) return value;
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
