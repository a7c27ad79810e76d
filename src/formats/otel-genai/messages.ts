/**
 * What the OpenTelemetry GenAI semantic conventions record, read: OTLP attribute values, the
 * convention's typed message parts and the older span events, as OpenAI-style messages; the
 * problem a span raises, with its field and line.
 */
import { toolNameProblem, type TrajectoryMessageInput } from '../../trajectory/trajectory.js';

export interface RawSpan {
  value: Record<string, unknown>;
  /** Field path of the span in its document, for errors. */
  field: string;
  /** Line of the span in the file (its document's line for JSONL, else where its spanId appears). */
  line: number;
  order: number;
}

interface SpanError {
  message: string;
  field: string;
  line: number;
}

export class SpanProblem extends Error {
  constructor(readonly problem: SpanError) {
    super(problem.message);
  }
}

export const chatOperations = new Set(['chat', 'text_completion', 'generate_content']);

/** An OTLP AnyValue as a plain value (kvlists become objects, int64 strings numbers when safe). */
function anyValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const record = value as Record<string, unknown>;
  if ('stringValue' in record) return record.stringValue;
  if ('boolValue' in record) return record.boolValue;
  if ('intValue' in record) {
    const number = Number(record.intValue);
    return Number.isSafeInteger(number) ? number : String(record.intValue);
  }
  if ('doubleValue' in record) return Number(record.doubleValue);
  if ('bytesValue' in record) return record.bytesValue;
  if ('arrayValue' in record) return ((record.arrayValue as { values?: unknown[] } | undefined)?.values ?? []).map(anyValue);
  if ('kvlistValue' in record) return keyValues((record.kvlistValue as { values?: unknown[] } | undefined)?.values ?? [], '');
  return value;
}

/** OTLP attributes ([{key, value: AnyValue}]) or an already-plain object, as an object. */
export function keyValues(attributes: unknown, field: string, line = 0): Record<string, unknown> {
  if (attributes === undefined || attributes === null) return {};
  if (Array.isArray(attributes)) {
    const out: Record<string, unknown> = {};
    attributes.forEach((entry, index) => {
      if (!entry || typeof entry !== 'object' || typeof (entry as { key?: unknown }).key !== 'string') {
        throw new SpanProblem({ message: 'an attribute needs a string key and a value', field: `${field}[${index}]`, line });
      }
      const { key, value } = entry as { key: string; value?: unknown };
      if (key === '__proto__') throw new SpanProblem({ message: 'the attribute key "__proto__" is not allowed', field: `${field}[${index}].key`, line });
      out[key] = anyValue(value);
    });
    return out;
  }
  if (typeof attributes === 'object') return attributes as Record<string, unknown>;
  throw new SpanProblem({ message: 'attributes must be a list of {key, value} or an object', field, line });
}

export function nanos(value: unknown): bigint | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return BigInt(Math.round(value));
  if (typeof value === 'string' && /^\d+$/.test(value)) return BigInt(value);
  return undefined;
}

/** A JSON attribute: conventions record structured values as JSON strings; an already-structured value is taken as is. */
export function jsonAttribute(value: unknown, field: string, line: number): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new SpanProblem({ message: `not valid JSON (${(error as Error).message})`, field, line });
  }
}

