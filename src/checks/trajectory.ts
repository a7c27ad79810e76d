/**
 * Deterministic checks over agent trajectories (items whose response is a list of messages):
 * which tools were called, with which arguments, in which order, what the last result of a
 * tool says, how long the run was, and what the agent wrote. Each needs a trajectory; on a
 * plain-text response it is an error (CHECK_INVALID), never a silent pass or fail.
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { toolCalls, trajectorySteps, type ToolCallRecord, type Trajectory } from '../trajectory/trajectory.js';
import type { CheckContext, CheckDefinition } from './types.js';
import { perParameters } from './per-parameters.js';
import { compiledPattern, refinePatternCompiles } from './regex-pattern.js';
import { isRecord } from '../util/is-record.js';

function needTrajectory(type: string, context: CheckContext): Trajectory {
  if (!context.trajectory) {
    throw new RubricateError('CHECK_INVALID', `check "${type}" needs a trajectory response (a list of messages); this item's response is plain text`, { checkType: type });
  }
  return context.trajectory;
}

const toolNames = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).transform((value) => (typeof value === 'string' ? [value] : value));
const nonNegativeInteger = z.number().int().min(0);

/** Tool results that report a failure (τ-bench's "Error: …", or a JSON object with an "error" key). */
function isFailedResult(result: string | undefined): boolean {
  if (result === undefined) return false;
  if (/^\s*error\b/i.test(result)) return true;
  try {
    const parsed = JSON.parse(result);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) && 'error' in parsed;
  } catch {
    return false;
  }
}

function callsOf(trajectory: Trajectory, names: readonly string[] | undefined, successfulOnly: boolean): ToolCallRecord[] {
  return toolCalls(trajectory).filter((call) => (names === undefined || names.includes(call.name)) && !(successfulOnly && isFailedResult(call.result)));
}

function stepList(calls: readonly ToolCallRecord[]): string {
  return calls.length === 0 ? 'none' : calls.map((call) => `${call.name}@step ${call.step}`).join(', ');
}

// ---------------------------------------------------------------- tool_called

const toolCalledParameters = z
  .strictObject({
    name: toolNames,
    min: nonNegativeInteger.default(1),
    max: nonNegativeInteger.optional(),
    /** Count only calls whose result does not report an error. */
    successfulOnly: z.boolean().default(false),
  })
  .refine((parameters) => parameters.max === undefined || parameters.max >= parameters.min, { path: ['max'], message: 'must be at least min' });
type ToolCalledParameters = z.infer<typeof toolCalledParameters>;

const toolCalled: CheckDefinition<ToolCalledParameters> = {
  type: 'tool_called',
  description: 'The named tool(s) were called between min and max times.',
  family: 'general',
  parameters: toolCalledParameters,
  describe: ({ name, min, max }) => `Calls to ${name.join(' or ')}: at least ${min}${max !== undefined ? ` and at most ${max}` : ''}.`,
  evaluate(_response, parameters, context) {
    const calls = callsOf(needTrajectory('tool_called', context), parameters.name, parameters.successfulOnly);
    const passed = calls.length >= parameters.min && (parameters.max === undefined || calls.length <= parameters.max);
    return { passed, detail: `${calls.length} call(s): ${stepList(calls)}` };
  },
};

// ---------------------------------------------------------------- tool_args_match

const toolArgsParameters = z.strictObject({
  name: z.string().min(1),
  /**
   * Expected arguments: a JSON object every key of which must match (all keys, with exact). Kept
   * as given, not copied through a record schema, which would drop a "__proto__" key without a
   * word; such a key is refused instead, as everywhere in input.
   */
  args: z
    .custom<Record<string, unknown>>(isRecord, 'must be a JSON object')
    .refine((args) => !Object.hasOwn(args, '__proto__'), { message: 'is not allowed (an object schema on the way would drop it without a word)', path: ['__proto__'] }),
  /** true: no keys beyond the expected ones at any depth; top_level: only the call's own arguments are exact (nested objects are subsets). */
  exact: z.union([z.boolean(), z.literal('top_level')]).default(false),
  /** Absolute tolerance for numbers. */
  tolerance: z.number().min(0).default(0),
  /** any: some call matches; all: every call of the tool matches (and there is one); last: the last call matches. */
  match: z.enum(['any', 'all', 'last']).default('any'),
  successfulOnly: z.boolean().default(false),
});
type ToolArgsParameters = z.infer<typeof toolArgsParameters>;

