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
 *
 * A trace's spans may sit anywhere in the file, so nothing can be built before the file has
 * been read. The file is read twice, in time and memory linear in its spans: first streamed
 * through `JsonScanner` (grammar, strict UTF-8, line numbers; each span one record of at most
 * `--max-record-bytes`), keeping per span only its trace, start time and place in the file;
 * then each trace's spans are read again from their places, in start order, and folded into
 * its conversation one by one. Memory is that index (about 100 bytes a span) and one trace's
 * messages, which may come to at most `--max-record-bytes` characters.
 */
import { createReadStream, readSync } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { RubricateError } from '../errors.js';
import { normalizeTrajectory, toolNameProblem, type Trajectory, type TrajectoryMessageInput } from '../trajectory/trajectory.js';
import { renderTrajectory } from '../trajectory/render.js';
import { inputLimits } from '../util/input-limits.js';
import { parseInputJson } from '../util/json.js';
import { JsonScanner, type JsonPathSegment, type JsonScanHandler, type JsonValueKind, type ScanDecision, type ScanPosition } from '../util/json-scan.js';
import type { Item, Message, Rubric } from '../rubric/schema.js';
import { invalid } from './shared.js';
import type { ImportRecord } from '../rubric/records.js';
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

/** Attributes an item's metadata and rubric come from: the first value any span gives, in start order. */
const firstAttributeKeys = ['rubricate.rubric_id', 'gen_ai.request.model', 'gen_ai.response.model', 'gen_ai.provider.name', 'gen_ai.system', 'gen_ai.agent.name'] as const;

/**
 * One trace's conversation, built span by span in start order. Every lookup is a map, so a
 * trace of n spans costs O(n) (the earlier build scanned every message taken for each tool span).
 */
class TraceConversation {
  readonly messages: TrajectoryMessageInput[] = [];
  readonly first = new Map<string, unknown>();
  private readonly taken = new Map<string, number>();
  /** Tool name of each call id taken, and the id of the latest call of each tool name. */
  private readonly callNames = new Map<string, string>();
  private readonly calledNames = new Set<string>();
  private readonly latestCallOf = new Map<string, string | undefined>();
  private characters = 0;

  constructor(
    private readonly traceId: string,
    private readonly maxCharacters: number,
  ) {}

  private take(message: TrajectoryMessageInput, span: RawSpan): void {
    this.characters += typeof message.content === 'string' ? message.content.length : message.content ? JSON.stringify(message.content).length : 0;
    this.characters += (message.reasoning?.length ?? 0) + (message.reasoning_content?.length ?? 0);
    for (const call of message.tool_calls ?? []) {
      this.characters += call.function.name.length + (typeof call.function.arguments === 'string' ? call.function.arguments.length : JSON.stringify(call.function.arguments ?? {}).length);
      if (call.id) this.callNames.set(call.id, call.function.name);
      this.calledNames.add(call.function.name);
      this.latestCallOf.set(call.function.name, call.id);
    }
    if (this.characters > this.maxCharacters) {
      throw new SpanProblem({ message: `the messages of trace ${this.traceId} come to more than ${this.maxCharacters} characters (the limit is --max-record-bytes)`, field: span.field, line: span.line });
    }
    this.messages.push(message);
    const key = fingerprint(message);
    this.taken.set(key, (this.taken.get(key) ?? 0) + 1);
  }

  /** Messages of an input not yet taken: each repeat counts (a second "yes" is a new message). */
  private takeNew(list: TrajectoryMessageInput[], span: RawSpan): void {
    const seen = new Map<string, number>();
    for (const message of list) {
      const key = fingerprint(message);
      const count = (seen.get(key) ?? 0) + 1;
      seen.set(key, count);
      if (count > (this.taken.get(key) ?? 0)) this.take(message, span);
    }
  }

