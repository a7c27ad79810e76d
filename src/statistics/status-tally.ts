/**
 * How many items an aggregation read, by status: the counts every scoring reports beside its
 * figures, so an error or an unreadable line is always counted and never scored.
 */

export interface StatusCounts {
  /** Items read, whatever their status. */
  n: number;
  n_ok: number;
  n_error: number;
  n_invalid: number;
  /** Items with nothing to score against (no positive points, no graded criterion). */
  n_unscorable: number;
}

export interface StatusTally {
  /** Counts one item; true when it is `ok`, the only status that may be scored. */
  admit(status: 'ok' | 'error' | 'invalid'): boolean;
  /** Counts an admitted item that turned out to have nothing to score against. */
  unscorable(): void;
  counts(): StatusCounts;
}

export function createStatusTally(): StatusTally {
  const counts: StatusCounts = { n: 0, n_ok: 0, n_error: 0, n_invalid: 0, n_unscorable: 0 };
  return {
    admit(status) {
      counts.n += 1;
      if (status === 'invalid') counts.n_invalid += 1;
      else if (status === 'error') counts.n_error += 1;
      else counts.n_ok += 1;
      return status === 'ok';
    },
    unscorable() {
      counts.n_unscorable += 1;
    },
    counts: () => ({ ...counts }),
  };
}