/**
 * First place where `actual` fails to match `expected`, or undefined when it matches. Only own
 * keys count on either side: an argument named "toString", "constructor" or "__proto__" is
 * compared like any other, never found (or excused) on Object.prototype.
 */
export function jsonMismatch(expected: unknown, actual: unknown, exact: boolean | 'top_level', tolerance: number, path = '$'): string | undefined {
  const inner = exact === 'top_level' ? false : exact;
  if (typeof expected === 'number' && typeof actual === 'number') {
    return Math.abs(expected - actual) <= tolerance ? undefined : `${path}: expected ${expected}, got ${actual}`;
  }
  if (Array.isArray(expected)) {
    if (!Array.isArray(actual)) return `${path}: expected an array`;
    if (actual.length !== expected.length) return `${path}: expected ${expected.length} element(s), got ${actual.length}`;
    for (let index = 0; index < expected.length; index += 1) {
      const found = jsonMismatch(expected[index], actual[index], inner, tolerance, `${path}[${index}]`);
      if (found) return found;
    }
    return undefined;
  }
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return `${path}: expected an object`;
    const actualRecord = actual as Record<string, unknown>;
    for (const [key, value] of Object.entries(expected)) {
      if (!Object.hasOwn(actualRecord, key)) return `${path}.${key}: missing`;
      const found = jsonMismatch(value, actualRecord[key], inner, tolerance, `${path}.${key}`);
      if (found) return found;
    }
    if (exact) {
      const extra = Object.keys(actualRecord).find((key) => !Object.hasOwn(expected, key));
      if (extra !== undefined) return `${path}.${extra}: not expected`;
    }
    return undefined;
  }
  return Object.is(expected, actual) || expected === actual ? undefined : `${path}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`;
}

const toolArgsMatch: CheckDefinition<ToolArgsParameters> = {
  type: 'tool_args_match',
  description: 'A call of the named tool has the expected arguments (a JSON subset, or exactly, with optional numeric tolerance).',
  family: 'general',
  parameters: toolArgsParameters,
  describe: ({ name, args, exact }) => `${name} is called with ${exact === true ? 'exactly ' : exact === 'top_level' ? 'exactly (top level) ' : ''}${JSON.stringify(args)}.`,
  evaluate(_response, parameters, context) {
    const calls = callsOf(needTrajectory('tool_args_match', context), [parameters.name], parameters.successfulOnly);
    if (calls.length === 0) return { passed: false, detail: `${parameters.name} was never called` };
    const mismatches = calls.map((call) => jsonMismatch(parameters.args, call.arguments, parameters.exact, parameters.tolerance));
    if (parameters.match === 'last') {
      const last = mismatches[mismatches.length - 1];
      return { passed: last === undefined, detail: last ? `last call (step ${calls[calls.length - 1].step}): ${last}` : `last call (step ${calls[calls.length - 1].step}) matches` };
    }
    const matching = calls.filter((_, index) => mismatches[index] === undefined);
    const passed = parameters.match === 'all' ? matching.length === calls.length : matching.length > 0;
    if (passed) return { passed, detail: `matching call(s) at step ${matching.map((call) => call.step).join(', ')}` };
    const firstBad = mismatches.findIndex((mismatch) => mismatch !== undefined);
    return { passed, detail: `${calls.length} call(s), ${matching.length} matching; step ${calls[firstBad].step}: ${mismatches[firstBad]}` };
  },
};

// ---------------------------------------------------------------- tool_order

