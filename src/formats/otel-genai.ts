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
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { RubricateError } from '../errors.js';
import { normalizeTrajectory, type Trajectory, type TrajectoryMessageInput } from '../trajectory/trajectory.js';
import { renderTrajectory } from '../trajectory/render.js';
import { inputLimits } from '../util/input-limits.js';
import { parseInputJson } from '../util/json.js';
import { JsonScanner } from '../util/json-scan.js';
import type { Item, Message, Rubric } from '../rubric/schema.js';
import { invalid } from './shared.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Importer, ImportOptions } from './types.js';
import { TraceConversation } from './otel-genai/conversation.js';
import { SpanProblem, text } from './otel-genai/messages.js';
import { SpanIndexer, SpanReader, type TraceIndex } from './otel-genai/span-index.js';

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
