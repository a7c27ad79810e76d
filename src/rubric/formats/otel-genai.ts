/**
 * OpenTelemetry GenAI spans as trajectories (`--format otel-genai`). The input is a JSON
 * export of spans: OTLP JSON (`{resourceSpans: [{scopeSpans: [{spans: [...]}]}]}`, attributes
 * as key/value lists of AnyValue), one such document per line (the collector's file exporter),
 * or a plain array of spans with attributes as objects.
 *
 * Spans are grouped by trace; each trace becomes one trajectory item, its spans ordered by
 * start time. Messages come from what the GenAI semantic conventions record:
 * - `chat` (and other model-call) spans: `gen_ai.system_instructions`, `gen_ai.input.messages`
 *   and `gen_ai.output.messages` (messages of typed parts: text, reasoning, tool_call,
 *   tool_call_response), or the older span events gen_ai.system.message, gen_ai.user.message,
 *   gen_ai.assistant.message, gen_ai.tool.message and gen_ai.choice;
 * - `execute_tool` spans: `gen_ai.tool.name`, `gen_ai.tool.call.id`,
 *   `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`.
 * A model call's input repeats the conversation so far; messages already taken are not taken
 * again (tool results by their call id). The rubric comes from `--rubrics`: its only rubric,
 * or the one a span names in the attribute `rubricate.rubric_id`.
 */
import { readFile } from 'node:fs/promises';
import { RubricateError } from '../../errors.js';
import { normalizeTrajectory, type TrajectoryMessageInput } from '../../trajectory/trajectory.js';
import { renderTrajectory } from '../../trajectory/render.js';
import { parseInputJson } from '../../util/json.js';
import type { Item, Message, Rubric } from '../schema.js';
import { invalid } from './shared.js';
import type { ImportRecord } from '../records.js';
import type { Importer, ImportOptions } from './types.js';

interface RawSpan {
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

class SpanProblem extends Error {
  constructor(readonly problem: SpanError) {
    super(problem.message);
  }
}

const chatOperations = new Set(['chat', 'text_completion', 'generate_content']);

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
function keyValues(attributes: unknown, field: string, line = 0): Record<string, unknown> {
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

function nanos(value: unknown): bigint | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return BigInt(Math.round(value));
  if (typeof value === 'string' && /^\d+$/.test(value)) return BigInt(value);
  return undefined;
}

/** A JSON attribute: conventions record structured values as JSON strings; an already-structured value is taken as is. */
function jsonAttribute(value: unknown, field: string, line: number): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value);
  } catch (error) {
    throw new SpanProblem({ message: `not valid JSON (${(error as Error).message})`, field, line });
  }
}

function text(value: unknown): string {
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
    const args = typed.function?.arguments;
    return { ...(typeof typed.id === 'string' ? { id: typed.id } : {}), type: 'function' as const, function: { name, arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}) } };
  });
}

/** Input and output messages of a model-call span, from attributes or events. */
function modelCallMessages(span: RawSpan, attributes: Record<string, unknown>): { input: TrajectoryMessageInput[]; output: TrajectoryMessageInput[] } {
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

function fingerprint(message: TrajectoryMessageInput): string {
  if (message.role === 'tool' && message.tool_call_id) return `tool#${message.tool_call_id}`;
  const content = typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '');
  return JSON.stringify([message.role, content, (message.tool_calls ?? []).map((call) => [call.id ?? '', call.function.name, call.function.arguments]), message.reasoning ?? '']);
}

