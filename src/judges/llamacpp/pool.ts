/**
 * A fixed set of resources (llama.cpp context sequences) lent out one caller at a time.
 * Callers beyond the pool size wait in arrival order; a caller whose signal aborts while
 * waiting leaves the queue without taking anything. A caller may say which free resource it
 * prefers (for a sequence: the one whose KV cache already holds the longest part of its prompt).
 */
import { RubricateError } from '../../errors.js';

interface Waiter<T> {
  resolve: (resource: T) => void;
  reject: (error: unknown) => void;
}

export class ResourcePool<T> {
  private readonly free: T[];
  private readonly waiters: Waiter<T>[] = [];
  private closed = false;

  constructor(resources: readonly T[]) {
    this.free = [...resources];
  }

  get available(): number {
    return this.free.length;
  }

  get waiting(): number {
    return this.waiters.length;
  }

  /** `preference` scores a free resource (the highest is taken; ties go to the most recently released). */
  acquire(signal?: AbortSignal, preference?: (resource: T) => number): Promise<T> {
    if (this.closed) return Promise.reject(new RubricateError('JUDGE_UNAVAILABLE', 'the local judge is closed'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    const resource = this.takePreferred(preference);
    if (resource !== undefined) return Promise.resolve(resource);
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => {
        const index = this.waiters.indexOf(waiter);
        if (index >= 0) this.waiters.splice(index, 1);
        reject(signal?.reason);
      };
      const waiter: Waiter<T> = {
        resolve: (value) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(value);
        },
        reject: (error) => {
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(waiter);
    });
  }

  private takePreferred(preference: ((resource: T) => number) | undefined): T | undefined {
    if (this.free.length === 0) return undefined;
    let best = this.free.length - 1;
    if (preference) {
      let bestScore = preference(this.free[best]);
      for (let index = this.free.length - 2; index >= 0; index -= 1) {
        const score = preference(this.free[index]);
        if (score > bestScore) [best, bestScore] = [index, score];
      }
    }
    return this.free.splice(best, 1)[0];
  }

  release(resource: T): void {
    const next = this.waiters.shift();
    if (next) next.resolve(resource);
    else this.free.push(resource);
  }

  /** Rejects everyone still waiting; resources already lent are returned through `release` as usual. */
  close(): void {
    this.closed = true;
    for (const waiter of this.waiters.splice(0)) waiter.reject(new RubricateError('JUDGE_UNAVAILABLE', 'the local judge was closed while this call waited'));
  }
}