const toolOrderParameters = z
  .strictObject({
    /** Tool names in the order they must be called. */
    sequence: z.array(z.string().min(1)).min(1).optional(),
    /** subsequence: in this order, other calls may come between; contiguous: back to back; exact: the whole call list. */
    mode: z.enum(['subsequence', 'contiguous', 'exact']).default('subsequence'),
    /** Before/after form: no call of `after` comes before the first call of `before`. */
    before: z.string().min(1).optional(),
    after: z.string().min(1).optional(),
    /** With before/after: `after` must also have been called. */
    requireBoth: z.boolean().default(false),
  })
  .superRefine((parameters, context) => {
    const pair = parameters.before !== undefined || parameters.after !== undefined;
    if (parameters.sequence && pair) context.addIssue({ code: 'custom', path: ['sequence'], message: 'cannot be combined with before/after' });
    else if (!parameters.sequence && !pair) context.addIssue({ code: 'custom', path: ['sequence'], message: 'is required (or give before and after)' });
    else if (pair && (parameters.before === undefined || parameters.after === undefined)) {
      context.addIssue({ code: 'custom', path: [parameters.before === undefined ? 'before' : 'after'], message: 'is required with the before/after form' });
    }
  });
type ToolOrderParameters = z.infer<typeof toolOrderParameters>;

function isSubsequence(wanted: readonly string[], names: readonly string[]): boolean {
  let position = 0;
  for (const name of names) if (position < wanted.length && name === wanted[position]) position += 1;
  return position === wanted.length;
}

function isContiguous(wanted: readonly string[], names: readonly string[]): boolean {
  for (let start = 0; start + wanted.length <= names.length; start += 1) if (wanted.every((name, offset) => names[start + offset] === name)) return true;
  return false;
}

const toolOrder: CheckDefinition<ToolOrderParameters> = {
  type: 'tool_order',
  description: 'Tools were called in an order: a subsequence, a contiguous run, the exact list, or one before another.',
  family: 'general',
  parameters: toolOrderParameters,
  describe: (parameters) =>
    parameters.sequence ? `Tool calls follow ${parameters.sequence.join(' → ')} (${parameters.mode}).` : `${parameters.after} is never called before ${parameters.before}.`,
  evaluate(_response, parameters, context) {
    const calls = toolCalls(needTrajectory('tool_order', context));
    const names = calls.map((call) => call.name);
    if (parameters.sequence) {
      const wanted = parameters.sequence;
      const passed =
        parameters.mode === 'exact' ? wanted.length === names.length && wanted.every((name, index) => names[index] === name) : parameters.mode === 'contiguous' ? isContiguous(wanted, names) : isSubsequence(wanted, names);
      return { passed, detail: `calls: ${names.join(' → ') || 'none'}` };
    }
    const firstBefore = calls.find((call) => call.name === parameters.before);
    const firstAfter = calls.find((call) => call.name === parameters.after);
    if (!firstAfter) return { passed: !parameters.requireBoth, detail: `${parameters.after} was never called` };
    const passed = firstBefore !== undefined && firstBefore.step < firstAfter.step;
    return { passed, detail: firstBefore ? `${parameters.before}@step ${firstBefore.step}, first ${parameters.after}@step ${firstAfter.step}` : `${parameters.after}@step ${firstAfter.step} but ${parameters.before} never called` };
  },
};

// ---------------------------------------------------------------- no_tool_after

const noToolAfterParameters = z.strictObject({
  /** The call after which nothing (or none of `names`) may be called. */
  tool: z.string().min(1),
  /** Tools banned after it; default: every tool. */
  names: z.array(z.string().min(1)).min(1).optional(),
});
type NoToolAfterParameters = z.infer<typeof noToolAfterParameters>;

const noToolAfter: CheckDefinition<NoToolAfterParameters> = {
  type: 'no_tool_after',
  description: 'After the first call of a tool, no further tool (or none of the listed tools) is called.',
  family: 'general',
  parameters: noToolAfterParameters,
  describe: ({ tool, names }) => `No ${names ? names.join(' or ') : 'tool'} is called after ${tool}.`,
  evaluate(_response, parameters, context) {
    const calls = toolCalls(needTrajectory('no_tool_after', context));
    const trigger = calls.find((call) => call.name === parameters.tool);
    if (!trigger) return { passed: true, detail: `${parameters.tool} was never called` };
    const later = calls.filter((call) => call.step > trigger.step && (parameters.names === undefined || parameters.names.includes(call.name)));
    return { passed: later.length === 0, detail: later.length === 0 ? `nothing called after ${parameters.tool}@step ${trigger.step}` : `after ${parameters.tool}@step ${trigger.step}: ${stepList(later)}` };
  },
};

