/**
 * The check registry: every deterministic check by `type`, parameter validation with
 * errors that name the check and the bad field, and `runCheck`, which applies the mode.
 * Parsed parameters are cached per spec object, so grading many items against one
 * rubric validates each criterion's check once.
 */
import { RubricateError } from '../errors.js';
import type { CheckSpec } from '../rubric/schema.js';
import { codeTestsCheck } from './code-tests/code-tests.js';
import { answerEquivalentCheck } from './answer/answer-equivalent.js';
import { generalChecks } from './general.js';
import { ifevalInstructions } from './ifeval/instructions.js';
import { trajectoryChecks } from './trajectory.js';
import type { CheckContext, CheckDefinition, CheckOutcome } from './types.js';
import { createRegistry } from '../util/registry.js';

export const checkRegistry = createRegistry<string, CheckDefinition>(
  { what: 'check type', field: 'type', code: 'CHECK_INVALID' },
  [...ifevalInstructions, ...generalChecks, answerEquivalentCheck, ...trajectoryChecks, codeTestsCheck as CheckDefinition].map((definition) => [definition.type, definition] as const),
);

/** IFEval's instruction ids, in the registry's order. */
export const ifevalInstructionIds: readonly string[] = ifevalInstructions.map((definition) => definition.type);

export interface ParsedCheck {
  definition: CheckDefinition;
  parameters: unknown;
}

const parsedChecks = new WeakMap<object, ParsedCheck | RubricateError>();

/** Resolves and validates a spec, or returns the CHECK_INVALID error; cached per spec object. */
function parse(spec: CheckSpec): ParsedCheck | RubricateError {
  const cached = parsedChecks.get(spec);
  if (cached !== undefined) return cached;
  const result = parseUncached(spec);
  parsedChecks.set(spec, result);
  return result;
}

function parseUncached(spec: CheckSpec): ParsedCheck | RubricateError {
  if (spec === null || typeof spec !== 'object' || typeof spec.type !== 'string' || spec.type.length === 0) {
    return new RubricateError('CHECK_INVALID', 'a check needs a non-empty string `type`', { field: 'type' });
  }
  const definition = checkRegistry.find(spec.type);
  if (!definition) return checkRegistry.unknown(spec.type, { checkType: spec.type });
  const raw: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(spec)) {
    // IFEval's kwargs carry null for arguments an instruction ignores.
    if (key !== 'type' && value !== null) raw[key] = value;
  }
  const result = definition.parameters.safeParse(raw);
  if (result.success) return { definition, parameters: result.data };
  const issue = result.error.issues[0];
  let field = issue.path.map(String).join('.');
  let message = issue.message;
  if (issue.code === 'unrecognized_keys') {
    field = issue.keys[0];
    message = 'is not a parameter of this check';
  } else if (issue.code === 'invalid_type' && issue.input === undefined) {
    message = 'is required';
  }
  return new RubricateError('CHECK_INVALID', `check "${spec.type}": parameter "${field}" ${message}`, {
    field,
    checkType: spec.type,
  });
}

/**
 * Whether a check spec names a known check with valid parameters: `ok`, or the CHECK_INVALID error naming the parameter.
 *
 * @example
 * ```ts
 * import { validateCheck } from 'rubricate';
 * const checked = validateCheck({ type: 'length_constraints:number_words', relation: 'at least', num_words: 300 });
 * if (!checked.ok) console.error(checked.error.message);
 * ```
 */
export function validateCheck(spec: CheckSpec): { ok: true } | { ok: false; error: RubricateError } {
  const parsed = parse(spec);
  return parsed instanceof RubricateError ? { ok: false, error: parsed } : { ok: true };
}

/** The validated check, for callers that evaluate one spec many times. Throws CHECK_INVALID. */
export function parseCheck(spec: CheckSpec): ParsedCheck {
  const parsed = parse(spec);
  if (parsed instanceof RubricateError) throw parsed;
  return parsed;
}

/**
 * Decides a check on a response. IFEval instructions honour `context.mode` (strict, or
 * loose: any of IFEval's eight response variants may pass); general checks ignore it.
 * Throws CHECK_INVALID for an unknown type or bad parameters.
 *
 * @example
 * ```ts
 * import { runCheck } from 'rubricate';
 * const outcome = runCheck({ type: 'detectable_format:json_format' }, '{"answer": 4}', { prompt: 'Answer in JSON.', mode: 'strict' });
 * ```
 */
export function runCheck(spec: CheckSpec, response: string, context: CheckContext): CheckOutcome {
  const { definition, parameters } = parseCheck(spec);
  if (definition.outOfProcess) throw new RubricateError('CHECK_INVALID', `check "${spec.type}" runs out of process: use runCheckAsync`, { checkType: spec.type });
  return definition.evaluate(response, parameters, context) as CheckOutcome;
}

/** `runCheck` for every check, the sandboxed ones too: what the engine runs. */
export async function runCheckAsync(spec: CheckSpec, response: string, context: CheckContext): Promise<CheckOutcome> {
  const { definition, parameters } = parseCheck(spec);
  return definition.evaluate(response, parameters, context);
}

/** One readable line for a check (criterion text for imported IFEval items). */
export function describeCheck(spec: CheckSpec): string {
  const { definition, parameters } = parseCheck(spec);
  return definition.describe ? definition.describe(parameters) : definition.description;
}