  add(span: RawSpan): void {
    const attributes = keyValues(span.value.attributes, `${span.field}.attributes`, span.line);
    for (const key of firstAttributeKeys) if (!this.first.has(key) && attributes[key] !== undefined) this.first.set(key, attributes[key]);
    const operation = attributes['gen_ai.operation.name'];
    if (operation === 'execute_tool') {
      this.addToolSpan(span, attributes);
      return;
    }
    const isModelCall = (typeof operation === 'string' && chatOperations.has(operation)) || attributes['gen_ai.input.messages'] !== undefined || attributes['gen_ai.output.messages'] !== undefined || hasGenAiEvent(span.value.events);
    if (!isModelCall) return;
    const { input, output } = modelCallMessages(span, attributes);
    this.takeNew(input, span);
    this.takeNew(output, span);
  }

  private addToolSpan(span: RawSpan, attributes: Record<string, unknown>): void {
    const nameField = `${span.field}.attributes.gen_ai.tool.name`;
    const name = attributes['gen_ai.tool.name'];
    if (typeof name !== 'string' || name === '') throw new SpanProblem({ message: 'an execute_tool span needs gen_ai.tool.name', field: nameField, line: span.line });
    const nameProblem = toolNameProblem(name);
    if (nameProblem) throw new SpanProblem({ message: nameProblem, field: nameField, line: span.line });
    const spanId = typeof span.value.spanId === 'string' ? span.value.spanId : `span-${span.order}`;
    const id = typeof attributes['gen_ai.tool.call.id'] === 'string' && attributes['gen_ai.tool.call.id'] !== '' ? (attributes['gen_ai.tool.call.id'] as string) : undefined;
    const calledAs = id === undefined ? undefined : this.callNames.get(id);
    if (calledAs !== undefined && calledAs !== name) {
      throw new SpanProblem({ message: `the tool span names "${name}", but the call it answers (gen_ai.tool.call.id "${id}") is to "${calledAs}"`, field: nameField, line: span.line });
    }
    const rawArguments = attributes['gen_ai.tool.call.arguments'];
    if (typeof rawArguments === 'string' && rawArguments.trim() !== '') jsonAttribute(rawArguments, `${span.field}.attributes.gen_ai.tool.call.arguments`, span.line);
    const called = id !== undefined ? calledAs !== undefined : this.calledNames.has(name);
    const callId = id ?? spanId;
    if (!called) this.take({ role: 'assistant', content: null, tool_calls: [{ id: callId, type: 'function', function: { name, arguments: typeof rawArguments === 'string' ? rawArguments : JSON.stringify(rawArguments ?? {}) } }] }, span);
    const answeredId = id ?? this.latestCallOf.get(name) ?? callId;
    const result = attributes['gen_ai.tool.call.result'];
    if (result !== undefined && !this.taken.has(`tool#${answeredId}`)) this.take({ role: 'tool', tool_call_id: answeredId, name, content: text(result) }, span);
  }
}

function hasGenAiEvent(events: unknown): boolean {
  return Array.isArray(events) && events.some((event) => typeof (event as { name?: unknown } | null)?.name === 'string' && (event as { name: string }).name.startsWith('gen_ai.'));
}

/** Whether a span's attributes (OTLP list or plain object) or events name anything gen_ai.*. */
function isGenAiSpan(attributes: unknown, events: unknown): boolean {
  const keys = Array.isArray(attributes) ? attributes.map((entry) => (entry as { key?: unknown } | null)?.key) : attributes && typeof attributes === 'object' ? Object.keys(attributes) : [];
  return keys.some((key) => typeof key === 'string' && key.startsWith('gen_ai.')) || hasGenAiEvent(events);
}

/** Where a span is in the file, and what the first read learnt of it. */
interface SpanEntry {
  offset: number;
  length: number;
  line: number;
  order: number;
  start: bigint | undefined;
  field: string;
}

interface TraceIndex {
  entries: SpanEntry[];
  /** The first line of any of its spans: the item's line. */
  line: number;
  genAi: boolean;
  /** A span of the trace that could not be read (too long): the trace is refused, not built without it. */
  unreadable?: { line: number; field: string };
}

interface OpenSpan {
  field: string;
  offset: number;
  startLine: number;
  spanIdLine?: number;
  traceId?: unknown;
  start?: bigint;
  genAi: boolean;
  attributes?: unknown;
  events?: unknown;
  tooLarge: boolean;
}

