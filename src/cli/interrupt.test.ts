import { describe, expect, it, vi } from 'vitest';
import { drainSignal, interruptGraceMs } from './interrupt.js';
import { runCliCaptured } from './in-process.js';

describe('the drain after a first interrupt', () => {
  it('aborts in-flight calls exactly --drain-timeout after the stop, not before', () => {
    vi.useFakeTimers();
    try {
      const stop = new AbortController();
      const drain = drainSignal(stop.signal, { drainTimeout: 2.5 });
      vi.advanceTimersByTime(10_000);
      expect(drain.aborted).toBe(false);
      stop.abort(new Error('interrupted'));
      vi.advanceTimersByTime(2_499);
      expect(drain.aborted).toBe(false);
      vi.advanceTimersByTime(1);
      expect(drain.aborted).toBe(true);
      expect((drain.reason as Error).message).toBe('interrupted');
    } finally {
      vi.useRealTimers();
    }
  });

  it('starts at once when the run was stopped before it began', () => {
    vi.useFakeTimers();
    try {
      const stop = new AbortController();
      stop.abort();
      const drain = drainSignal(stop.signal, { drainTimeout: 0 });
      vi.advanceTimersByTime(0);
      expect(drain.aborted).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it('grade and compare take --drain-timeout (default 5 s) and refuse a negative one', async () => {
    for (const command of ['grade', 'compare']) {
      const help = await runCliCaptured([command, '--help']);
      expect(help.stdout).toMatch(new RegExp(`--drain-timeout <seconds>[\\s\\S]*default: ${interruptGraceMs / 1000}\\)`));
      const refused = await runCliCaptured([command, '--input', 'x.jsonl', '--judge', 'none', '--drain-timeout', '-1']);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/--drain-timeout must be a number ≥ 0, got "-1"/);
    }
  });
});
