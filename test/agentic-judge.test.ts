/**
 * The agentic judge end to end: `grade` and `serve` with `--judge-tools`, against a loopback
 * judge that asks for tools and then answers, and a loopback source the fetch tool reads. Every
 * tool call shows on the results line; a refused fetch and a spent budget are errors on their
 * criterion, never verdicts; the reference never reaches the judge.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { toolCallSchemaName } from '../src/judges/agentic/agentic-judge.js';
import { binaryVerdict, parseGradingPrompt, type FakeJudgeRequest, type FakeJudgeScript } from '../src/testing/fake-judge.js';
import { test, type RubricateFixtures } from '../src/testing/vitest-fixtures.js';
import { runCliInProcess } from './helpers.js';

const reference = 'GOLD-REFERENCE-7731';
const rubric = { criteria: [{ id: 'cited', text: 'The value it states is the one its source gives', points: 1 }] };

const isToolTurn = (request: FakeJudgeRequest) => (request.body.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name === toolCallSchemaName;

/** The graded response (from the first user message) and how many tool calls the exchange holds. */
function exchangeOf(request: FakeJudgeRequest): { response: string; made: number } {
  const first = request.messages.find((message) => message.role === 'user')!;
  return { response: parseGradingPrompt(String(first.content)).response ?? '', made: request.messages.filter((message) => message.role === 'assistant').length };
}

/** Per response: the tool calls the judge makes (one per tool turn), then null, then "met". */
function judgeScript(plans: Record<string, Array<{ name: string; arguments: Record<string, unknown> }>>): FakeJudgeScript {
  return (request) => {
    if (!isToolTurn(request)) return { content: binaryVerdict(true) };
    const { response, made } = exchangeOf(request);
    const plan = Object.entries(plans).find(([marker]) => response.includes(marker))?.[1] ?? [];
    const call = plan[made];
    return { content: { tool_call: call ? { name: call.name, arguments: JSON.stringify(call.arguments) } : null } };
  };
}

async function startSource(closeAfter: RubricateFixtures['closeAfter']): Promise<string> {
  const server = http.createServer((_request, response) => void response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('Water boils at 100 degrees Celsius at sea level.'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAfter({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function writeDocuments(folder: string): string {
  const documents = join(folder, 'sources.jsonl');
  writeFileSync(documents, `${JSON.stringify({ id: 'water', title: 'Boiling', text: 'At sea level water boils at 100 °C.' })}\n`);
  return documents;
}

describe('agentic judge through the CLI and the server', () => {
  test('grade: tool calls on every results line; a refused fetch and a spent budget are errors; the reference is never sent', async ({ startJudge, closeAfter, tempDir }) => {
    const source = await startSource(closeAfter);
    const judge = await startJudge(
      judgeScript({
        'cites-allowed': [
          { name: 'fetch', arguments: { url: `http://${source}/water` } },
          { name: 'search', arguments: { query: 'water boils sea level' } },
        ],
        'cites-elsewhere': [{ name: 'fetch', arguments: { url: 'https://elsewhere.example/water' } }],
        'asks-forever': [0, 1, 2].map(() => ({ name: 'search', arguments: { query: 'boiling' } })),
      }),
    );
    const items = join(tempDir, 'items.jsonl');
    const lines = ['cites-allowed', 'cites-elsewhere', 'asks-forever'].map((marker) => JSON.stringify({ id: marker, prompt: 'At what temperature does water boil?', response: `100 °C (${marker})`, reference, rubric }));
    writeFileSync(items, `${lines.join('\n')}\n`);
    const out = join(tempDir, 'results.jsonl');
    const flags = ['--judge', 'openai:fake-judge', '--judge-base-url', judge.baseUrl, '--judge-tools', 'fetch,search', '--fetch-allow', source, '--documents', writeDocuments(tempDir), '--judge-tool-budget', '2'];
    const run = await runCliInProcess(['grade', '--input', items, '--out', out, '--no-cache', '--quiet', ...flags]);
    expect(run.code, run.stderr).toBe(3);

    const results = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; score: number | null; judge: { settings?: { agentic?: unknown } }; criteria: Array<Record<string, unknown>> });
    const [allowed, elsewhere, forever] = results.map((result) => result.criteria[0]);
    expect(results[0]).toMatchObject({ id: 'cites-allowed', score: 1, judge: { settings: { agentic: { tools: ['fetch', 'search'], maxToolCalls: 2, fetchAllow: [source] } } } });
    expect(allowed).toMatchObject({ status: 'ok', met: true });
    expect(allowed.tool_calls).toEqual([
      { name: 'fetch', arguments: { url: `http://${source}/water` }, outcome: 'ok', summary: 'HTTP 200 text/plain, 48 bytes', bytes: 48 },
      { name: 'search', arguments: { query: 'water boils sea level' }, outcome: 'ok', summary: '1 of 1 documents: water', bytes: expect.any(Number) },
    ]);
    expect(results[1].score).toBeNull();
    expect(elsewhere).toMatchObject({ status: 'error', met: null, error: { code: 'JUDGE_TOOL_REFUSED', details: { tool_calls: [{ name: 'fetch', outcome: 'error', error: { code: 'JUDGE_TOOL_REFUSED' } }] } } });
    expect(results[2].score).toBeNull();
    expect(forever).toMatchObject({ status: 'error', met: null, error: { code: 'JUDGE_TOOL_BUDGET', message: expect.stringContaining('tool call 3 (search) with a budget of 2') } });
    expect((forever.error as { details: { tool_calls: unknown[] } }).details.tool_calls).toHaveLength(2);

    expect(judge.requests.length).toBeGreaterThan(0);
    for (const request of judge.requests) expect(JSON.stringify(request.messages)).not.toContain(reference);
  });

  test('serve: /v1/score answers with the tool calls the judge made before each verdict', async ({ startJudge, startServe, tempDir }) => {
    const judge = await startJudge(judgeScript({ '100': [{ name: 'search', arguments: { query: 'boiling point' } }] }));
    const serve = await startServe(['--no-cache', '--judge', 'openai:fake-judge', '--judge-base-url', judge.baseUrl, '--judge-tools', 'search', '--documents', writeDocuments(tempDir)]);
    const answer = await fetch(`${serve.url}/v1/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'At what temperature does water boil?', response: 'It boils at 100 °C.', reference, rubric }) });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as { reward: number; criteria: Array<{ tool_calls?: unknown }> };
    expect(body.reward).toBe(1);
    expect(body.criteria[0].tool_calls).toEqual([{ name: 'search', arguments: { query: 'boiling point' }, outcome: 'ok', summary: '1 of 1 documents: water', bytes: expect.any(Number) }]);
    for (const request of judge.requests) expect(JSON.stringify(request.messages)).not.toContain(reference);
  });
});