/**
 * The first read: a `JsonScanner` handler that walks OTLP JSON (or a plain list of spans),
 * reports each problem with its line and field, and indexes every span by trace. The spans of a
 * document that turns out unreadable are dropped with it.
 */
class SpanIndexer implements JsonScanHandler {
  readonly traces = new Map<string, TraceIndex>();
  /** Problems found so far, taken by the reader between chunks. */
  problems: Array<{ message: string; line: number; field?: string }> = [];
  private pending: Array<{ traceId: string; entry: SpanEntry; genAi: boolean }> = [];
  private documentKind: JsonValueKind = 'object';
  private documentLine = 1;
  private sawResourceSpans = false;
  private resourceHasScopes = false;
  private scopeHasSpans = false;
  private span: OpenSpan | undefined;
  private order = 0;

  constructor(private readonly maxRecordBytes: number) {}

  private isSpanPath(path: readonly JsonPathSegment[]): boolean {
    return this.documentKind === 'array' ? path.length === 1 : path.length === 6 && path[0] === 'resourceSpans' && path[4] === 'spans';
  }

  enter(path: readonly JsonPathSegment[], kind: JsonValueKind, at: ScanPosition): ScanDecision {
    const depth = path.length;
    if (depth === 0) {
      this.documentKind = kind;
      this.documentLine = at.line;
      this.sawResourceSpans = false;
      if (kind !== 'scalar') return 'descend';
      this.problems.push({ message: 'expected OTLP JSON ({"resourceSpans": [...]}) or a list of spans', field: 'resourceSpans', line: at.line });
      return 'skip';
    }
    if (this.span && depth === (this.documentKind === 'array' ? 2 : 7)) return 'capture';
    if (this.isSpanPath(path)) {
      if (kind !== 'object') {
        this.problems.push({ message: 'a span must be an object', field: fieldOf(path), line: at.line });
        return 'skip';
      }
      this.span = { field: fieldOf(path), offset: at.offset, startLine: at.line, genAi: false, tooLarge: false };
      return 'descend';
    }
    if (this.documentKind === 'array') return 'skip';
    const list = (message: string, field: string) => {
      if (kind === 'array') return 'descend';
      this.problems.push({ message, field, line: at.line });
      return 'skip';
    };
    switch (depth) {
      case 1:
        if (path[0] !== 'resourceSpans') return 'skip';
        this.sawResourceSpans = true;
        return list('expected OTLP JSON ({"resourceSpans": [...]}) or a list of spans', 'resourceSpans');
      case 2:
        this.resourceHasScopes = false;
        if (kind === 'object') return 'descend';
        this.problems.push({ message: 'scopeSpans must be a list', field: `${fieldOf(path)}.scopeSpans`, line: at.line });
        return 'skip';
      case 3:
        if (path[2] !== 'scopeSpans' && path[2] !== 'instrumentationLibrarySpans') return 'skip';
        this.resourceHasScopes = true;
        return list('scopeSpans must be a list', fieldOf(path));
      case 4:
        this.scopeHasSpans = false;
        if (kind === 'object') return 'descend';
        this.problems.push({ message: 'spans must be a list', field: `${fieldOf(path)}.spans`, line: at.line });
        return 'skip';
      case 5:
        if (path[4] !== 'spans') return 'skip';
        this.scopeHasSpans = true;
        return list('spans must be a list', fieldOf(path));
      default:
        return 'skip';
    }
  }

  leave(path: readonly JsonPathSegment[], _kind: 'object' | 'array', end: number): void {
    if (this.span && this.isSpanPath(path)) {
      this.finishSpan(this.span, end);
      this.span = undefined;
      return;
    }
    if (path.length === 0) {
      if (this.documentKind === 'object' && !this.sawResourceSpans) this.problems.push({ message: 'expected OTLP JSON ({"resourceSpans": [...]}) or a list of spans', field: 'resourceSpans', line: this.documentLine });
      this.commit();
    } else if (this.documentKind === 'object' && path.length === 2 && !this.resourceHasScopes) {
      this.problems.push({ message: 'scopeSpans must be a list', field: `${fieldOf(path)}.scopeSpans`, line: this.documentLine });
    } else if (this.documentKind === 'object' && path.length === 4 && !this.scopeHasSpans) {
      this.problems.push({ message: 'spans must be a list', field: `${fieldOf(path)}.spans`, line: this.documentLine });
    }
  }

