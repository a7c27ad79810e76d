/**
 * Writes a generated OpenTelemetry GenAI trace as OTLP JSON, at any size, for the importer's
 * tests and benchmark: one model-call span that opens the conversation, `execute_tool` spans
 * (each a call and its result), and a closing model-call span. Spans can be written out of
 * start order (the importer must sort them), as one compact document, one pretty-printed
 * document, or one export per line of at most `perLine` spans (the collector's file exporter).
 * Written piece by piece, so a 200,000-span file never sits whole in this process.
 */
import { closeSync, openSync, writeSync } from 'node:fs';

export interface OtelTraceOptions {
  /** Spans in the trace, at least 3 (two model calls and the tool calls between). */
  spans: number;
  layout: 'document' | 'pretty' | 'lines';
  /** Spans per line with `layout: 'lines'` (default 512, the collector's batch size). */
  perLine?: number;
  /** Write the spans in a scrambled (but deterministic) order instead of start order. */
  scrambled?: boolean;
  traceId?: string;
}

/** What the importer should make of the trace: its tool calls in start order. */
export interface OtelTraceExpectation {
  traceId: string;
  toolCalls: Array<{ id: string; name: string; arguments: { id: number }; result: string }>;
}

const attribute = (key: string, value: string) => ({ key, value: { stringValue: value } });
const baseTime = 1_733_040_000_000_000_000n;

function toolName(index: number): string {
  return `lookup_${index % 7}`;
}

function span(traceId: string, index: number, count: number): Record<string, unknown> {
  const start = baseTime + BigInt(index) * 1_000_000n;
  const common = { traceId, spanId: index.toString(16).padStart(16, '0'), kind: 1, startTimeUnixNano: String(start), endTimeUnixNano: String(start + 500_000n) };
  if (index === 0) {
    return {
      ...common,
      name: 'chat gpt-4o',
      attributes: [
        attribute('gen_ai.operation.name', 'chat'),
        attribute('gen_ai.request.model', 'gpt-4o'),
        attribute('gen_ai.provider.name', 'openai'),
        attribute('gen_ai.system_instructions', JSON.stringify([{ type: 'text', content: 'You look records up with the tools.' }])),
        attribute('gen_ai.input.messages', JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `Look up all ${count - 2} records.` }] }])),
        attribute('gen_ai.output.messages', JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: 'Looking them up.' }] }])),
      ],
    };
  }
  if (index === count - 1) {
    return { ...common, name: 'chat gpt-4o', attributes: [attribute('gen_ai.operation.name', 'chat'), attribute('gen_ai.output.messages', JSON.stringify([{ role: 'assistant', parts: [{ type: 'text', content: `Found ${count - 2} records.` }] }]))] };
  }
  return {
    ...common,
    name: `execute_tool ${toolName(index)}`,
    attributes: [
      attribute('gen_ai.operation.name', 'execute_tool'),
      attribute('gen_ai.tool.name', toolName(index)),
      attribute('gen_ai.tool.call.id', `call_${index}`),
      attribute('gen_ai.tool.call.arguments', JSON.stringify({ id: index })),
      attribute('gen_ai.tool.call.result', JSON.stringify({ id: index, status: index % 3 === 0 ? 'archived' : 'active' })),
    ],
  };
}

/** The order spans are written in: start order, or a fixed scramble that keeps every index once. */
function writeOrder(count: number, scrambled: boolean): (position: number) => number {
  if (!scrambled) return (position) => position;
  // Multiplication by a number coprime with count is a permutation of 0…count-1.
  let step = 7919;
  while (gcd(step, count) !== 1) step += 2;
  return (position) => (position * step) % count;
}

function gcd(left: number, right: number): number {
  return right === 0 ? left : gcd(right, left % right);
}

function documentOpen(pretty: boolean): string {
  return pretty ? '{\n  "resourceSpans": [\n    {\n      "resource": {\n        "attributes": []\n      },\n      "scopeSpans": [\n        {\n          "scope": {\n            "name": "generated"\n          },\n          "spans": [\n' : '{"resourceSpans":[{"resource":{"attributes":[]},"scopeSpans":[{"scope":{"name":"generated"},"spans":[';
}

function documentClose(pretty: boolean): string {
  return pretty ? '\n          ]\n        }\n      ]\n    }\n  ]\n}\n' : ']}]}]}';
}

export function writeOtelTrace(file: string, options: OtelTraceOptions): OtelTraceExpectation {
  const { spans: count, layout } = options;
  if (count < 3) throw new Error('a generated trace needs at least 3 spans');
  const traceId = options.traceId ?? '4bf92f3577b34da6a3ce929d0e0e4736';
  const order = writeOrder(count, options.scrambled === true);
  const perLine = options.perLine ?? 512;
  const pretty = layout === 'pretty';
  const descriptor = openSync(file, 'w');
  let pending = '';
  const write = (text: string) => {
    pending += text;
    if (pending.length > 1 << 20) {
      writeSync(descriptor, pending);
      pending = '';
    }
  };
  try {
    for (let position = 0; position < count; position += 1) {
      const startsDocument = layout === 'lines' ? position % perLine === 0 : position === 0;
      if (startsDocument) write(documentOpen(pretty));
      else write(pretty ? ',\n' : ',');
      const text = JSON.stringify(span(traceId, order(position), count), null, pretty ? 2 : undefined);
      write(pretty ? text.replace(/^/gm, '            ') : text);
      const endsDocument = layout === 'lines' ? position % perLine === perLine - 1 || position === count - 1 : position === count - 1;
      if (endsDocument) write(documentClose(pretty) + (layout === 'lines' ? '\n' : ''));
    }
    writeSync(descriptor, pending);
  } finally {
    closeSync(descriptor);
  }
  const toolCalls: OtelTraceExpectation['toolCalls'] = [];
  for (let index = 1; index < count - 1; index += 1) toolCalls.push({ id: `call_${index}`, name: toolName(index), arguments: { id: index }, result: JSON.stringify({ id: index, status: index % 3 === 0 ? 'archived' : 'active' }) });
  return { traceId, toolCalls };
}
