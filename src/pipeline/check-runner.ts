/** Connects the engine to the registered deterministic checks. */
import { runCheck } from '../checks/registry.js';
import type { CheckRunner } from '../engine/engine.js';

export function checkRunnerFor(): CheckRunner {
  return runCheck;
}