/** Builds one trace's conversation, span by span in start order. */
function traceMessages(spans: RawSpan[]): { messages: TrajectoryMessageInput[]; attributes: Record<string, unknown>[] } {
  const messages: TrajectoryMessageInput[] = [];
  const taken = new Map<string, number>();
  const take = (message: TrajectoryMessageInput) => {
    messages.push(message);
    const key = fingerprint(message);
    taken.set(key, (taken.get(key) ?? 0) + 1);
  };
  /** Messages of an input not yet taken: each repeat counts (a second "yes" is a new message). */
  const takeNew = (list: TrajectoryMessageInput[]) => {
    const seen = new Map<string, number>();
    for (const message of list) {
      const key = fingerprint(message);
      const count = (seen.get(key) ?? 0) + 1;
      seen.set(key, count);
      if (count > (taken.get(key) ?? 0)) take(message);
    }
  };
  const allAttributes: Record<string, unknown>[] = [];
  for (const span of spans) {
    const attributes = keyValues(span.value.attributes, `${span.field}.attributes`, span.line);
    allAttributes.push(attributes);
    const operation = attributes['gen_ai.operation.name'];
    if (operation === 'execute_tool') {
      const name = attributes['gen_ai.tool.name'];
      if (typeof name !== 'string' || name === '') throw new SpanProblem({ message: 'an execute_tool span needs gen_ai.tool.name', field: `${span.field}.attributes.gen_ai.tool.name`, line: span.line });
      const spanId = typeof span.value.spanId === 'string' ? span.value.spanId : `span-${span.order}`;
      const id = typeof attributes['gen_ai.tool.call.id'] === 'string' && attributes['gen_ai.tool.call.id'] !== '' ? (attributes['gen_ai.tool.call.id'] as string) : undefined;
      const rawArguments = attributes['gen_ai.tool.call.arguments'];
      if (typeof rawArguments === 'string' && rawArguments.trim() !== '') jsonAttribute(rawArguments, `${span.field}.attributes.gen_ai.tool.call.arguments`, span.line);
      const called = messages.some((message) => message.tool_calls?.some((call) => (id ? call.id === id : call.function.name === name)));
      const callId = id ?? spanId;
      if (!called) take({ role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name, arguments: typeof rawArguments === 'string' ? rawArguments : JSON.stringify(rawArguments ?? {}) } }] });
      const answeredId = id ?? messages.flatMap((message) => message.tool_calls ?? []).reverse().find((call) => call.function.name === name)?.id ?? callId;
      const result = attributes['gen_ai.tool.call.result'];
      if (result !== undefined && !taken.has(`tool#${answeredId}`)) take({ role: 'tool', tool_call_id: answeredId, name, content: text(result) });
      continue;
    }
    const isModelCall = (typeof operation === 'string' && chatOperations.has(operation)) || attributes['gen_ai.input.messages'] !== undefined || attributes['gen_ai.output.messages'] !== undefined || (Array.isArray(span.value.events) && span.value.events.some((event) => typeof (event as { name?: unknown } | null)?.name === 'string' && ((event as { name: string }).name.startsWith('gen_ai.'))));
    if (!isModelCall) continue;
    const { input, output } = modelCallMessages(span, attributes);
    takeNew(input);
    takeNew(output);
  }
  return { messages, attributes: allAttributes };
}

