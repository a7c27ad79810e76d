/**
 * Deterministic checks: criteria decided locally, with no judge call.
 * Each check type lives in its own module and is registered in `registry.ts`.
 */
import type { ZodType } from 'zod';
import type { Trajectory } from '../trajectory/trajectory.js';

export type CheckMode = 'strict' | 'loose';

export interface CheckContext {
  /** Text of the prompt the response answers (the last user message), for checks such as repeat_prompt. */
  prompt: string;
  /** IFEval strict or loose evaluation. */
  mode: CheckMode;
  /** The response as an agent trajectory, when it is one (trajectory checks need it). */
  trajectory?: Trajectory;
}

export interface CheckOutcome {
  passed: boolean;
  /** Short human-readable reason, shown in results as the criterion's explanation. */
  detail?: string;
  /** Code checks: the tests the response's code passed, of how many, and how the run ended. */
  tests?: { passed: number; total: number; ending: 'finished' | 'time_limit' | 'output_limit' };
  /**
   * The rules could not decide (`passed` then means nothing): an error for the criterion, or,
   * with `fallback: "judge"`, a criterion for the judge. Never counted as a fail.
   */
  undecided?: { reason: string; fallback?: 'judge' };
}

export interface CheckDefinition<Parameters = unknown> {
  /** Registered name, e.g. `length_constraints:number_words` (IFEval's id) or `regex`. */
  type: string;
  description: string;
  /**
   * `ifeval`: one of IFEval's 25 instructions (strict/loose apply, an empty response fails);
   * `general`: a plain verifier that ignores the mode.
   */
  family?: 'ifeval' | 'general';
  /** Validates the check's parameters (every field of the spec except `type`). */
  parameters: ZodType<Parameters>;
  /** One readable line naming the constraint and its parameters, for criterion text. */
  describe?(parameters: Parameters): string;
  /** Runs outside this process (the code sandbox): its `evaluate` returns a promise, so only `runCheckAsync` runs it. */
  outOfProcess?: boolean;
  evaluate(response: string, parameters: Parameters, context: CheckContext): CheckOutcome | Promise<CheckOutcome>;
}
