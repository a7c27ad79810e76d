import { createHash } from 'node:crypto';
import { canonicalJson } from './json.js';

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** sha256 of the canonical JSON of a value: equal values, equal hashes. */
export function hashValue(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