  captured(path: readonly JsonPathSegment[], bytes: Buffer | undefined, at: ScanPosition): void {
    const span = this.span!;
    if (bytes === undefined) {
      span.tooLarge = true;
      return;
    }
    const key = path.at(-1);
    if (key === 'spanId') span.spanIdLine = at.line;
    if (key !== 'traceId' && key !== 'startTimeUnixNano' && key !== 'attributes' && key !== 'events') return;
    const parsed = parseInputJson(bytes.toString(inputLimits().encoding));
    if (!parsed.ok) return; // the span is parsed again when its trace is built, and fails there with this reason
    if (key === 'traceId') span.traceId = parsed.value;
    else if (key === 'startTimeUnixNano') span.start = nanos(parsed.value);
    else if (key === 'attributes') span.attributes = parsed.value;
    else span.events = parsed.value;
  }

  failed(problem: { message: string; line: number; document?: number }): void {
    this.problems.push({ message: problem.message, line: problem.line, ...(problem.message.startsWith('not valid UTF-8') ? { field: 'encoding' } : {}) });
    if (problem.document !== undefined) {
      this.pending = [];
      this.span = undefined;
    }
  }

  private finishSpan(span: OpenSpan, end: number): void {
    const line = span.spanIdLine ?? span.startLine;
    const length = end - span.offset;
    const traceId = typeof span.traceId === 'string' && span.traceId !== '' ? span.traceId : undefined;
    if (span.tooLarge || length > this.maxRecordBytes) {
      this.problems.push({ message: `the span is longer than ${this.maxRecordBytes} bytes (the limit is --max-record-bytes)`, field: span.field, line });
      if (traceId !== undefined) this.trace(traceId).unreadable ??= { line, field: span.field };
      return;
    }
    if (traceId === undefined) {
      this.problems.push({ message: 'a span needs its traceId', field: `${span.field}.traceId`, line });
      return;
    }
    const entry: SpanEntry = { offset: span.offset, length, line, order: this.order, start: span.start, field: span.field };
    this.order += 1;
    this.pending.push({ traceId, entry, genAi: isGenAiSpan(span.attributes, span.events) });
  }

  private trace(traceId: string): TraceIndex {
    let trace = this.traces.get(traceId);
    if (!trace) this.traces.set(traceId, (trace = { entries: [], line: Number.POSITIVE_INFINITY, genAi: false }));
    return trace;
  }

  /** A document ended: its spans join their traces. */
  private commit(): void {
    for (const { traceId, entry, genAi } of this.pending) {
      const trace = this.trace(traceId);
      trace.entries.push(entry);
      if (entry.line < trace.line) trace.line = entry.line;
      if (genAi) trace.genAi = true;
    }
    this.pending = [];
  }
}

function fieldOf(path: readonly JsonPathSegment[]): string {
  return path.map((segment, index) => (typeof segment === 'number' ? `[${segment}]` : index === 0 ? segment : `.${segment}`)).join('');
}

/**
 * Reads spans again by their place in the file; consecutive spans come from one read ahead. The
 * reads are synchronous: the input is a regular file (checked before the first read), and a
 * trace's spans are read one by one, so a round trip through the thread pool per span would cost
 * more than the read itself.
 */
class SpanReader {
  private window = Buffer.alloc(0);
  private windowStart = 0;

  constructor(private readonly handle: FileHandle) {}

  read(offset: number, length: number): Buffer {
    const from = offset - this.windowStart;
    if (from >= 0 && from + length <= this.window.length) return this.window.subarray(from, from + length);
    // Just past the window: the file is being read in order, so read well ahead; else only this span.
    const inOrder = from >= 0 && from <= this.window.length + 4096;
    const size = inOrder ? Math.max(length, 1 << 20) : length;
    const buffer = Buffer.allocUnsafe(size);
    const bytesRead = readSync(this.handle.fd, buffer, 0, size, offset);
    this.window = buffer.subarray(0, bytesRead);
    this.windowStart = offset;
    if (bytesRead < length) throw new RubricateError('INPUT_UNREADABLE', 'the file became shorter while it was read', { field: 'input' });
    return this.window.subarray(0, length);
  }
}