export function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Converts one convention message (role + parts) into OpenAI-style messages (a tool message per tool response). */
function conventionMessage(value: unknown, field: string, line: number): TrajectoryMessageInput[] {
  if (!value || typeof value !== 'object') throw new SpanProblem({ message: 'a message must be an object with role and parts', field, line });
  const message = value as { role?: unknown; parts?: unknown; content?: unknown; name?: unknown };
  const role = message.role;
  if (role !== 'system' && role !== 'user' && role !== 'assistant' && role !== 'tool') {
    throw new SpanProblem({ message: `role must be system, user, assistant or tool (got ${JSON.stringify(role)})`, field: `${field}.role`, line });
  }
  // Some exporters write OpenAI-style messages here (content, tool_calls): take them as they are.
  if (message.parts === undefined) return [value as TrajectoryMessageInput];
  if (!Array.isArray(message.parts)) throw new SpanProblem({ message: 'parts must be a list', field: `${field}.parts`, line });
  const texts: string[] = [];
  const reasoning: string[] = [];
  const calls: NonNullable<TrajectoryMessageInput['tool_calls']> = [];
  const results: TrajectoryMessageInput[] = [];
  message.parts.forEach((part, index) => {
    const partField = `${field}.parts[${index}]`;
    if (!part || typeof part !== 'object') throw new SpanProblem({ message: 'a part must be an object with a type', field: partField, line });
    const typed = part as Record<string, unknown>;
    switch (typed.type) {
      case 'text':
        texts.push(text(typed.content));
        return;
      case 'reasoning':
        reasoning.push(text(typed.content));
        return;
      case 'tool_call': {
        if (typeof typed.name !== 'string' || typed.name === '') throw new SpanProblem({ message: 'a tool_call part needs the tool name', field: `${partField}.name`, line });
        const nameProblem = toolNameProblem(typed.name);
        if (nameProblem) throw new SpanProblem({ message: nameProblem, field: `${partField}.name`, line });
        const args = typed.arguments;
        if (typeof args === 'string' && args.trim() !== '') jsonAttribute(args, `${partField}.arguments`, line);
        calls.push({ ...(typeof typed.id === 'string' && typed.id !== '' ? { id: typed.id } : {}), type: 'function', function: { name: typed.name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) } });
        return;
      }
      case 'tool_call_response':
        if (typeof typed.id !== 'string' || typed.id === '') throw new SpanProblem({ message: 'a tool_call_response part needs the id of the call it answers', field: `${partField}.id`, line });
        results.push({ role: 'tool', tool_call_id: typed.id, content: text(typed.response) });
        return;
      default:
        throw new SpanProblem({ message: `part type ${JSON.stringify(typed.type)} is not supported (text, reasoning, tool_call, tool_call_response are)`, field: `${partField}.type`, line });
    }
  });
  if (role === 'tool') return results;
  const out: TrajectoryMessageInput = { role, content: texts.join('\n') };
  if (reasoning.length > 0) out.reasoning = reasoning.join('\n');
  if (calls.length > 0) out.tool_calls = calls;
  return [out, ...results];
}

function conventionMessages(value: unknown, field: string, line: number): TrajectoryMessageInput[] {
  const parsed = jsonAttribute(value, field, line);
  if (!Array.isArray(parsed)) throw new SpanProblem({ message: 'expected a list of messages', field, line });
  return parsed.flatMap((message, index) => conventionMessage(message, `${field}[${index}]`, line));
}

/** The body of an older-convention event: `gen_ai.event.content` JSON when present, else the event's attributes. */
function eventBody(attributes: Record<string, unknown>, field: string, line: number): Record<string, unknown> {
  if (attributes['gen_ai.event.content'] !== undefined) {
    const body = jsonAttribute(attributes['gen_ai.event.content'], `${field}.gen_ai.event.content`, line);
    if (body && typeof body === 'object') return body as Record<string, unknown>;
  }
  return attributes;
}

function eventToolCalls(value: unknown, field: string, line: number): TrajectoryMessageInput['tool_calls'] {
  if (value === undefined) return undefined;
  const calls = jsonAttribute(value, field, line);
  if (!Array.isArray(calls)) throw new SpanProblem({ message: 'tool_calls must be a list', field, line });
  return calls.map((call, index) => {
    const typed = (call ?? {}) as { id?: unknown; function?: { name?: unknown; arguments?: unknown } };
    const name = typed.function?.name;
    if (typeof name !== 'string' || name === '') throw new SpanProblem({ message: 'a tool call needs function.name', field: `${field}[${index}].function.name`, line });
    const nameProblem = toolNameProblem(name);
    if (nameProblem) throw new SpanProblem({ message: nameProblem, field: `${field}[${index}].function.name`, line });
    const args = typed.function?.arguments;
    return { ...(typeof typed.id === 'string' ? { id: typed.id } : {}), type: 'function' as const, function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) } };
  });
}

