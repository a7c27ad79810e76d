/**
 * Fleet slots: at most `limit` judge calls in flight across every process sharing a Redis,
 * on redis-semaphore's semaphore (a sorted set of leases, taken atomically by a Lua script).
 * Each lease has an expiry that its holder renews while it lives, so a crashed process's
 * slots come back to the fleet within one lease.
 *
 * In front of it, each process keeps a local line of callers. While the fleet has room, the
 * line asks for as many slots at once as it has callers (one pipelined round trip); once the
 * fleet is full, a single attempt per retry interval (so waiting costs a few Redis commands
 * per process, not one per caller). A finished call hands its lease straight to the next
 * local caller, with no round trip, until the lease has been held for `handOverMs`; then it
 * goes back to the fleet so that other processes get their turn.
 */
import type { Redis } from 'ioredis';
import { Semaphore } from 'redis-semaphore';
import { RubricateError } from '../errors.js';
import { sleep } from '../util/sleep.js';

/** Slots asked for in one round trip while the fleet has room. */
const maximumWidth = 64;

interface FleetLease {
  /** When this process took the lease. */
  readonly takenAt: number;
  /** Set when the lease could not be renewed (Redis away longer than the lease): it goes back, never handed on. */
  lost: boolean;
  readonly semaphore: Semaphore;
}

interface Waiter {
  resolve(lease: FleetLease): void;
  reject(error: unknown): void;
  signal: AbortSignal;
  onAbort(): void;
}

interface FleetSlotsOptions {
  /** How long a lease outlives a process that stopped renewing it. */
  leaseMs: number;
  /** How long a lease may pass from call to call in this process before it goes back to the fleet (default: half the lease). */
  handOverMs?: number;
  /** How often the line asks again while the fleet is full (default 10 ms). */
  retryIntervalMs?: number;
  describe: string;
}

export class FleetSlots {
  private readonly line: Waiter[] = [];
  private acquiring = false;
  private readonly closing = new AbortController();
  private readonly held = new Set<FleetLease>();

  constructor(
    private readonly client: Redis,
    private readonly key: string,
    private readonly limit: number,
    private readonly options: FleetSlotsOptions,
  ) {}

  /** A fleet slot for one call; give it back with `give`. */
  take(signal: AbortSignal): Promise<FleetLease> {
    return new Promise<FleetLease>((resolve, reject) => {
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const index = this.line.indexOf(waiter);
          if (index >= 0) this.line.splice(index, 1);
          reject(signal.reason);
        },
      };
      signal.addEventListener('abort', waiter.onAbort, { once: true });
      this.line.push(waiter);
      void this.fill();
    });
  }

  /** Hands the lease to the next caller in this process, or gives it back to the fleet. */
  give(lease: FleetLease): void {
    if (!lease.lost && Date.now() - lease.takenAt < (this.options.handOverMs ?? this.options.leaseMs / 2)) {
      const next = this.nextWaiter();
      if (next) {
        next.resolve(lease);
        return;
      }
    }
    this.held.delete(lease);
    lease.semaphore.release().catch(() => {
      // Redis away: the lease simply expires.
    });
    if (this.line.length > 0) void this.fill();
  }

  private nextWaiter(): Waiter | undefined {
    const waiter = this.line.shift();
    waiter?.signal.removeEventListener('abort', waiter.onAbort);
    return waiter;
  }

  /** A lease if the fleet has a free slot now (one Lua script), else undefined. */
  private async tryLease(): Promise<FleetLease | undefined> {
    const lease: FleetLease = {
      takenAt: Date.now(),
      lost: false,
      semaphore: new Semaphore(this.client, this.key, this.limit, {
        lockTimeout: this.options.leaseMs,
        refreshInterval: Math.max(100, Math.round(this.options.leaseMs / 3)),
        acquireAttemptsLimit: 1,
        retryInterval: 0,
        onLockLost: () => {
          lease.lost = true;
        },
      }),
    };
    if (!(await lease.semaphore.tryAcquire())) return undefined;
    this.held.add(lease);
    return lease;
  }

  /** Takes slots from the fleet while callers wait: all at once while there is room, one attempt per interval when full. */
  private async fill(): Promise<void> {
    if (this.acquiring) return;
    this.acquiring = true;
    let width = maximumWidth;
    try {
      while (this.line.length > 0 && !this.closing.signal.aborted) {
        const attempts = Math.min(this.line.length, width);
        const leases = await Promise.all(Array.from({ length: attempts }, () => this.tryLease()));
        let taken = 0;
        for (const lease of leases) {
          if (!lease) continue;
          taken += 1;
          const waiter = this.nextWaiter();
          if (waiter) waiter.resolve(lease);
          else this.give(lease);
        }
        if (taken === attempts) {
          width = maximumWidth;
        } else {
          width = 1;
          if (taken === 0) await sleep(this.options.retryIntervalMs ?? 10, this.closing.signal);
        }
      }
    } catch (error) {
      const failure = this.closing.signal.aborted
        ? new RubricateError('DEADLINE_EXCEEDED', 'the fleet limits were closed')
        : new RubricateError('STORE_UNAVAILABLE', `cannot take a fleet slot on ${this.options.describe}: ${(error as Error).message}`, { field: 'store' }, { cause: error });
      for (let waiter = this.nextWaiter(); waiter; waiter = this.nextWaiter()) waiter.reject(failure);
    } finally {
      this.acquiring = false;
    }
  }

  async close(): Promise<void> {
    this.closing.abort();
    await Promise.allSettled([...this.held].map((lease) => lease.semaphore.release()));
    this.held.clear();
  }
}
