import { sha256Hex } from './hash.js';

/**
 * The rule every content-derived delimiter follows: start from a hash of the content, and in
 * the (astronomically unlikely) case that the content already holds the marker, re-draw it from
 * `marker:attempt` until it does not. Same content, same marker: prompts and cache keys stay stable.
 */
export function unclashedNonce(initial: string, clashes: (nonce: string) => boolean): string {
  let nonce = initial;
  for (let attempt = 1; clashes(nonce); attempt += 1) nonce = sha256Hex(`${nonce}:${attempt}`).slice(0, initial.length);
  return nonce;
}
