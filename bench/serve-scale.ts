/**
 * The scale curve of `rubricate serve` (issue #49; bench/serve-scale.py): the Python client drives
 * a fresh serve with the scripted judge through 10⁴, 10⁵ and 10⁶ uncached rewards
 * (SERVE_SCALE_REWARDS chooses), reporting serve's CPU per reward, its peak RSS and the wall time.
 */
import { join } from 'node:path';
import { projectRoot } from './support/simulator-process.js';
import { runPythonBenchmark } from './support/python-script.js';

export function runServeScale(timeoutMs = 3 * 3600_000): Promise<unknown[]> {
  return runPythonBenchmark(join(projectRoot, 'bench', 'serve-scale.py'), [], timeoutMs);
}
