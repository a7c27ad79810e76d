import { describe, expect, it, vi } from 'vitest';
import { mapInOrder } from './ordered-stream.js';

/** A promise settled from outside, so a test decides the order in which work finishes. */
function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (reason: unknown) => void;
  const promise = new Promise<T>((yes, no) => {
    resolve = yes;
    reject = no;
  });
  return { promise, resolve, reject };
}

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const value of stream) out.push(value);
  return out;
}

describe('mapInOrder', () => {
  it('yields in input order whatever finishes first, with at most `window` started and not handed out', async () => {
    const gates = Array.from({ length: 6 }, () => deferred<string>());
    let started = 0;
    let handedOut = 0;
    let mostAhead = 0;
    const stream = mapInOrder(
      [0, 1, 2, 3, 4, 5],
      (input) => {
        started += 1;
        mostAhead = Math.max(mostAhead, started - handedOut);
        return gates[input].promise;
      },
      { window: 3 },
    );
    const results = (async () => {
      const out: string[] = [];
      for await (const value of stream) {
        handedOut += 1;
        out.push(value);
      }
      return out;
    })();
    // Finish in reverse order: output order must not follow it.
    await vi.waitFor(() => expect(started).toBe(3));
    gates[2].resolve('c');
    gates[1].resolve('b');
    gates[0].resolve('a');
    await vi.waitFor(() => expect(started).toBe(6));
    for (const index of [5, 4, 3]) gates[index].resolve('def'[index - 3]);
    expect(await results).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(mostAhead).toBe(3);
  });

  it('reads no more input while the workers are busy, keeping one started', async () => {
    const first = deferred<number>();
    let busy = true;
    const read: number[] = [];
    async function* source() {
      for (const value of [1, 2, 3]) {
        read.push(value);
        yield value;
      }
    }
    const stream = mapInOrder(source(), (value) => (value === 1 ? first.promise : Promise.resolve(value)), { window: 10, busy: () => busy });
    const results = collect(stream);
    await vi.waitFor(() => expect(read).toEqual([1, 2]));
    // Two started and busy: the oldest must be handed out before input 3 is read.
    expect(read).toEqual([1, 2]);
    busy = false;
    first.resolve(1);
    expect(await results).toEqual([1, 2, 3]);
  });

  it('stops taking input and throws the error that stopped the run', async () => {
    let stop: Error | undefined;
    const seen: number[] = [];
    const stream = mapInOrder(
      [1, 2, 3, 4, 5],
      async (value) => {
        seen.push(value);
        if (value === 2) stop = new Error('judge rejected the key');
        return value;
      },
      { window: 1, stopped: () => stop },
    );
    const out: number[] = [];
    await expect(async () => {
      for await (const value of stream) out.push(value);
    }).rejects.toThrow('judge rejected the key');
    expect(out).toEqual([1]);
    expect(seen).toEqual([1, 2]);
  });

  it('throws a failed input when its turn comes, after the ones before it', async () => {
    const out: number[] = [];
    const stream = mapInOrder([1, 2, 3], async (value) => {
      if (value === 2) throw new Error('two failed');
      return value;
    }, { window: 3 });
    await expect(async () => {
      for await (const value of stream) out.push(value);
    }).rejects.toThrow('two failed');
    expect(out).toEqual([1]);
  });

  it('passes each input its index', async () => {
    expect(await collect(mapInOrder(['a', 'b'], async (value, index) => `${index}:${value}`, { window: 2 }))).toEqual(['0:a', '1:b']);
  });
});