function chooseRubric(traceId: string, named: unknown, options: ImportOptions, source: string, line: number): Rubric {
  const rubrics = options.rubrics;
  if (typeof named === 'string' || typeof named === 'number') {
    const found = rubrics?.get(String(named));
    if (!found) throw new RubricateError('INPUT_INVALID', `trace ${traceId} names rubric "${String(named)}", which is not in the rubrics file (--rubrics)`, { file: source, line, field: 'rubricate.rubric_id' });
    return found;
  }
  if (rubrics && rubrics.size === 1) return [...rubrics.values()][0];
  throw new RubricateError('INPUT_INVALID', rubrics ? `trace ${traceId} names no rubric: set the span attribute rubricate.rubric_id, or give a rubrics file with one rubric` : 'otel-genai traces carry no rubric: give one with --rubrics FILE', { file: source, line, field: 'rubricate.rubric_id' });
}

/**
 * A trace's system instructions, normalised trajectory and first attributes, its spans read
 * again in start order. The conversation's lookups and raw messages are dropped on return,
 * before the trajectory is rendered.
 */
function traceTrajectory(traceId: string, trace: TraceIndex, reader: SpanReader, source: string): { system: TrajectoryMessageInput[]; trajectory: Trajectory; first: Map<string, unknown> } {
  const { line } = trace;
  const { encoding, maxRecordBytes } = inputLimits();
  const ordered = trace.entries.sort((left, right) => (left.start! < right.start! ? -1 : left.start! > right.start! ? 1 : left.order - right.order));
  const conversation = new TraceConversation(traceId, maxRecordBytes);
  for (const entry of ordered) {
    const parsed = parseInputJson(reader.read(entry.offset, entry.length).toString(encoding));
    if (!parsed.ok) throw new SpanProblem({ message: parsed.error, field: entry.field, line: entry.line });
    conversation.add({ value: parsed.value as Record<string, unknown>, field: entry.field, line: entry.line, order: entry.order });
  }
  const { messages, first } = conversation;
  if (messages.length === 0) throw new RubricateError('INPUT_INVALID', `trace ${traceId} has GenAI spans but no recorded messages or tool calls (was message content capture off?)`, { file: source, line, field: 'gen_ai.input.messages' });
  const system = messages.filter((message) => message.role === 'system');
  const rest = messages.filter((message) => message.role !== 'system');
  if (rest.length === 0) throw new RubricateError('INPUT_INVALID', `trace ${traceId} has only system instructions, no conversation`, { file: source, line, field: 'gen_ai.input.messages' });
  return { system, trajectory: normalizeTrajectory(rest, { file: source, line, fieldPrefix: `trace ${traceId} messages` }), first };
}

/** Builds a trace's item. */
function traceItem(traceId: string, trace: TraceIndex, reader: SpanReader, options: ImportOptions, source: string): Item {
  const { line } = trace;
  const { system, trajectory, first } = traceTrajectory(traceId, trace, reader, source);
  const firstUser = trajectory.find((message) => message.role === 'user');
  const prompt: Message[] = system.length > 0 ? system.map((message) => ({ role: 'system', content: text(message.content) })) : [{ role: 'user', content: firstUser?.content ?? '' }];
  const rubric = chooseRubric(traceId, first.get('rubricate.rubric_id'), options, source, line);
  const metadata: Record<string, unknown> = { dataset: 'otel-genai', trace_id: traceId, spans: trace.entries.length };
  const model = first.get('gen_ai.request.model') ?? first.get('gen_ai.response.model');
  if (model !== undefined) metadata.model = model;
  const provider = first.get('gen_ai.provider.name') ?? first.get('gen_ai.system');
  if (provider !== undefined) metadata.system = provider;
  const agent = first.get('gen_ai.agent.name');
  if (agent !== undefined) metadata.agent = agent;
  return { id: traceId, prompt, response: renderTrajectory(trajectory), trajectory, rubric, metadata };
}

