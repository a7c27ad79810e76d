/**
 * Concurrency limiter that adapts to an overloaded judge. The limit starts at the user's
 * concurrency; an overload answer (429/503) lowers it to the number of calls the judge is
 * still serving, and each success raises it by 1/limit (about +1 per round of calls), so
 * it settles just under the judge's real capacity instead of hammering it.
 */

export type CallOutcome = 'success' | 'overloaded' | 'failure';

interface Waiter {
  resolve: () => void;
}

export class AdaptiveLimiter {
  readonly maximum: number;
  private limit: number;
  private active = 0;
  private readonly urgent: Waiter[] = [];
  private readonly normal: Waiter[] = [];
  private normalHead = 0;

  constructor(maximum: number) {
    this.maximum = Math.max(1, Math.floor(maximum));
    this.limit = this.maximum;
  }

  get currentLimit(): number {
    return Math.floor(this.limit);
  }

  get inFlight(): number {
    return this.active;
  }

  get waiting(): number {
    return this.urgent.length + this.normal.length - this.normalHead;
  }

  /** Waits for a slot. Retries pass `urgent` so they go ahead of fresh work. */
  acquire(urgent = false): Promise<void> {
    if (this.active < Math.floor(this.limit) && this.waiting === 0) {
      this.active += 1;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      (urgent ? this.urgent : this.normal).push({ resolve });
    });
  }

  release(outcome: CallOutcome): void {
    this.active -= 1;
    if (outcome === 'overloaded') {
      this.limit = Math.max(1, Math.min(this.limit, this.active));
    } else if (outcome === 'success' && this.limit < this.maximum) {
      this.limit = Math.min(this.maximum, this.limit + 1 / Math.floor(this.limit));
    }
    this.drain();
  }

  private drain(): void {
    while (this.active < Math.floor(this.limit)) {
      const next = this.urgent.shift() ?? this.takeNormal();
      if (!next) return;
      this.active += 1;
      next.resolve();
    }
  }

  private takeNormal(): Waiter | undefined {
    if (this.normalHead >= this.normal.length) return undefined;
    const waiter = this.normal[this.normalHead];
    this.normalHead += 1;
    // Compact now and then so the array does not grow without bound.
    if (this.normalHead > 1024 && this.normalHead * 2 > this.normal.length) {
      this.normal.splice(0, this.normalHead);
      this.normalHead = 0;
    }
    return waiter;
  }
}
