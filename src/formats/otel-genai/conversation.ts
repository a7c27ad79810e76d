/**
 * One trace's conversation, folded span by span in start order: messages a model call repeats
 * are taken once, and tool spans become the calls and results they record.
 */
import { toolNameProblem, type TrajectoryMessageInput } from '../../trajectory/trajectory.js';
import { chatOperations, hasGenAiEvent, jsonAttribute, keyValues, modelCallMessages, SpanProblem, text, type RawSpan } from './messages.js';


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
export class TraceConversation {
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
