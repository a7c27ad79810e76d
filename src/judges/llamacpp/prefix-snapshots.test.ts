import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PrefixSnapshots, sharedPrefixLength } from './prefix-snapshots.js';

type Sequence = Parameters<PrefixSnapshots['prepare']>[0];
type Tokens = Parameters<PrefixSnapshots['prepare']>[1];

/** A stand-in for a llama.cpp sequence: its tokens, saved to and loaded from a file as JSON. */
function fakeSequence(tokens: number[] = []) {
  const saved: string[] = [];
  const sequence = {
    contextTokens: tokens,
    async saveStateToFile(file: string) {
      writeFileSync(file, JSON.stringify(sequence.contextTokens));
      saved.push(file);
      return { fileSize: 1 };
    },
    async loadStateFromFile(file: string) {
      sequence.contextTokens = JSON.parse(readFileSync(file, 'utf8')) as number[];
    },
  };
  return { sequence, saved, asSequence: sequence as unknown as Sequence };
}

const prompt = (tail: number[], length = 100) => [...Array.from({ length }, (_, index) => index), ...tail] as unknown as Tokens & number[];

describe('PrefixSnapshots', () => {
  it('counts shared leading tokens, within a limit', () => {
    expect(sharedPrefixLength([1, 2, 3, 4], [1, 2, 9])).toBe(2);
    expect(sharedPrefixLength([1, 2, 3], [1, 2, 3], 2)).toBe(2);
    expect(sharedPrefixLength([], [1])).toBe(0);
  });

  it('has the first call publish its prefix and the next one wait for it and load it', async () => {
    const snapshots = new PrefixSnapshots({ minSharedTokens: 16, maxSnapshots: 2 });
    const donor = fakeSequence();
    const first = await snapshots.prepare(donor.asSequence, prompt([500, 501]));
    expect(first.publish).toBeDefined();
    const other = fakeSequence();
    const waiting = snapshots.prepare(other.asSequence, prompt([600]));
    donor.sequence.contextTokens = prompt([500]);
    await first.publish!(donor.asSequence);
    const second = await waiting;
    expect(second).toMatchObject({ copiedTokens: 100 });
    expect(second.publish).toBeUndefined();
    expect(other.sequence.contextTokens).toEqual(prompt([500]));
    snapshots.close();
    expect(existsSync(path.dirname(donor.saved[0]))).toBe(false);
  });

  it('lets waiters go on alone when the publishing call fails, and skips short prefixes', async () => {
    const snapshots = new PrefixSnapshots({ minSharedTokens: 16, maxSnapshots: 2 });
    const first = await snapshots.prepare(fakeSequence().asSequence, prompt([1]));
    const waiting = snapshots.prepare(fakeSequence().asSequence, prompt([2]));
    first.abandon();
    const second = await waiting;
    expect(second.copiedTokens).toBe(0);
    // It evaluates the prefix itself, so it offers it in turn.
    expect(second.publish).toBeDefined();
    second.abandon();
    // A sequence that already holds the prefix has nothing to gain from a copy.
    const holder = fakeSequence(prompt([3]));
    const third = await snapshots.prepare(holder.asSequence, prompt([4]));
    expect(third).toMatchObject({ copiedTokens: 0 });
    expect(third.publish).toBeUndefined();
    expect((await snapshots.prepare(fakeSequence().asSequence, [1, 2, 3] as unknown as Tokens)).publish).toBeUndefined();
    snapshots.close();
  });

  it('keeps a bounded number of files, removing the oldest nobody uses', async () => {
    const snapshots = new PrefixSnapshots({ minSharedTokens: 16, maxSnapshots: 2 });
    const files: string[] = [];
    for (let item = 0; item < 4; item += 1) {
      const donor = fakeSequence();
      const plan = await snapshots.prepare(donor.asSequence, [item + 1000, ...prompt([item])] as unknown as Tokens);
      donor.sequence.contextTokens = [item + 1000, ...prompt([])];
      await plan.publish!(donor.asSequence);
      files.push(donor.saved[0]);
    }
    expect(files.map((file) => existsSync(file))).toEqual([false, false, true, true]);
    snapshots.close();
    expect(files.some((file) => existsSync(file))).toBe(false);
  });

  it('stops waiting for a prefix still being evaluated when the call is aborted', async () => {
    const snapshots = new PrefixSnapshots({ minSharedTokens: 16, maxSnapshots: 2 });
    const first = await snapshots.prepare(fakeSequence().asSequence, prompt([1]));
    const controller = new AbortController();
    const waiting = snapshots.prepare(fakeSequence().asSequence, prompt([2]), controller.signal);
    controller.abort(new Error('timed out'));
    const plan = await waiting;
    expect(plan.copiedTokens).toBe(0);
    expect(plan.publish).toBeUndefined();
    first.abandon();
    snapshots.close();
  });
});
