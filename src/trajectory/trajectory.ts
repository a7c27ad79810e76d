/**
 * Agent trajectories: an item's response given as OpenAI-style chat messages (assistant
 * text, tool calls with JSON-string arguments, tool results, optional reasoning) instead
 * of one string. Validated here at the edge; inside, the normalised `Trajectory` is read
 * by the trajectory checks, and its rendering (render.ts) is what judges see.
 */
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { isRecord } from '../util/is-record.js';

/**
 * The tool names OpenAI accepts. Names are shown to judges as they are, so nothing else may
 * reach a rendering: no spaces, brackets, colons or line breaks with which a name could pose as
 * a step header (checked in `normalizeTrajectory`, which every importer goes through).
 */
export const toolNamePattern = /^[a-zA-Z0-9_-]{1,64}$/;

/** A name from the input, quoted for an error message and kept short. */
function quoted(text: string): string {
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
}

/** Why a tool name is refused, or undefined when it is one OpenAI accepts. */
export function toolNameProblem(name: string): string | undefined {
  return toolNamePattern.test(name) ? undefined : `tool name ${quoted(name)} is not 1 to 64 letters, digits, "_" or "-" (the names OpenAI accepts)`;
}

const toolCallInputSchema = z.object({
  id: z.string().min(1).optional(),
  type: z.literal('function').optional(),
  function: z.object({
    name: z.string(),
    /**
     * OpenAI sends arguments as a JSON string; an object is accepted as already parsed, and kept
     * as it is (a copy through a record schema would drop an own "__proto__" key that the string
     * form keeps, and a check would then compare arguments the agent did not send).
     */
    arguments: z.union([z.string(), z.custom<Record<string, unknown>>(isRecord, 'arguments must be a JSON string or an object')]).optional(),
  }),
});

const textPartSchema = z.looseObject({ type: z.string().optional(), text: z.string().optional() });

export const trajectoryMessageInputSchema = z.object({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.union([z.string(), z.array(textPartSchema), z.null()]).optional(),
  tool_calls: z.array(toolCallInputSchema).optional(),
  tool_call_id: z.string().min(1).optional(),
  name: z.string().optional(),
  /** Reasoning text some providers return beside the answer (`reasoning` or `reasoning_content`). */
  reasoning: z.string().optional(),
  reasoning_content: z.string().optional(),
});

export type TrajectoryMessageInput = z.input<typeof trajectoryMessageInputSchema>;

export const trajectoryInputSchema = z.array(trajectoryMessageInputSchema).min(1, 'a trajectory needs at least one message');

export interface ToolCall {
  id?: string;
  name: string;
  /** Parsed arguments (JSON). */
  arguments: unknown;
}

export interface TrajectoryMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  /** Text content (text parts joined); empty when the message only calls tools. */
  content: string;
  toolCalls?: ToolCall[];
  /** Tool results: the call they answer and the tool's name (from the message or the call). */
  toolCallId?: string;
  name?: string;
  reasoning?: string;
}

export type Trajectory = TrajectoryMessage[];

/** One tool call with its position and (when present) the result that answered it. */
export interface ToolCallRecord {
  name: string;
  arguments: unknown;
  id?: string;
  /** Step number of the call in the rendering (1-based). */
  step: number;
  /** The tool message answering this call, if any. */
  result?: string;
  /** Step number of that tool message. */
  resultStep?: number;
}

function contentText(content: TrajectoryMessageInput['content']): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part.text === 'string' ? part.text : '')).filter((text) => text !== '').join('\n');
  return '';
}

/**
 * Normalises validated messages: parses each call's JSON arguments and ties tool results to
 * their calls. Throws INPUT_INVALID naming the field (relative to `fieldPrefix`).
 */