/** Splits a file into spans with their place: one JSON document, or one per line. */
function readSpans(source: string, raw: string): { spans: RawSpan[]; problems: SpanError[] } {
  const spans: RawSpan[] = [];
  const problems: SpanError[] = [];
  const whole = parseInputJson(raw);
  const documents: Array<{ value: unknown; line: number | undefined }> = [];
  if (whole.ok) documents.push({ value: whole.value, line: undefined });
  else {
    const lines = raw.split('\n');
    if (lines.filter((line) => line.trim() !== '').length <= 1) throw new RubricateError('INPUT_INVALID', `not JSON: ${whole.error}`, { file: source });
    lines.forEach((line, index) => {
      if (line.trim() === '') return;
      const parsed = parseInputJson(line);
      if (parsed.ok) documents.push({ value: parsed.value, line: index + 1 });
      else problems.push({ message: `not JSON: ${parsed.error}`, field: '', line: index + 1 });
    });
  }
  /** Where a span's id first appears in the text: its line in a pretty-printed export. */
  const lineOf = (spanId: unknown, fallback: number): number => {
    if (typeof spanId !== 'string' || spanId === '') return fallback;
    const at = raw.indexOf(`"${spanId}"`);
    if (at < 0) return fallback;
    let line = 1;
    for (let index = raw.indexOf('\n'); index >= 0 && index < at; index = raw.indexOf('\n', index + 1)) line += 1;
    return line;
  };
  const add = (value: unknown, field: string, documentLine: number | undefined) => {
    const line = documentLine ?? lineOf((value as { spanId?: unknown } | null)?.spanId, 1);
    if (!value || typeof value !== 'object' || Array.isArray(value)) problems.push({ message: 'a span must be an object', field, line });
    else spans.push({ value: value as Record<string, unknown>, field, line, order: spans.length });
  };
  for (const document of documents) {
    const value = document.value;
    if (Array.isArray(value)) {
      value.forEach((span, index) => add(span, `[${index}]`, document.line));
      continue;
    }
    const resourceSpans = (value as { resourceSpans?: unknown } | null)?.resourceSpans;
    if (!Array.isArray(resourceSpans)) {
      problems.push({ message: 'expected OTLP JSON ({"resourceSpans": [...]}) or a list of spans', field: 'resourceSpans', line: document.line ?? 1 });
      continue;
    }
    resourceSpans.forEach((resource, resourceIndex) => {
      const scopes = (resource as { scopeSpans?: unknown } | null)?.scopeSpans ?? (resource as { instrumentationLibrarySpans?: unknown } | null)?.instrumentationLibrarySpans;
      if (!Array.isArray(scopes)) {
        problems.push({ message: 'scopeSpans must be a list', field: `resourceSpans[${resourceIndex}].scopeSpans`, line: document.line ?? 1 });
        return;
      }
      scopes.forEach((scope, scopeIndex) => {
        const list = (scope as { spans?: unknown } | null)?.spans;
        if (!Array.isArray(list)) {
          problems.push({ message: 'spans must be a list', field: `resourceSpans[${resourceIndex}].scopeSpans[${scopeIndex}].spans`, line: document.line ?? 1 });
          return;
        }
        list.forEach((span, spanIndex) => add(span, `resourceSpans[${resourceIndex}].scopeSpans[${scopeIndex}].spans[${spanIndex}]`, document.line));
      });
    });
  }
  return { spans, problems };
}

function chooseRubric(traceId: string, attributes: Record<string, unknown>[], options: ImportOptions, source: string, line: number): Rubric {
  const rubrics = options.rubrics;
  const named = attributes.map((each) => each['rubricate.rubric_id']).find((value) => typeof value === 'string' || typeof value === 'number');
  if (named !== undefined) {
    const found = rubrics?.get(String(named));
    if (!found) throw new RubricateError('INPUT_INVALID', `trace ${traceId} names rubric "${String(named)}", which is not in the rubrics file (--rubrics)`, { file: source, line, field: 'rubricate.rubric_id' });
    return found;
  }
  if (rubrics && rubrics.size === 1) return [...rubrics.values()][0];
  throw new RubricateError('INPUT_INVALID', rubrics ? `trace ${traceId} names no rubric: set the span attribute rubricate.rubric_id, or give a rubrics file with one rubric` : 'otel-genai traces carry no rubric: give one with --rubrics FILE', { file: source, line, field: 'rubricate.rubric_id' });
}

function traceItem(traceId: string, spans: RawSpan[], options: ImportOptions, source: string): Item {
  const line = Math.min(...spans.map((span) => span.line));
  const { messages, attributes } = traceMessages(spans);
  if (messages.length === 0) throw new RubricateError('INPUT_INVALID', `trace ${traceId} has GenAI spans but no recorded messages or tool calls (was message content capture off?)`, { file: source, line, field: 'gen_ai.input.messages' });
  const system = messages.filter((message) => message.role === 'system');
  const conversation = messages.filter((message) => message.role !== 'system');
  if (conversation.length === 0) throw new RubricateError('INPUT_INVALID', `trace ${traceId} has only system instructions, no conversation`, { file: source, line, field: 'gen_ai.input.messages' });
  const trajectory = normalizeTrajectory(conversation, { file: source, line, fieldPrefix: `trace ${traceId} messages` });
  const firstUser = trajectory.find((message) => message.role === 'user');
  const prompt: Message[] = system.length > 0 ? system.map((message) => ({ role: 'system', content: text(message.content) })) : [{ role: 'user', content: firstUser?.content ?? '' }];
  const first = (key: string) => attributes.map((each) => each[key]).find((value) => value !== undefined);
  const rubric = chooseRubric(traceId, attributes, options, source, line);
  const metadata: Record<string, unknown> = { dataset: 'otel-genai', trace_id: traceId, spans: spans.length };
  const model = first('gen_ai.request.model') ?? first('gen_ai.response.model');
  if (model !== undefined) metadata.model = model;
  const system_ = first('gen_ai.provider.name') ?? first('gen_ai.system');
  if (system_ !== undefined) metadata.system = system_;
  const agent = first('gen_ai.agent.name');
  if (agent !== undefined) metadata.agent = agent;
  return { id: traceId, prompt, response: renderTrajectory(trajectory), trajectory, rubric, metadata };
}

