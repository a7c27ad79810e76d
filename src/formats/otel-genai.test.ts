import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { runCliCaptured } from '../cli/in-process.js';
import { exitCodes } from '../errors.js';
import { describe, expect, it } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import type { RubricateError } from '../errors.js';
import { writeOtelTrace } from '../testing/otel-trace.js';
import { parseRenderedTrajectory } from '../trajectory/render.js';
import { toolCalls, trajectorySteps } from '../trajectory/trajectory.js';
import { normalizeRubric } from '../rubric/normalize.js';
import type { Item, Rubric } from '../rubric/schema.js';
import { getItemImporter } from './index.js';

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/otel-genai/${name}`, import.meta.url));
const rubric = (id: string): Rubric => normalizeRubric({ id, criteria: [{ id: 'c', text: 'The agent confirms before booking.' }] });

/** A rendering's steps as `[step N] …` paragraphs: the legend and the step marker left out. */
function unmarked(response: string): string {
  return response.replace(/^\[trajectory #[0-9a-f]{12}\] [^\n]*\n\n/, '').replace(/^\[step (\d+) #[0-9a-f]{12}\]/gm, '[step $1]');
}

async function read(name: string, rubrics: Map<string, Rubric>) {
  const items: Item[] = [];
  const errors: Array<{ id?: string; error: RubricateError }> = [];
  const warnings: string[] = [];
  for await (const record of getItemImporter('otel-genai').read(name.startsWith('/') ? name : fixture(name), { rubrics, onWarning: (message) => warnings.push(message) })) {
    if (record.kind === 'item') items.push(record.item);
    else errors.push({ id: record.id, error: record.error });
  }
  return { items, errors, warnings };
}

describe('--format otel-genai', () => {
  it('reads OTLP JSON with gen_ai.input/output.messages and execute_tool spans: one trajectory per trace, in start order, nothing repeated', async () => {
    const { items, errors, warnings } = await read('attributes.json', new Map([['concierge', rubric('concierge')], ['other', rubric('other')]]));
    expect(errors).toEqual([]);
    expect(items).toHaveLength(1);
    // The HTTP-only trace is not a GenAI trace: skipped with a warning, not an error.
    expect(warnings).toEqual([expect.stringMatching(/attributes\.json:\d+: trace 0af7651916cd43dd8448eb211c80319c has no GenAI spans/)]);
    const [item] = items;
    expect(item.id).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(item.rubric.id).toBe('concierge');
    expect(item.prompt).toEqual([{ role: 'system', content: 'You are a concierge. Confirm before booking.' }]);
    expect(item.metadata).toMatchObject({ dataset: 'otel-genai', trace_id: item.id, model: 'gpt-4o', system: 'openai', agent: 'concierge', spans: 7 });
    expect(unmarked(item.response)).toBe(
      [
        "[step 1] user: What's the weather in Paris? Book me a table if it is sunny.",
        '[step 2] assistant reasoning: Check the weather first.',
        '[step 3] tool call get_weather({"city":"Paris"})',
        '[step 4] tool result get_weather: {"sky":"sunny","celsius":24}',
        '[step 5] assistant: It is sunny (24°C). Shall I book a table for two at 8pm (yes/no)?',
        '[step 6] user: yes',
        '[step 7] tool call book_table({"city":"Paris","time":"20:00","people":2})',
        '[step 8] tool result book_table: {"confirmation":"T-42"}',
        '[step 9] assistant: Booked: confirmation T-42.',
      ].join('\n\n'),
    );
    expect(toolCalls(item.trajectory!).map((call) => [call.name, call.id, call.result])).toEqual([
      ['get_weather', 'call_w1', '{"sky":"sunny","celsius":24}'],
      ['book_table', 'call_b1', '{"confirmation":"T-42"}'],
    ]);
  });

  it('reads the older span events (gen_ai.*.message, gen_ai.choice) from one OTLP export per line, a trace split over lines', async () => {
    const { items, errors } = await read('events.jsonl', new Map([['only', rubric('only')]]));
    expect(errors).toEqual([]);
    expect(items).toHaveLength(1);
    const [item] = items;
    expect(item.id).toBe('5b8aa5a2d2c872e8321cf37308d69df2');
    expect(item.rubric.id).toBe('only');
    expect(item.prompt).toEqual([{ role: 'system', content: 'You answer from the tools only.' }]);
    expect(item.metadata).toMatchObject({ model: 'gpt-4o-mini', system: 'openai', spans: 3 });
    expect(unmarked(item.response)).toBe(
      [
        '[step 1] user: How many open tickets does ACME have?',
        '[step 2] tool call count_tickets({"customer":"ACME","status":"open"})',
        '[step 3] tool result count_tickets: {"open":7}',
        '[step 4] assistant: ACME has 7 open tickets.',
      ].join('\n\n'),
    );
  });

  it('reports each bad span with file, line and field, and still reads the good trace', async () => {
    const { items, errors } = await read('bad.json', new Map([['only', rubric('only')]]));
    expect(items.map((item) => item.id)).toEqual(['6c9bb6b3e3d983f9432d048419e7a0e3']);
    const shown = errors.map(({ id, error }) => ({ id, code: error.code, line: error.details?.line, field: error.details?.field, message: error.message }));
    const file = fixture('bad.json');
    expect(errors.every(({ error }) => error.details?.file === file)).toBe(true);
    expect(shown).toEqual([
      { id: undefined, code: 'INPUT_INVALID', line: 136, field: 'resourceSpans[0].scopeSpans[0].spans[5].traceId', message: expect.stringMatching(/needs its traceId/) },
      { id: '7d0cc7c4f4ea94fa543e159520f8b1f4', code: 'INPUT_INVALID', line: 38, field: 'resourceSpans[0].scopeSpans[0].spans[1].attributes.gen_ai.input.messages', message: expect.stringMatching(/not valid JSON/) },
      { id: '8e1dd8d5a5fba5ab654f26a631a9c2a5', code: 'INPUT_INVALID', line: 61, field: 'resourceSpans[0].scopeSpans[0].spans[2].attributes.gen_ai.input.messages[0].parts[1].type', message: expect.stringMatching(/part type "blob" is not supported/) },
      { id: '9f2ee9e6b6acb6bc765a37b742bad3b6', code: 'INPUT_INVALID', line: 84, field: 'resourceSpans[0].scopeSpans[0].spans[3].attributes.gen_ai.tool.name', message: expect.stringMatching(/needs gen_ai.tool.name/) },
      { id: 'a03ffaf7c7bdc7cd876b48c853cbe4c7', code: 'INPUT_INVALID', line: 107, field: 'resourceSpans[0].scopeSpans[0].spans[4].attributes.gen_ai.tool.call.arguments', message: expect.stringMatching(/not valid JSON/) },
      { id: 'b140a0a8d8ced8de987c59d964dcf5d8', code: 'INPUT_INVALID', line: 153, field: 'resourceSpans[0].scopeSpans[0].spans[6].startTimeUnixNano', message: expect.stringMatching(/nanoseconds/) },
    ]);
  });

  it('needs a rubric: the one a span names, or the only one in --rubrics', async () => {
    const none = await read('events.jsonl', new Map([['a', rubric('a')], ['b', rubric('b')]]));
    expect(none.items).toEqual([]);
    expect(none.errors[0].error.message).toMatch(/names no rubric/);
    const unknown = await read('attributes.json', new Map([['other', rubric('other')]]));
    expect(unknown.errors[0].error.message).toMatch(/names rubric "concierge", which is not in the rubrics file/);
    expect(unknown.errors[0].error.details?.field).toBe('rubricate.rubric_id');
  });

  test('a generated 5,000-span trace, spans out of order, pretty-printed or one export per line: one item with every call and result in start order', async ({ tempDir }) => {
    for (const layout of ['pretty', 'lines'] as const) {
      const file = path.join(tempDir, `trace-${layout}.json`);
      const expected = writeOtelTrace(file, { spans: 5000, layout, perLine: 300, scrambled: true });
      const { items, errors, warnings } = await read(file, new Map([['only', rubric('only')]]));
      expect(errors, layout).toEqual([]);
      expect(warnings, layout).toEqual([]);
      expect(items.map((item) => item.id), layout).toEqual([expected.traceId]);
      const [item] = items;
      expect(item.metadata).toMatchObject({ spans: 5000, model: 'gpt-4o', system: 'openai' });
      expect(item.prompt).toEqual([{ role: 'system', content: 'You look records up with the tools.' }]);
      expect(toolCalls(item.trajectory!).map((call) => ({ id: call.id, name: call.name, arguments: call.arguments, result: call.result }))).toEqual(expected.toolCalls);
      // The opening user message and answer, a call and a result per tool span, the closing answer.
      const steps = trajectorySteps(item.trajectory!);
      expect(steps).toHaveLength(2 + 2 * 4998 + 1);
      expect([steps[0].text, steps[1].text, steps.at(-1)!.text]).toEqual(['Look up all 4998 records.', 'Looking them up.', 'Found 4998 records.']);
      expect(parseRenderedTrajectory(item.response)!.map((step) => step.kind)).toEqual(steps.map((step) => step.kind));
    }
  });

  test('grades the imported trajectory with trajectory checks through the CLI (--judge none)', async ({ tempDir }) => {
    const rubrics = path.join(tempDir, 'rubrics.jsonl');
    await writeFile(rubrics, `${JSON.stringify({ id: 'concierge', gate: 'hard_rules', criteria: [
      { id: 'weather_first', text: 'Checks the weather before booking.', kind: 'hard_rule', check: { type: 'tool_order', before: 'get_weather', after: 'book_table' } },
      { id: 'booked', text: 'Books a table for 2 at 20:00.', check: { type: 'tool_args_match', name: 'book_table', args: { people: 2, time: '20:00' } } },
      { id: 'confirmed', text: 'Asks yes/no.', check: { type: 'message_matches', pattern: 'yes/no', scope: 'assistant' } },
    ] })}\n`);
    const out = path.join(tempDir, 'out.jsonl');
    const { code, stderr } = await runCliCaptured(['grade', '--format', 'otel-genai', '--input', fixture('attributes.json'), '--rubrics', rubrics, '--judge', 'none', '--out', out, '--quiet']);
    expect(code, stderr).toBe(exitCodes.success);
    const [result] = (await readFile(out, 'utf8')).trim().split('\n').map((line) => JSON.parse(line) as { id: string; score: number; criteria: Array<{ id: string; met: boolean }> });
    expect(result.id).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(result.criteria.map((criterion) => [criterion.id, criterion.met])).toEqual([['weather_first', true], ['booked', true], ['confirmed', true]]);
    expect(result.score).toBe(1);
  });
});
