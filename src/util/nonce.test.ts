import { describe, expect, it } from 'vitest';
import { sha256Hex } from './hash.js';
import { unclashedNonce } from './nonce.js';

describe('unclashedNonce', () => {
  it('keeps the content-derived marker, and re-draws it from marker:attempt while the content would hold it', () => {
    const initial = sha256Hex('content').slice(0, 12);
    expect(unclashedNonce(initial, () => false)).toBe(initial);
    const first = sha256Hex(`${initial}:1`).slice(0, 12);
    const second = sha256Hex(`${first}:2`).slice(0, 12);
    const held = new Set([initial, first]);
    expect(unclashedNonce(initial, (nonce) => held.has(nonce))).toBe(second);
    expect(second).toHaveLength(12);
  });
});