// ---------------------------------------------------------------- final_state

type PathSegment = string | number;

/** Parses `$.a.b[0]['c d']` (the leading `$` optional) into segments; throws on bad syntax. */
export function parseJsonPath(path: string): PathSegment[] {
  const segments: PathSegment[] = [];
  let rest = path.trim();
  if (rest.startsWith('$')) rest = rest.slice(1);
  const pattern = /^(?:\.([A-Za-z_$][\w$-]*)|\[(\d+)\]|\['((?:[^'\\]|\\.)*)'\]|\["((?:[^"\\]|\\.)*)"\])/;
  if (rest !== '' && !rest.startsWith('.') && !rest.startsWith('[')) rest = `.${rest}`;
  while (rest !== '') {
    const match = pattern.exec(rest);
    if (!match) throw new Error(`cannot read the path at "${rest}"`);
    if (match[1] !== undefined) segments.push(match[1]);
    else if (match[2] !== undefined) segments.push(Number(match[2]));
    else segments.push((match[3] ?? match[4]).replace(/\\(.)/g, '$1'));
    rest = rest.slice(match[0].length);
  }
  return segments;
}

function resolvePath(value: unknown, segments: readonly PathSegment[]): { found: boolean; value?: unknown } {
  let current = value;
  for (const segment of segments) {
    if (typeof segment === 'number') {
      if (!Array.isArray(current) || segment >= current.length) return { found: false };
      current = current[segment];
    } else {
      if (current === null || typeof current !== 'object' || Array.isArray(current) || !Object.hasOwn(current, segment)) return { found: false };
      current = (current as Record<string, unknown>)[segment];
    }
  }
  return { found: true, value: current };
}

const finalStateParameters = z
  .strictObject({
    tool: z.string().min(1),
    path: z.string().min(1),
    equals: z.unknown().optional(),
    exists: z.boolean().optional(),
    matches: z.string().min(1).optional(),
    tolerance: z.number().min(0).default(0),
  })
  .superRefine((parameters, context) => {
    try {
      parseJsonPath(parameters.path);
    } catch (error) {
      context.addIssue({ code: 'custom', path: ['path'], message: `is not a JSON path (${(error as Error).message})` });
    }
    const assertions = ['equals', 'exists', 'matches'].filter((key) => (parameters as Record<string, unknown>)[key] !== undefined);
    if (assertions.length !== 1) context.addIssue({ code: 'custom', path: ['equals'], message: 'give exactly one of equals, exists, matches' });
    if (parameters.matches !== undefined) {
      try {
        new RegExp(parameters.matches);
      } catch (error) {
        context.addIssue({ code: 'custom', path: ['matches'], message: `is not a valid regular expression (${(error as Error).message})` });
      }
    }
  });
type FinalStateParameters = z.infer<typeof finalStateParameters>;
const compiledPath = perParameters((parameters: FinalStateParameters) => parseJsonPath(parameters.path));

const finalState: CheckDefinition<FinalStateParameters> = {
  type: 'final_state',
  description: 'The last result of a named tool, read as JSON, satisfies an assertion at a JSON path (equals, exists or matches).',
  family: 'general',
  parameters: finalStateParameters,
  describe: ({ tool, path, equals, exists, matches }) =>
    `In the last ${tool} result, ${path} ${matches !== undefined ? `matches /${matches}/` : exists !== undefined ? (exists ? 'exists' : 'does not exist') : `equals ${JSON.stringify(equals)}`}.`,
  evaluate(_response, parameters, context) {
    const calls = toolCalls(needTrajectory('final_state', context)).filter((call) => call.name === parameters.tool && call.result !== undefined);
    if (calls.length === 0) return { passed: false, detail: `no result of ${parameters.tool}` };
    const last = calls[calls.length - 1];
    // The state is read from the result, so the detail cites the result's step (the report links it).
    const step = last.resultStep ?? last.step;
    let parsed: unknown;
    try {
      parsed = JSON.parse(last.result!);
    } catch {
      return { passed: false, detail: `the ${parameters.tool} result at step ${step} is not JSON` };
    }
    const resolved = resolvePath(parsed, compiledPath(parameters));
    if (parameters.exists !== undefined) return { passed: resolved.found === parameters.exists, detail: `${parameters.path} ${resolved.found ? 'exists' : 'is absent'} (step ${step})` };
    if (!resolved.found) return { passed: false, detail: `${parameters.path} is absent (step ${step})` };
    if (parameters.matches !== undefined) {
      const text = typeof resolved.value === 'string' ? resolved.value : JSON.stringify(resolved.value);
      return { passed: new RegExp(parameters.matches).test(text), detail: `${parameters.path} = ${text.slice(0, 80)} (step ${step})` };
    }
    const mismatch = jsonMismatch(parameters.equals, resolved.value, true, parameters.tolerance, parameters.path);
    return { passed: mismatch === undefined, detail: mismatch ? `${mismatch} (step ${step})` : `${parameters.path} matches (step ${step})` };
  },
};

