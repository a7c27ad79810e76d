import crypto from 'node:crypto';
import { canonicalJson } from './json.js';

/** One-shot `crypto.hash` (Node ≥ 20.12) is several times cheaper than a Hash object per call. */
const oneShot = (crypto as { hash?: (algorithm: string, data: string, encoding: 'hex') => string }).hash;

export function sha256Hex(text: string): string {
  return oneShot ? oneShot('sha256', text, 'hex') : crypto.createHash('sha256').update(text).digest('hex');
}

/** sha256 of the canonical JSON of a value: equal values, equal hashes. */
export function hashValue(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}

const digests = new Map<string, string>();

/** sha256 of a text that recurs across calls (system prompts), memoised (bounded). */
export function digestOf(text: string): string {
  let digest = digests.get(text);
  if (digest === undefined) {
    digest = `sha256:${sha256Hex(text)}`;
    if (digests.size > 256) digests.clear();
    digests.set(text, digest);
  }
  return digest;
}

/** sha256 of a file's bytes, read as a stream (the file may be larger than memory). */
export async function sha256OfFile(path: string): Promise<string> {
  const { createReadStream } = await import('node:fs');
  const hash = crypto.createHash('sha256');
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) hash.update(chunk);
  return hash.digest('hex');
}
