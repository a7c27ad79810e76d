/**
 * The library's defaults, in one place: what a `Grader`, `Comparer` or `gradeFile` uses when
 * the caller leaves an option out. The CLI and the server start from these too, so a library
 * user gets the same behaviour as `rubricate grade` without knowing to pass anything.
 */
import { runCheckAsync } from '../checks/registry.js';
import type { CheckRunner } from '../engine/engine.js';
import type { SamplingOptions } from '../grading/types.js';

/**
 * Runs the registered deterministic checks (IFEval, general, language) and the sandboxed code checks.
 *
 * @example
 * ```ts
 * import { Grader, createJudge, defaultCheckRunner } from 'rubricate';
 * const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), checkRunner: defaultCheckRunner });
 * ```
 */
export const defaultCheckRunner: CheckRunner = runCheckAsync;

/**
 * Greedy judging with room for an explanation.
 *
 * @example
 * ```ts
 * import { Grader, createJudge, defaultSampling } from 'rubricate';
 * const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), plan: { sampling: { ...defaultSampling, maxTokens: 2048 } } });
 * ```
 */
export const defaultSampling: SamplingOptions = { temperature: 0, maxTokens: 1024 };

/** Pairwise verdicts are short: one label and a reason per order. */
export const defaultPairwiseMaxTokens = 512;

/**
 * The weighted share of points met: what `rubricate grade --format items` (the default format)
 * and `rubricate serve` use. Importers of published benchmarks name their own (HealthBench's
 * clipped ratio for `healthbench`), and the CLI takes the format's.
 *
 * @example
 * ```ts
 * import { defaultScoringName, getScoring } from 'rubricate';
 * const scoring = getScoring(defaultScoringName); // weighted_mean
 * ```
 */
export const defaultScoringName = 'weighted_mean';

/** Sampling with the defaults filled in. */
export function withDefaultSampling(sampling: Partial<SamplingOptions> | undefined, base: SamplingOptions = defaultSampling): SamplingOptions {
  return { ...base, ...sampling };
}
