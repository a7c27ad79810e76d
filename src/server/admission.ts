/**
 * The bounded admission queue: at most `capacity` items admitted (waiting for the judge or
 * being graded) at once. A request that does not fit is refused with a Retry-After estimate
 * instead of piling up; a request that may wait (adapters whose clients cannot retry well)
 * waits in a bounded FIFO line (`waitingCapacity` items, `--max-waiting`) until room frees
 * up. A full line, or a deadline passing in line, is a refusal for load (OVERLOADED with
 * Retry-After): never a reward, never a grading failure.
 *
 * A trainer request (OpenRLHF, slime, Vertex, NeMo Gym: `hold`) that finds the line full is
 * held open instead of refused: it waits, behind the line, for a place in it, bounded by its
 * deadline. Its client retries only a few times a second apart (OpenRLHF: 5 × 1 s), so a step
 * larger than queue + line would otherwise run out of tries while the judge works through it.
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
  /** With `wait`: when the line is full too, be held for a place in it (until the deadline) instead of refused. */
  hold?: boolean;
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
  /** Requests held for a place in the line (`hold`), oldest first. */
  private readonly held: Waiter[] = [];
  private heldItems = 0;
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

  /** Items of requests held for a place in the line. */
  get heldCount(): number {
    return this.heldItems;
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
    if (!options.wait) return Promise.reject(this.refusal(count));
    const lineHasRoom = this.held.length === 0 && this.waitingItems + count <= this.waitingCapacity;
    if (!lineHasRoom && !options.hold) return Promise.reject(this.refusal(count));
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { count, resolve, reject };
      if (options.deadlineAt !== undefined) {
        const remaining = Math.max(0, options.deadlineAt - this.now());
        waiter.timer = setTimeout(() => this.giveUp(waiter), remaining);
      }
      if (lineHasRoom) this.enterLine(waiter);
      else {
        this.held.push(waiter);
        this.heldItems += count;
      }
    });
  }

  /** The deadline of a waiting or held request passed: OVERLOADED with Retry-After, never a reward. */
  private giveUp(waiter: Waiter): void {
    const inLine = this.line.indexOf(waiter);
    const held = inLine === -1 ? this.held.indexOf(waiter) : -1;
    if (inLine === -1 && held === -1) return;
    if (inLine !== -1) {
      this.line.splice(inLine, 1);
      this.waitingItems -= waiter.count;
    } else {
      this.held.splice(held, 1);
      this.heldItems -= waiter.count;
    }
    const seconds = this.retryAfterSeconds(waiter.count);
    waiter.reject(
      new RubricateError('OVERLOADED', `the deadline passed while waiting for room in the admission queue (${this.admitted} of ${this.capacity} items admitted); retry after ${seconds} s`, {
        retryAfterMs: seconds * 1000,
      }),
    );
    // Removing a large waiter at the head may let smaller ones behind it in.
    this.drain();
  }

  private enterLine(waiter: Waiter): void {
    this.line.push(waiter);
    this.waitingItems += waiter.count;
  }

  release(count: number): void {
    this.admitted = Math.max(0, this.admitted - count);
    this.recordCompletions(count);
    this.drain();
    if (this.admitted === 0 && this.line.length === 0 && this.held.length === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Resolves once nothing is admitted or waiting. */
  idle(): Promise<void> {
    if (this.admitted === 0 && this.line.length === 0 && this.held.length === 0) return Promise.resolve();
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
    const excess = this.admitted + this.waitingItems + this.heldItems + count - this.capacity;
    const rate = this.throughput();
    if (rate <= 0) return 2;
    return Math.min(60, Math.max(1, Math.ceil(excess / rate)));
  }

  /** True when not even one more item fits (nothing is waiting for room either). */
  get full(): boolean {
    return this.admitted >= this.capacity;
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
    // Held requests move up into the line as it frees (an empty line takes one of any size).
    while (this.held.length > 0 && (this.waitingItems === 0 || this.waitingItems + this.held[0].count <= this.waitingCapacity)) {
      const waiter = this.held.shift()!;
      this.heldItems -= waiter.count;
      if (this.line.length === 0 && this.admitted + waiter.count <= this.capacity) {
        if (waiter.timer) clearTimeout(waiter.timer);
        this.admitted += waiter.count;
        waiter.resolve();
      } else this.enterLine(waiter);
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

/**
 * The start-up warning for `serve --expected-step-size N` when a trainer step does not fit in
 * queue + line: per-sample trainers (OpenRLHF ≥ 0.9.1, slime, verl's reward loop) send every
 * sample of a step at once, one item each. The rest are held open behind the line, and are
 * answered only if the judge gets through the step within their deadline.
 */
export function admissionWarning(maxQueue: number, maxWaiting: number, stepSize: number | undefined): string | undefined {
  if (stepSize === undefined || maxQueue + maxWaiting >= stepSize) return undefined;
  return (
    `--expected-step-size ${stepSize} is more than --max-queue ${maxQueue} + --max-waiting ${maxWaiting}: ` +
    `${stepSize - maxQueue - maxWaiting} requests of each step will be held open behind the waiting line, and any still there at their deadline get 503 ` +
    `(OpenRLHF retries only 5 times, 1 s apart). Raise --max-waiting to ${stepSize - maxQueue} or more, or make sure the judge grades a step within --deadline.`
  );
}
