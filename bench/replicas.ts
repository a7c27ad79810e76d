/**
 * Several `rubricate serve` replicas sharing one redis-server (bench/replicas.py, on the replica
 * test's fleet in clients/python/tests/fleet.py): rewards/s of a 4,096-sample step on one replica
 * against three behind Debian's nginx and three in the Python client's replica list, fresh (a 50 ms
 * fake judge) and cached; then a step with a replica killed by PID mid-step, judge calls against the
 * unique work. Every reward is checked. Skipped without nginx.
 */
import { join } from 'node:path';
import { projectRoot } from './support/simulator-process.js';
import { runPythonBenchmark } from './support/python-script.js';

export function runReplicaBenchmark(timeoutMs = 600_000): Promise<Record<string, unknown>> {
  return runPythonBenchmark(join(projectRoot, 'bench', 'replicas.py'), [], timeoutMs);
}
