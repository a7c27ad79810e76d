/**
 * Timeouts in tests are hang guards, never assertions: a test waits for an event, and its timeout
 * only ends a test that would otherwise hang. On a loaded machine everything is slower, so every
 * guard is multiplied by one factor: RUBRICATE_TEST_TIME_SCALE (set once by `npm test` from the
 * load when the suite starts, and read by the Python tests too), else one worked out here the same
 * way: 1 plus the load average per core, at most 10.
 */
import { availableParallelism, loadavg } from 'node:os';

export function testTimeScale(environment: NodeJS.ProcessEnv = process.env): number {
  const given = Number(environment.RUBRICATE_TEST_TIME_SCALE);
  if (Number.isFinite(given) && given >= 1) return given;
  return Math.min(10, Math.max(1, 1 + Math.max(...loadavg().slice(0, 2)) / availableParallelism()));
}

/** `ms` scaled for this machine's load: pass it wherever a test or a wait names a timeout. */
export function hangGuard(ms: number): number {
  return Math.round(ms * testTimeScale());
}