export function normalizeTrajectory(
  messages: readonly TrajectoryMessageInput[],
  location: { file?: string; line?: number; fieldPrefix?: string; /** Index of messages[0] in the source list (for field paths). */ indexOffset?: number } = {},
): Trajectory {
  const prefix = location.fieldPrefix ?? 'response';
  const offset = location.indexOffset ?? 0;
  const fail = (field: string, message: string) =>
    new RubricateError('INPUT_INVALID', message, { file: location.file, line: location.line, field: `${prefix}${field.replace(/^\[(\d+)\]/, (_, index: string) => `[${Number(index) + offset}]`)}` });
  const callNames = new Map<string, string>();
  return messages.map((message, index): TrajectoryMessage => {
    const out: TrajectoryMessage = { role: message.role, content: contentText(message.content) };
    if (Array.isArray(message.content) && message.content.some((part) => part.type !== undefined && part.type !== 'text')) {
      const part = message.content.findIndex((entry) => entry.type !== undefined && entry.type !== 'text');
      throw fail(`[${index}].content[${part}]`, `content part of type "${message.content[part].type}" is not supported in a trajectory message (only text parts)`);
    }
    const reasoning = message.reasoning ?? message.reasoning_content;
    if (reasoning) out.reasoning = reasoning;
    if (message.tool_calls && message.tool_calls.length > 0) {
      if (message.role !== 'assistant') throw fail(`[${index}].tool_calls`, `only assistant messages may carry tool_calls (this one is "${message.role}")`);
      out.toolCalls = message.tool_calls.map((call, callIndex) => {
        const raw = call.function.arguments;
        let parsed: unknown = {};
        if (typeof raw === 'string') {
          if (raw.trim() !== '') {
            try {
              parsed = JSON.parse(raw);
            } catch (error) {
              throw fail(`[${index}].tool_calls[${callIndex}].function.arguments`, `tool call arguments are not valid JSON (${(error as Error).message})`);
            }
          }
        } else if (raw !== undefined) parsed = raw;
        const nameProblem = toolNameProblem(call.function.name);
        if (nameProblem) throw fail(`[${index}].tool_calls[${callIndex}].function.name`, nameProblem);
        if (call.id) callNames.set(call.id, call.function.name);
        const toolCall: ToolCall = { name: call.function.name, arguments: parsed };
        if (call.id) toolCall.id = call.id;
        return toolCall;
      });
    }
    if (message.role === 'tool') {
      if (!message.tool_call_id) throw fail(`[${index}].tool_call_id`, 'a tool message needs the tool_call_id of the call it answers');
      const callName = callNames.get(message.tool_call_id);
      if (callName === undefined) throw fail(`[${index}].tool_call_id`, `tool_call_id "${message.tool_call_id}" matches no earlier tool call`);
      // Refused rather than shown either way: a result that names another tool than its call is
      // inconsistent input, and a judge shown one of the two names would be misled about the other.
      if (message.name !== undefined && message.name !== callName) {
        throw fail(`[${index}].name`, `tool message names ${quoted(message.name)}, but the call it answers (tool_call_id ${quoted(message.tool_call_id)}) is to "${callName}"`);
      }
      out.toolCallId = message.tool_call_id;
      out.name = callName;
    } else if (message.tool_call_id) {
      throw fail(`[${index}].tool_call_id`, `only tool messages carry tool_call_id (this one is "${message.role}")`);
    }
    if (message.name && message.role !== 'tool') out.name = message.name;
    return out;
  });
}

/**
 * Step numbering shared by the rendering, the checks and the report: every user message,
 * assistant text, tool call and tool result is one step, in order (system messages too).
 */
export interface TrajectoryStep {
  number: number;
  kind: 'system' | 'user' | 'assistant' | 'reasoning' | 'tool_call' | 'tool_result';
  /** Message index in the trajectory. */
  message: number;
  text: string;
  toolName?: string;
  toolArguments?: unknown;
  toolCallId?: string;
}

export function trajectorySteps(trajectory: Trajectory): TrajectoryStep[] {
  const steps: TrajectoryStep[] = [];
  forEachStep(trajectory, (step) => steps.push(step));
  return steps;
}

/** Visits the steps in order without keeping them (the rendering of a long trajectory needs only their text). */
export function forEachStep(trajectory: Trajectory, visit: (step: TrajectoryStep) => void): void {
  let count = 0;
  const push = (step: Omit<TrajectoryStep, 'number'>) => {
    count += 1;
    visit({ number: count, ...step });
  };
  trajectory.forEach((message, index) => {
    if (message.role === 'tool') {
      push({ kind: 'tool_result', message: index, text: message.content, toolName: message.name, toolCallId: message.toolCallId });
      return;
    }
    if (message.role === 'assistant') {
      if (message.reasoning) push({ kind: 'reasoning', message: index, text: message.reasoning });
      if (message.content !== '') push({ kind: 'assistant', message: index, text: message.content });
      for (const call of message.toolCalls ?? []) push({ kind: 'tool_call', message: index, text: '', toolName: call.name, toolArguments: call.arguments, toolCallId: call.id });
      return;
    }
    push({ kind: message.role, message: index, text: message.content });
  });
}

/** Every tool call in order, with the step it is at and its result (matched by id, else the next result of that tool). */
export function toolCalls(trajectory: Trajectory): ToolCallRecord[] {
  const calls: ToolCallRecord[] = [];
  const byId = new Map<string, ToolCallRecord>();
  for (const step of trajectorySteps(trajectory)) {
    if (step.kind === 'tool_call') {
      const record: ToolCallRecord = { name: step.toolName!, arguments: step.toolArguments, step: step.number };
      if (step.toolCallId) {
        record.id = step.toolCallId;
        byId.set(step.toolCallId, record);
      }
      calls.push(record);
    } else if (step.kind === 'tool_result') {
      const record = (step.toolCallId ? byId.get(step.toolCallId) : undefined) ?? calls.find((call) => call.name === step.toolName && call.result === undefined);
      if (record && record.result === undefined) {
        record.result = step.text;
        record.resultStep = step.number;
      }
    }
  }
  return calls;
}

/**
 * Step numbers a verdict's explanation cites ("step 4", "steps 3, 5 and 7", "steps 10-12",
 * "[step 9]"), in order and without repeats; numbers outside 1…stepCount are ignored.
 */
export function citedSteps(text: string, stepCount: number): number[] {
  const found: number[] = [];
  const add = (value: number) => {
    if (Number.isInteger(value) && value >= 1 && value <= stepCount && !found.includes(value)) found.push(value);
  };
  for (const match of text.matchAll(/\bsteps?\s*#?\s*(\d+(?:\s*(?:,|and|&|or|-|–|to)\s*#?\d+)*)/gi)) {
    for (const part of match[1].matchAll(/(\d+)(?:\s*(?:-|–|to)\s*(\d+))?/g)) {
      const start = Number(part[1]);
      const end = part[2] !== undefined ? Number(part[2]) : start;
      if (end - start > 50) continue;
      for (let value = start; value <= end; value += 1) add(value);
    }
  }
  return found;
}
