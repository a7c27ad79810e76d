/**
 * How report data sits inside the HTML: JSON in `<script type="application/json">` elements,
 * made safe to embed (no `<` survives, so text such as `</script>` in a response cannot end
 * the element), and gzip-compressed + base64 when large (pages decompress it with the
 * browser's DecompressionStream).
 */
import { gunzipSync, gzipSync } from 'node:zlib';
import { RubricateError } from '../errors.js';
import { safeParseJson } from '../util/json.js';

export type PayloadEncoding = 'json' | 'gzip-base64';
export type PayloadCompression = 'auto' | 'always' | 'never';

export interface EmbeddedPayload {
  encoding: PayloadEncoding;
  /** Text to place verbatim between the script tags. */
  text: string;
}

/** Above this many bytes of JSON, `auto` compresses (below it, plain JSON is easier to inspect). */
export const compressionThresholdBytes = 512 * 1024;

/**
 * JSON that can sit inside a script element: `<`, `>` and `&` become \u escapes (JSON.parse
 * reads them back as the same characters), and so do U+2028 / U+2029, which older
 * JavaScript engines treat as line ends.
 */
export function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * The overview's columns stay plain JSON up to this size: the page parses them synchronously,
 * before the browser turns to the (larger, compressed) texts, and without needing
 * DecompressionStream.
 */
export const plainCoreLimitBytes = 4 * 1024 * 1024;

export function embedPayload(value: unknown, compression: PayloadCompression = 'auto', thresholdBytes = compressionThresholdBytes): EmbeddedPayload {
  const json = scriptSafeJson(value);
  const compress = compression === 'always' || (compression === 'auto' && json.length > thresholdBytes);
  if (!compress) return { encoding: 'json', text: json };
  // base64 has no character that could end a script element. Level 6: level 9 is twice as slow for <1% smaller output.
  return { encoding: 'gzip-base64', text: gzipSync(Buffer.from(json, 'utf8'), { level: 6 }).toString('base64') };
}

/** Reads an embedded payload back (tests and tools; pages do the same in the browser). */
export function readEmbeddedPayload(payload: EmbeddedPayload): unknown {
  const json = payload.encoding === 'gzip-base64' ? gunzipSync(Buffer.from(payload.text, 'base64')).toString('utf8') : payload.text;
  const parsed = safeParseJson(json);
  if (!parsed.ok) throw new RubricateError('INPUT_INVALID', `embedded report data is not JSON: ${parsed.error}`);
  return parsed.value;
}

/** Escapes text for HTML element content and attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}
