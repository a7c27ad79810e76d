/**
 * The library's defaults, in one place: what a `Grader`, `Comparer` or `gradeFile` uses when
 * the caller leaves an option out. The CLI and the server start from these too, so a library
 * user gets the same behaviour as `rubricate grade` without knowing to pass anything.
 */
import { runCheck } from '../checks/registry.js';
import type { CheckRunner } from '../engine/engine.js';
import type { SamplingOptions } from '../grading/types.js';

/** Runs the registered deterministic checks (IFEval, general, language). */
export const defaultCheckRunner: CheckRunner = runCheck;

/** Greedy judging with room for an explanation. */
export const defaultSampling: SamplingOptions = { temperature: 0, maxTokens: 1024 };

/** Pairwise verdicts are short: one label and a reason per order. */
export const defaultPairwiseMaxTokens = 512;

/** HealthBench's clipped points ratio: the scoring most published rubric sets use. */
export const defaultScoringName = 'healthbench';

/** Sampling with the defaults filled in. */
export function withDefaultSampling(sampling: Partial<SamplingOptions> | undefined, base: SamplingOptions = defaultSampling): SamplingOptions {
  return { ...base, ...sampling };
}