// ---------------------------------------------------------------- step_count_at_most

const stepCountParameters = z.strictObject({
  max: nonNegativeInteger,
  /** steps: every rendered step; tool_calls: tool calls only; assistant_turns: assistant messages. */
  count: z.enum(['steps', 'tool_calls', 'assistant_turns']).default('steps'),
});
type StepCountParameters = z.infer<typeof stepCountParameters>;

const stepCountAtMost: CheckDefinition<StepCountParameters> = {
  type: 'step_count_at_most',
  description: 'The trajectory has at most `max` steps (or tool calls, or assistant turns).',
  family: 'general',
  parameters: stepCountParameters,
  describe: ({ max, count }) => `At most ${max} ${count.replace('_', ' ')}.`,
  evaluate(_response, parameters, context) {
    const trajectory = needTrajectory('step_count_at_most', context);
    const counted =
      parameters.count === 'tool_calls' ? toolCalls(trajectory).length : parameters.count === 'assistant_turns' ? trajectory.filter((message) => message.role === 'assistant').length : trajectorySteps(trajectory).length;
    return { passed: counted <= parameters.max, detail: `${counted} ${parameters.count.replace('_', ' ')}` };
  },
};

// ---------------------------------------------------------------- message_matches

const messageMatchesParameters = z
  .strictObject({
    pattern: z.string().min(1),
    flags: z.string().regex(/^[imsuv]*$/, 'may only contain the flags i, m, s, u, v').default(''),
    /** assistant: assistant text and reasoning; user_visible: user and assistant text only (no reasoning, no tools). */
    scope: z.enum(['assistant', 'user_visible']).default('assistant'),
    mustMatch: z.boolean().default(true),
    /** Characters removed from each message before matching (τ-bench ignores commas in outputs). */
    stripCharacters: z.string().default(''),
  })
  .superRefine(refinePatternCompiles);
type MessageMatchesParameters = z.infer<typeof messageMatchesParameters>;

const messageMatches: CheckDefinition<MessageMatchesParameters> = {
  type: 'message_matches',
  description: 'Some message in scope matches a regular expression (or, with mustMatch false, none does).',
  family: 'general',
  parameters: messageMatchesParameters,
  describe: ({ pattern, flags, scope, mustMatch }) => `${scope === 'assistant' ? 'Assistant' : 'User-visible'} text ${mustMatch ? 'matches' : 'never matches'} /${pattern}/${flags}.`,
  evaluate(_response, parameters, context) {
    const steps = trajectorySteps(needTrajectory('message_matches', context)).filter((step) =>
      parameters.scope === 'assistant' ? step.kind === 'assistant' || step.kind === 'reasoning' : step.kind === 'assistant' || step.kind === 'user',
    );
    const regex = compiledPattern(parameters);
    const strip = parameters.stripCharacters;
    const hit = steps.find((step) => regex.test(strip === '' ? step.text : [...step.text].filter((character) => !strip.includes(character)).join('')));
    const passed = (hit !== undefined) === parameters.mustMatch;
    return { passed, detail: hit ? `matched at step ${hit.number}` : `no match in ${steps.length} message(s)` };
  },
};

export const trajectoryChecks: CheckDefinition[] = [toolCalled, toolArgsMatch, toolOrder, noToolAfter, finalState, stepCountAtMost, messageMatches];
