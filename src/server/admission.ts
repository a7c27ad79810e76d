/**
 * The bounded admission queue: at most `capacity` items admitted (waiting for the judge or
 * being graded) at once. A request that does not fit is refused with a Retry-After estimate
 * instead of piling up; a request that may wait (adapters whose clients cannot retry well)
 * waits in a bounded FIFO line (`waitingCapacity` items, `--max-waiting`) until room frees
 * up. A full line, or a deadline passing in line, is a refusal for load (OVERLOADED with
 * Retry-After): never a reward, never a grading failure.
 *
 * An item leaves the queue when its grading ends, not when its request is answered: work
 * abandoned at a deadline still occupies the judge, so it still counts.
 */
import { RubricateError } from '../errors.js';

interface Waiter {
  count: number;
  resolve(): void;
  reject(error: RubricateError): void;
  timer?: NodeJS.Timeout;
}

export interface AdmitOptions {
  /** Wait in line for room instead of being refused at once. */
  wait?: boolean;
  /** Epoch milliseconds after which a waiting request gives up (OVERLOADED, with Retry-After). */
  deadlineAt?: number;
}

/** Completions are counted in one-second buckets over this many seconds to estimate throughput. */
const rateWindowSeconds = 10;

/** Items allowed to wait for room by default: a full trainer step of per-sample requests. */
export const defaultWaitingCapacity = 4096;

export class AdmissionQueue {
  readonly capacity: number;
  /** Items allowed to wait in line, beyond the admitted ones. */
  readonly waitingCapacity: number;
  private admitted = 0;
  private waitingItems = 0;
  private readonly line: Waiter[] = [];
  private readonly completions = new Array<number>(rateWindowSeconds).fill(0);
  private completionSecond = 0;
  private idleWaiters: Array<() => void> = [];
  private readonly now: () => number;

  constructor(capacity: number, options: { waitingCapacity?: number; now?: () => number } = {}) {
    this.capacity = Math.max(1, Math.floor(capacity));
    this.waitingCapacity = Math.max(0, Math.floor(options.waitingCapacity ?? defaultWaitingCapacity));
    this.now = options.now ?? Date.now;
    this.completionSecond = Math.floor(this.now() / 1000);
  }

  /** Items admitted and not yet released. */
  get used(): number {
    return this.admitted;
  }

  /** Items of requests waiting in line. */
  get waiting(): number {
    return this.waitingItems;
  }

  /**
   * Admits `count` (≤ capacity) items or throws OVERLOADED with `retryAfterMs`: at once when
   * there is no room and the request may not wait (or the line is full), else when the
   * deadline passes in line. Larger requests are admitted in parts by the caller.
   */
  admit(count: number, options: AdmitOptions = {}): Promise<void> {
    if (count > this.capacity) {
      return Promise.reject(new RubricateError('INTERNAL', `a part of ${count} items is larger than the admission queue of ${this.capacity}; admit it in parts`));
    }
    if (this.line.length === 0 && this.admitted + count <= this.capacity) {
      this.admitted += count;
      return Promise.resolve();
    }
    if (!options.wait || this.waitingItems + count > this.waitingCapacity) return Promise.reject(this.refusal(count));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { count, resolve, reject };
      if (options.deadlineAt !== undefined) {
        const remaining = Math.max(0, options.deadlineAt - this.now());
        waiter.timer = setTimeout(() => {
          const index = this.line.indexOf(waiter);
          if (index === -1) return;
          this.line.splice(index, 1);
          this.waitingItems -= waiter.count;
          const seconds = this.retryAfterSeconds(waiter.count);
          reject(
            new RubricateError('OVERLOADED', `the deadline passed while waiting for room in the admission queue (${this.admitted} of ${this.capacity} items admitted); retry after ${seconds} s`, {
              retryAfterMs: seconds * 1000,
            }),
          );
          // Removing a large waiter at the head may let smaller ones behind it in.
          this.drain();
        }, remaining);
      }
      this.line.push(waiter);
      this.waitingItems += count;
    });
  }

  release(count: number): void {
    this.admitted = Math.max(0, this.admitted - count);
    this.recordCompletions(count);
    this.drain();
    if (this.admitted === 0 && this.line.length === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Resolves once nothing is admitted or waiting. */
  idle(): Promise<void> {
    if (this.admitted === 0 && this.line.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Items finished per second over the recent window (0 when nothing finished lately). */
  throughput(): number {
    this.rollCompletions();
    const total = this.completions.reduce((sum, value) => sum + value, 0);
    return total / rateWindowSeconds;
  }

  /** Seconds until `count` more items are likely to fit, from recent throughput; 1 to 60. */
  retryAfterSeconds(count: number): number {
    const excess = this.admitted + this.waitingItems + count - this.capacity;
    const rate = this.throughput();
    if (rate <= 0) return 2;
    return Math.min(60, Math.max(1, Math.ceil(excess / rate)));
  }

  /** True when not even one more item fits (nothing is waiting for room either). */
  get full(): boolean {
    return this.admitted >= this.capacity;
  }

  /** True when the queue is full and the waiting line cannot take one more item either. */
  get lineFull(): boolean {
    return this.full && this.waitingItems >= this.waitingCapacity;
  }

  /** The OVERLOADED error for `count` items that do not fit, with its Retry-After estimate. */
  refusal(count: number): RubricateError {
    const seconds = this.retryAfterSeconds(count);
    return new RubricateError('OVERLOADED', `the admission queue is full (${this.admitted} of ${this.capacity} items); retry after ${seconds} s`, {
      retryAfterMs: seconds * 1000,
    });
  }

  private drain(): void {
    while (this.line.length > 0 && this.admitted + this.line[0].count <= this.capacity) {
      const waiter = this.line.shift()!;
      if (waiter.timer) clearTimeout(waiter.timer);
      this.waitingItems -= waiter.count;
      this.admitted += waiter.count;
      waiter.resolve();
    }
  }

  private rollCompletions(): void {
    const second = Math.floor(this.now() / 1000);
    const elapsed = second - this.completionSecond;
    if (elapsed <= 0) return;
    for (let step = 1; step <= Math.min(elapsed, rateWindowSeconds); step += 1) this.completions[(this.completionSecond + step) % rateWindowSeconds] = 0;
    this.completionSecond = second;
  }

  private recordCompletions(count: number): void {
    this.rollCompletions();
    this.completions[this.completionSecond % rateWindowSeconds] += count;
  }
}
