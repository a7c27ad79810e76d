/**
 * Lifecycle state of one server: requests in flight and whether it is draining. While
 * draining, new requests are refused with 503 + Retry-After + `Connection: close`, so load
 * balancers and clients move to another replica while in-flight requests finish.
 */
export class ServerState {
  draining = false;
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];

  get inFlightRequests(): number {
    return this.inFlight;
  }

  requestStarted(): void {
    this.inFlight += 1;
  }

  requestFinished(): void {
    this.inFlight = Math.max(0, this.inFlight - 1);
    if (this.inFlight === 0) {
      const waiters = this.idleWaiters;
      this.idleWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }

  /** Resolves when no request is in flight. */
  idle(): Promise<void> {
    if (this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }
}
