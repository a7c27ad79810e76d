import { describe, expect, it } from 'vitest';
import { createStatusTally } from './status-tally.js';

describe('createStatusTally', () => {
  it('counts every item by status and admits only ok ones', () => {
    const tally = createStatusTally();
    expect(['ok', 'error', 'invalid', 'ok'].map((status) => tally.admit(status as 'ok' | 'error' | 'invalid'))).toEqual([true, false, false, true]);
    tally.unscorable();
    expect(tally.counts()).toEqual({ n: 4, n_ok: 2, n_error: 1, n_invalid: 1, n_unscorable: 1 });
  });

  it('hands out a copy, in the key order results report', () => {
    const tally = createStatusTally();
    const before = tally.counts();
    tally.admit('ok');
    expect(before.n).toBe(0);
    expect(Object.keys(tally.counts())).toEqual(['n', 'n_ok', 'n_error', 'n_invalid', 'n_unscorable']);
  });
});