/** Input and output messages of a model-call span, from attributes or events. */
export function modelCallMessages(span: RawSpan, attributes: Record<string, unknown>): { input: TrajectoryMessageInput[]; output: TrajectoryMessageInput[] } {
  const input: TrajectoryMessageInput[] = [];
  const output: TrajectoryMessageInput[] = [];
  const field = `${span.field}.attributes`;
  if (attributes['gen_ai.system_instructions'] !== undefined) {
    const instructions = jsonAttribute(attributes['gen_ai.system_instructions'], `${field}.gen_ai.system_instructions`, span.line);
    const parts = Array.isArray(instructions) ? instructions : [instructions];
    input.push({ role: 'system', content: parts.map((part) => (part && typeof part === 'object' && 'content' in part ? text((part as { content: unknown }).content) : text(part))).join('\n') });
  }
  if (attributes['gen_ai.input.messages'] !== undefined) input.push(...conventionMessages(attributes['gen_ai.input.messages'], `${field}.gen_ai.input.messages`, span.line));
  if (attributes['gen_ai.output.messages'] !== undefined) output.push(...conventionMessages(attributes['gen_ai.output.messages'], `${field}.gen_ai.output.messages`, span.line));
  const events = Array.isArray(span.value.events) ? span.value.events : [];
  events.forEach((event, index) => {
    const eventField = `${span.field}.events[${index}]`;
    const typed = (event ?? {}) as { name?: unknown; attributes?: unknown };
    if (typeof typed.name !== 'string' || !typed.name.startsWith('gen_ai.')) return;
    const body = eventBody(keyValues(typed.attributes, `${eventField}.attributes`, span.line), `${eventField}.attributes`, span.line);
    switch (typed.name) {
      case 'gen_ai.system.message':
      case 'gen_ai.user.message':
        input.push({ role: typed.name === 'gen_ai.system.message' ? 'system' : 'user', content: text(body.content) });
        return;
      case 'gen_ai.assistant.message': {
        const calls = eventToolCalls(body.tool_calls, `${eventField}.attributes.tool_calls`, span.line);
        input.push({ role: 'assistant', content: text(body.content), ...(calls ? { tool_calls: calls } : {}) });
        return;
      }
      case 'gen_ai.tool.message':
        if (typeof body.id !== 'string' || body.id === '') throw new SpanProblem({ message: 'a gen_ai.tool.message event needs the id of the call it answers', field: `${eventField}.attributes.id`, line: span.line });
        input.push({ role: 'tool', tool_call_id: body.id, content: text(body.content) });
        return;
      case 'gen_ai.choice': {
        const message = jsonAttribute(body.message, `${eventField}.attributes.message`, span.line) as Record<string, unknown> | undefined;
        const calls = eventToolCalls(message?.tool_calls ?? body.tool_calls, `${eventField}.attributes.message.tool_calls`, span.line);
        output.push({ role: 'assistant', content: text(message?.content ?? body.content), ...(calls ? { tool_calls: calls } : {}) });
        return;
      }
      default:
        return;
    }
  });
  return { input, output };
}

export function hasGenAiEvent(events: unknown): boolean {
  return Array.isArray(events) && events.some((event) => typeof (event as { name?: unknown } | null)?.name === 'string' && (event as { name: string }).name.startsWith('gen_ai.'));
}

/** Whether a span's attributes (OTLP list or plain object) or events name anything gen_ai.*. */
export function isGenAiSpan(attributes: unknown, events: unknown): boolean {
  const keys = Array.isArray(attributes) ? attributes.map((entry) => (entry as { key?: unknown } | null)?.key) : attributes && typeof attributes === 'object' ? Object.keys(attributes) : [];
  return keys.some((key) => typeof key === 'string' && key.startsWith('gen_ai.')) || hasGenAiEvent(events);
}
