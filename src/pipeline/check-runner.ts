/** Connects the engine to the registered deterministic checks (the library default). */
import type { CheckRunner } from '../engine/engine.js';
import { defaultCheckRunner } from './defaults.js';

export function checkRunnerFor(): CheckRunner {
  return defaultCheckRunner;
}
