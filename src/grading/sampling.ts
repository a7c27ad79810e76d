/**
 * Sampling parameters every OpenAI-compatible server accepts: temperature in [0, 2] and an
 * integer seed. Checked where they enter (flags, library options) so a bad value is a clear
 * configuration error, not a 400 on every call.
 */
import { RubricateError } from '../errors.js';
import type { JudgeRequest } from '../judges/types.js';
import type { SamplingOptions } from './types.js';

/** The problem with the given values, or undefined when they are fine. */
export function validateSampling(sampling: Partial<Pick<SamplingOptions, 'temperature' | 'seed' | 'maxTokens'>>): string | undefined {
  const { temperature, seed, maxTokens } = sampling;
  if (temperature !== undefined && !(Number.isFinite(temperature) && temperature >= 0 && temperature <= 2)) return 'temperature must be between 0 and 2';
  if (seed !== undefined && !Number.isSafeInteger(seed)) return 'seed must be an integer';
  if (maxTokens !== undefined && !(Number.isInteger(maxTokens) && maxTokens >= 1)) return 'max tokens must be a positive integer';
  return undefined;
}

/** Throws CONFIG_INVALID naming the field when sampling values would be rejected by servers. */
export function assertValidSampling(sampling: Partial<SamplingOptions>): void {
  const problem = validateSampling(sampling);
  if (problem) throw new RubricateError('CONFIG_INVALID', `${problem} (temperature ${sampling.temperature}, seed ${sampling.seed})`, { field: problem.split(' ')[0] });
}

/** Sampling settings as a request carries them (every judge, generator and model under test). */
export type RequestSampling = Pick<JudgeRequest, 'temperature' | 'topP' | 'maxTokens' | 'seed'>;

/** The request fields of sampling settings: only those given, in the order requests write them. */
export function requestSampling(sampling: RequestSampling): RequestSampling {
  return {
    ...(sampling.temperature !== undefined ? { temperature: sampling.temperature } : {}),
    ...(sampling.topP !== undefined ? { topP: sampling.topP } : {}),
    ...(sampling.maxTokens !== undefined ? { maxTokens: sampling.maxTokens } : {}),
    ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
  };
}

/** Sampling settings as provenance records them (results lines, generated rubrics): `temperature`, `max_tokens`, `seed` when set. */
export function recordedSampling(sampling: SamplingOptions): { temperature: number; max_tokens: number; seed?: number } {
  return { temperature: sampling.temperature, max_tokens: sampling.maxTokens, ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}) };
}