export const otelGenaiImporter: Importer = {
  name: 'otel-genai',
  accepts: ['rubrics'],
  defaultScoring: 'weighted_mean',
  description: 'OpenTelemetry GenAI spans (OTLP JSON, one export per line, or a list of spans): one trajectory item per trace, its rubric from --rubrics',
  async *read(source, options): AsyncIterable<ImportRecord> {
    let raw: string;
    try {
      raw = await readFile(source, 'utf8');
    } catch (error) {
      throw new RubricateError('INPUT_UNREADABLE', `cannot read ${source}: ${(error as Error).message}`, { file: source, field: 'input' });
    }
    const { spans, problems } = readSpans(source, raw);
    for (const problem of problems) yield invalid(new RubricateError('INPUT_INVALID', problem.message, { file: source, line: problem.line, ...(problem.field ? { field: problem.field } : {}) }), problem.line);
    const traces = new Map<string, RawSpan[]>();
    for (const span of spans) {
      const traceId = span.value.traceId;
      if (typeof traceId !== 'string' || traceId === '') {
        yield invalid(new RubricateError('INPUT_INVALID', 'a span needs its traceId', { file: source, line: span.line, field: `${span.field}.traceId` }), span.line);
        continue;
      }
      let list = traces.get(traceId);
      if (!list) traces.set(traceId, (list = []));
      list.push(span);
    }
    for (const [traceId, list] of traces) {
      const line = Math.min(...list.map((span) => span.line));
      const bad = list.find((span) => nanos(span.value.startTimeUnixNano) === undefined);
      if (bad) {
        yield invalid(new RubricateError('INPUT_INVALID', 'startTimeUnixNano must be an integer number of nanoseconds (a string of digits in OTLP JSON)', { file: source, line: bad.line, field: `${bad.field}.startTimeUnixNano` }), bad.line, traceId);
        continue;
      }
      const ordered = [...list].sort((left, right) => {
        const difference = nanos(left.value.startTimeUnixNano)! - nanos(right.value.startTimeUnixNano)!;
        return difference < 0n ? -1 : difference > 0n ? 1 : left.order - right.order;
      });
      const hasGenAi = ordered.some((span) => {
        const attributes = span.value.attributes;
        const keys = Array.isArray(attributes) ? attributes.map((entry) => (entry as { key?: unknown } | null)?.key) : attributes && typeof attributes === 'object' ? Object.keys(attributes) : [];
        return keys.some((key) => typeof key === 'string' && key.startsWith('gen_ai.')) || (Array.isArray(span.value.events) && span.value.events.some((event) => String((event as { name?: unknown } | null)?.name ?? '').startsWith('gen_ai.')));
      });
      if (!hasGenAi) {
        options.onWarning?.(`${source}:${line}: trace ${traceId} has no GenAI spans (no gen_ai.* attributes or events); skipped`);
        continue;
      }
      try {
        yield { kind: 'item', line, item: traceItem(traceId, ordered, options, source) };
      } catch (error) {
        if (error instanceof SpanProblem) {
          yield invalid(new RubricateError('INPUT_INVALID', error.problem.message, { file: source, line: error.problem.line, field: error.problem.field }), error.problem.line, traceId);
        } else yield invalid(error, line, traceId);
      }
    }
  },
};