function problemRecord(source: string, problem: { message: string; line: number; field?: string }, id?: string): ImportRecord {
  return invalid(new RubricateError('INPUT_INVALID', problem.message, { file: source, line: problem.line, ...(problem.field ? { field: problem.field } : {}) }), problem.line, id);
}

export const otelGenaiImporter: Importer = {
  name: 'otel-genai',
  accepts: ['rubrics'],
  defaultScoring: 'weighted_mean',
  description: 'OpenTelemetry GenAI spans (OTLP JSON, one export per line, or a list of spans): one trajectory item per trace, its rubric from --rubrics',
  async *read(source, options): AsyncIterable<ImportRecord> {
    const unreadable = (error: unknown) => new RubricateError('INPUT_UNREADABLE', `cannot read ${source}: ${(error as Error).message}`, { file: source, field: 'input' });
    const before = await stat(source).catch((error: unknown) => {
      throw unreadable(error);
    });
    if (!before.isFile()) throw new RubricateError('INPUT_UNREADABLE', `${source} is not a regular file (otel-genai reads each trace's spans again from their place in the file)`, { file: source, field: 'input' });
    const { maxRecordBytes, maxDepth, encoding } = inputLimits();
    const indexer = new SpanIndexer(maxRecordBytes);
    // The OTLP wrapper (resourceSpans[i].scopeSpans[j].spans[k]) comes on top of a span's own nesting.
    const scanner = new JsonScanner(indexer, { maxCaptureBytes: maxRecordBytes, maxDepth: maxDepth + 7, utf8: encoding === 'utf8' });
    const stream = createReadStream(source, { highWaterMark: 1 << 16 });
    try {
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        scanner.push(chunk);
        for (const problem of indexer.problems) yield problemRecord(source, problem);
        indexer.problems = [];
      }
    } catch (error) {
      if (RubricateError.isInstance(error)) throw error;
      throw unreadable(error);
    } finally {
      stream.destroy();
    }
    const documents = scanner.end();
    for (const problem of indexer.problems) yield problemRecord(source, problem);
    indexer.problems = [];
    if (documents === 0) throw new RubricateError('INPUT_INVALID', 'not JSON: the file holds no JSON document', { file: source });

    const handle = await open(source, 'r');
    try {
      const now = await handle.stat();
      if (now.size !== before.size || now.mtimeMs !== before.mtimeMs) throw new RubricateError('INPUT_UNREADABLE', `${source} changed while it was read`, { file: source, field: 'input' });
      const reader = new SpanReader(handle);
      for (const [traceId, trace] of indexer.traces) {
        // Each trace's entries are let go once it is built (deleting the current entry keeps the iteration going).
        indexer.traces.delete(traceId);
        if (trace.unreadable) {
          yield invalid(new RubricateError('INPUT_INVALID', `trace ${traceId} has a span that could not be read (line ${trace.unreadable.line}): it is not graded without it`, { file: source, line: trace.unreadable.line, field: trace.unreadable.field }), trace.unreadable.line, traceId);
          continue;
        }
        if (trace.entries.length === 0) continue;
        const bad = trace.entries.find((entry) => entry.start === undefined);
        if (bad) {
          yield invalid(new RubricateError('INPUT_INVALID', 'startTimeUnixNano must be an integer number of nanoseconds (a string of digits in OTLP JSON)', { file: source, line: bad.line, field: `${bad.field}.startTimeUnixNano` }), bad.line, traceId);
          continue;
        }
        if (!trace.genAi) {
          options.onWarning?.(`${source}:${trace.line}: trace ${traceId} has no GenAI spans (no gen_ai.* attributes or events); skipped`);
          continue;
        }
        try {
          yield { kind: 'item', line: trace.line, item: traceItem(traceId, trace, reader, options, source) };
        } catch (error) {
          if (error instanceof SpanProblem) yield problemRecord(source, error.problem, traceId);
          else yield invalid(error, trace.line, traceId);
        }
      }
    } finally {
      await handle.close();
    }
  },
};
