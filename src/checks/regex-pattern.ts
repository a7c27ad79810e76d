/**
 * Checks whose parameters hold a JavaScript regular expression (`pattern` with `flags`): the
 * one rule that refuses one that does not compile when the rubric is read, and its compiled
 * form, once per rubric.
 */
import type { z } from 'zod';
import { perParameters } from './per-parameters.js';

interface PatternParameters {
  pattern: string;
  flags: string;
}

/** A `superRefine` step: the pattern must compile with its flags, or the rubric is refused naming `pattern`. */
export function refinePatternCompiles(parameters: PatternParameters, context: z.RefinementCtx<PatternParameters>): void {
  try {
    new RegExp(parameters.pattern, parameters.flags);
  } catch (error) {
    context.addIssue({
      code: 'custom',
      path: ['pattern'],
      message: `is not a valid regular expression (${error instanceof Error ? error.message : String(error)})`,
    });
  }
}

/** The compiled pattern of a parameters object. */
export const compiledPattern = perParameters((parameters: PatternParameters) => new RegExp(parameters.pattern, parameters.flags));
