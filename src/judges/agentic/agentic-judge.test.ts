import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { RubricateError } from '../../errors.js';
import { parseRunSpec } from '../../spec/run-spec.js';
import { binaryVerdict, type FakeJudgeRequest, type FakeJudgeScript } from '../../testing/fake-judge.js';
import { test, type RubricateFixtures } from '../../testing/vitest-fixtures.js';
import { normalizeTrajectory } from '../../trajectory/trajectory.js';
import { renderTrajectory } from '../../trajectory/render.js';
import type { JudgeRequest } from '../types.js';
import { toolCallSchemaName } from './agentic-judge.js';
import { allowedHost } from './fetch-tool.js';
import { checkAgenticSettings, withAgenticTools } from './setup.js';

const nonce = '0123456789abcdef';
const secretReference = 'GOLD-ANSWER-42 never to be shown';

/** A grading request as the per-criterion mode writes one: conversation, reference, response, criterion. */
function gradingRequest(response: string): JudgeRequest {
  const user = [
    `<conversation-${nonce}>\nuser: What is the boiling point of water at sea level?\n</conversation-${nonce}>`,
    `<reference-${nonce}>\n${secretReference}\n</reference-${nonce}>`,
    `<response-${nonce}>\n${response}\n</response-${nonce}>`,
    '<criterion-fedcba9876543210 id="c1" points="1">\nStates the value its source gives\n</criterion-fedcba9876543210>',
  ].join('\n\n');
  return {
    messages: [
      { role: 'system', content: 'You grade a response against one criterion.' },
      { role: 'user', content: user },
    ],
    output: { name: 'criterion_verdict', schema: { type: 'object', properties: { explanation: { type: 'string' }, criteria_met: { type: 'boolean' } }, required: ['explanation', 'criteria_met'], additionalProperties: false } },
    temperature: 0,
    sharedPrefix: { message: 1, characters: 40 },
  };
}

const isToolTurn = (request: FakeJudgeRequest) => (request.body.response_format as { json_schema?: { name?: string } } | undefined)?.json_schema?.name === toolCallSchemaName;

/** A judge that makes the given tool calls in order, then answers null, then its verdict. */
function callsThenVerdict(calls: Array<{ name: string; arguments: Record<string, unknown> }>, met = true): FakeJudgeScript {
  let made = 0;
  return (request) => {
    if (!isToolTurn(request)) return { content: binaryVerdict(met) };
    const call = calls[made++];
    return { content: { tool_call: call ? { name: call.name, arguments: JSON.stringify(call.arguments) } : null } };
  };
}

function everyMessage(request: FakeJudgeRequest): string {
  return request.messages.map((message) => String(message.content)).join('\n');
}

async function startSource(closeAfter: RubricateFixtures['closeAfter'], handler: http.RequestListener): Promise<{ origin: string; host: string }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closeAfter({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
  const { port } = server.address() as AddressInfo;
  return { origin: `http://127.0.0.1:${port}`, host: `127.0.0.1:${port}` };
}

function rejectionOf(promise: Promise<unknown>): Promise<RubricateError> {
  return promise.then(
    () => {
      throw new Error('expected the call to fail');
    },
    (error: unknown) => error as RubricateError,
  );
}

describe('agentic judge', () => {
  test('calls a tool, reads its result, then answers the original request; every call recorded and the reference never sent', async ({ scriptedJudge, tempDir }) => {
    const documents = join(tempDir, 'sources.jsonl');
    writeFileSync(documents, [JSON.stringify({ id: 'physics', title: 'Water', text: 'Water boils at 100 degrees Celsius at sea level.' }), JSON.stringify({ id: 'cooking', text: 'Pasta cooks in salted water.' })].join('\n'));
    const { fake, judge } = await scriptedJudge(callsThenVerdict([{ name: 'search', arguments: { query: 'boiling point sea level' } }]));
    const [agentic] = await withAgenticTools([judge], parseRunSpec({ agentic: { tools: ['search'], documents } }));
    const reply = await agentic.complete(gradingRequest('It boils at 100 °C.'), { signal: new AbortController().signal });

    expect(JSON.parse(reply.text)).toEqual(binaryVerdict(true));
    expect(reply.toolCalls).toEqual([{ name: 'search', arguments: { query: 'boiling point sea level' }, outcome: 'ok', summary: '1 of 2 documents: physics', bytes: expect.any(Number) }]);
    // Three calls: a tool turn, the turn that ends them, the verdict under the original schema.
    expect(fake.requests.map(isToolTurn)).toEqual([true, true, false]);
    expect((fake.requests[2].body.response_format as { json_schema: { name: string } }).json_schema.name).toBe('criterion_verdict');
    expect(reply.usage.inputTokens).toBe(300);
    const resultTurn = fake.requests[1].messages.at(-1)!.content;
    expect(resultTurn).toMatch(/^<tool-result-([0-9a-f]{16})>\n\[1\] id: physics; title: Water[\s\S]*\n<\/tool-result-\1>/);
    for (const request of fake.requests) {
      expect(everyMessage(request)).not.toContain('GOLD-ANSWER-42');
      expect(everyMessage(request)).toContain('It boils at 100 °C.');
    }
    expect(agentic.provenance.variant).toContain('"tools":["search"]');
  });

  test('a fetch outside the allow-list is refused: recorded, and an error, never a verdict', async ({ scriptedJudge }) => {
    const { fake, judge } = await scriptedJudge(callsThenVerdict([{ name: 'fetch', arguments: { url: 'https://elsewhere.example/page' } }]));
    const [agentic] = await withAgenticTools([judge], parseRunSpec({ agentic: { tools: ['fetch'], fetchAllow: ['sources.example'] } }));
    const error = await rejectionOf(agentic.complete(gradingRequest('See https://elsewhere.example/page'), { signal: new AbortController().signal }));
    expect(error.code).toBe('JUDGE_TOOL_REFUSED');
    expect(error.message).toContain('elsewhere.example is not on the allow-list');
    expect(error.details.tool_calls).toEqual([
      { name: 'fetch', arguments: { url: 'https://elsewhere.example/page' }, outcome: 'error', summary: expect.stringContaining('not on the allow-list'), bytes: 0, error: { code: 'JUDGE_TOOL_REFUSED', message: error.message } },
    ]);
    expect(fake.requests.filter((request) => !isToolTurn(request))).toEqual([]);
  });

  test('fetches an allowed loopback source named as itself, and refuses a redirect off the list', async ({ scriptedJudge, closeAfter }) => {
    const source = await startSource(closeAfter, (request, response) => {
      if (request.url === '/away') return void response.writeHead(302, { location: 'http://127.0.0.2:9/elsewhere' }).end();
      if (request.url === '/broken') return void response.writeHead(500).end();
      expect(request.headers.authorization).toBeUndefined();
      response.writeHead(200, { 'content-type': 'text/html' }).end('<html><script>x()</script><p>Water boils at 100 &deg;C.</p></html>');
    });
    const { judge } = await scriptedJudge(callsThenVerdict([{ name: 'fetch', arguments: { url: `${source.origin}/page` } }]));
    const [agentic] = await withAgenticTools([judge], parseRunSpec({ agentic: { tools: ['fetch'], fetchAllow: [source.host] } }));
    const reply = await agentic.complete(gradingRequest('It boils at 100 °C.'), { signal: new AbortController().signal });
    expect(reply.toolCalls?.[0]).toMatchObject({ name: 'fetch', outcome: 'ok', summary: expect.stringMatching(/^HTTP 200 text\/html, \d+ bytes$/) });

    for (const [path, code, reason] of [
      ['/away', 'JUDGE_TOOL_REFUSED', '127.0.0.2:9 is not on the allow-list'],
      ['/broken', 'JUDGE_TOOL_FAILED', 'answered HTTP 500'],
    ] as const) {
      const { judge: next } = await scriptedJudge(callsThenVerdict([{ name: 'fetch', arguments: { url: `${source.origin}${path}` } }]));
      const [wrapped] = await withAgenticTools([next], parseRunSpec({ agentic: { tools: ['fetch'], fetchAllow: [source.host] } }));
      const error = await rejectionOf(wrapped.complete(gradingRequest('x'), { signal: new AbortController().signal }));
      expect([error.code, error.message]).toEqual([code, expect.stringContaining(reason)]);
      expect((error.details.tool_calls as Array<{ outcome: string }>).map((call) => call.outcome)).toEqual(['error']);
    }
  });

  test('which hosts the allow-list lets through, and which it names as themselves (only those may be loopback or private)', async ({ scriptedJudge, closeAfter }) => {
    const allow = ['sources.example', '*.docs.example', '127.0.0.1:8080', '[::1]'];
    const cases = ['https://sources.example/a', 'https://api.docs.example/b', 'https://docs.example/', 'http://127.0.0.1:8080/', 'http://127.0.0.1:9090/', 'http://[::1]/', 'https://sources.example.evil/'];
    expect(cases.map((url) => allowedHost(new URL(url), allow))).toEqual([
      { allowed: true, named: true },
      { allowed: true, named: false },
      { allowed: false, named: false },
      { allowed: true, named: true },
      { allowed: false, named: false },
      { allowed: true, named: true },
      { allowed: false, named: false },
    ]);
    // `localhost` named with its port: reached, though it is loopback.
    const source = await startSource(closeAfter, (_request, response) => void response.writeHead(200, { 'content-type': 'text/plain' }).end('reached'));
    const port = source.host.split(':')[1];
    const { judge } = await scriptedJudge(callsThenVerdict([{ name: 'fetch', arguments: { url: `http://localhost:${port}/` } }]));
    const [agentic] = await withAgenticTools([judge], parseRunSpec({ agentic: { tools: ['fetch'], fetchAllow: [`localhost:${port}`] } }));
    const reply = await agentic.complete(gradingRequest('x'), { signal: new AbortController().signal });
    expect(reply.toolCalls?.map((call) => [call.outcome, call.bytes])).toEqual([['ok', 7]]);
  });

  test('fetches share the verdict\'s byte budget: a page is cut where it runs out, and a fetch after it is an error', async ({ scriptedJudge, closeAfter }) => {
    const source = await startSource(closeAfter, (_request, response) => void response.writeHead(200, { 'content-type': 'text/plain' }).end('0123456789abcdefghij'));
    const url = `${source.origin}/page`;
    const { judge } = await scriptedJudge(callsThenVerdict([{ name: 'fetch', arguments: { url } }, { name: 'fetch', arguments: { url } }]));
    const [agentic] = await withAgenticTools([judge], parseRunSpec({ agentic: { tools: ['fetch'], fetchAllow: [source.host], fetchMaxBytes: 12 } }));
    const error = await rejectionOf(agentic.complete(gradingRequest('x'), { signal: new AbortController().signal }));
    expect(error.code).toBe('JUDGE_TOOL_BUDGET');
    const calls = error.details.tool_calls as Array<{ outcome: string; summary: string; bytes: number }>;
    expect(calls.map((call) => [call.outcome, call.summary, call.bytes])).toEqual([
      ['ok', 'HTTP 200 text/plain, 12 bytes (cut)', 12],
      ['error', "tool fetch: the verdict has read its --fetch-max-bytes already", 0],
    ]);
  });

  test('a judge that keeps asking for tools past its budget is an error with a reason, every call recorded', async ({ scriptedJudge }) => {
    const steps = renderTrajectory(normalizeTrajectory([{ role: 'user', content: 'Book a flight' }, { role: 'assistant', content: 'Booked.' }]));
    const { judge } = await scriptedJudge((request) => (isToolTurn(request) ? { content: { tool_call: { name: 'steps', arguments: '{"from": 1}' } } } : { content: binaryVerdict(true) }));
    const [agentic] = await withAgenticTools([judge], parseRunSpec({ agentic: { tools: ['steps'], maxToolCalls: 2 } }));
    const error = await rejectionOf(agentic.complete(gradingRequest(steps), { signal: new AbortController().signal }));
    expect(error.code).toBe('JUDGE_TOOL_BUDGET');
    expect(error.message).toContain('tool call 3 (steps) with a budget of 2');
    const calls = error.details.tool_calls as Array<{ name: string; outcome: string; summary: string }>;
    expect(calls.map((call) => [call.name, call.outcome, call.summary])).toEqual([
      ['steps', 'ok', 'steps 1-2 of 2'],
      ['steps', 'ok', 'steps 1-2 of 2'],
    ]);
  });

  test('a check the judge runs reports its outcome; a check that cannot run is a tool failure', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(callsThenVerdict([{ name: 'check', arguments: { type: 'regex', parameters: { pattern: '100\\s*°C' } } }]));
    const [agentic] = await withAgenticTools([judge], parseRunSpec({ agentic: { tools: ['check'] } }));
    const reply = await agentic.complete(gradingRequest('It boils at 100 °C.'), { signal: new AbortController().signal });
    expect(reply.toolCalls?.map((call) => [call.outcome, call.summary])).toEqual([['ok', expect.stringMatching(/^check regex: passed/)]]);

    const { judge: next } = await scriptedJudge(callsThenVerdict([{ name: 'check', arguments: { type: 'regex', parameters: { nonsense: 1 } } }]));
    const [failing] = await withAgenticTools([next], parseRunSpec({ agentic: { tools: ['check'] } }));
    const error = await rejectionOf(failing.complete(gradingRequest('x'), { signal: new AbortController().signal }));
    expect([error.code, error.retryable]).toEqual(['JUDGE_TOOL_FAILED', true]);
    expect(error.message).toContain('CHECK_INVALID');
  });

  test('a tool turn that is not a tool call is unreadable (asked again), never a verdict', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge((request) => (isToolTurn(request) ? { content: 'I think it is met.' } : { content: binaryVerdict(true) }));
    const [agentic] = await withAgenticTools([judge], parseRunSpec({ agentic: { tools: ['check'] } }));
    const error = await rejectionOf(agentic.complete(gradingRequest('x'), { signal: new AbortController().signal }));
    expect([error.code, error.retryable]).toEqual(['JUDGE_UNPARSEABLE', true]);
  });

  test('settings nothing would read are refused by flag', () => {
    const refusal = (agentic: object, plan: object = {}) => {
      try {
        checkAgenticSettings(parseRunSpec({ agentic, plan }));
        return undefined;
      } catch (error) {
        return (error as RubricateError).message;
      }
    };
    expect(refusal({ fetchAllow: ['example.org'] })).toMatch(/^--fetch-allow is read only by the agentic judge/);
    expect(refusal({ tools: ['search'], documents: 'x', fetchMaxBytes: 10 })).toMatch(/^--fetch-max-bytes is read only by the fetch tool/);
    expect(refusal({ tools: ['fetch'] })).toMatch(/needs the hosts it may read/);
    expect(refusal({ tools: ['fetch'], fetchAllow: ['http://example.org/'] })).toMatch(/is not a host/);
    expect(refusal({ tools: ['search'] })).toMatch(/needs the documents/);
    expect(refusal({ tools: ['check'] }, { protocol: 'prometheus' })).toMatch(/not --judge-protocol prometheus/);
    expect(refusal({ tools: ['check'] })).toBeUndefined();
  });

  test('tools without a judge to call them are refused', async () => {
    await expect(withAgenticTools([], parseRunSpec({ agentic: { tools: ['check'] } }))).rejects.toThrow(/--judge-tools needs a judge/);
    expect(await withAgenticTools([], parseRunSpec({}))).toEqual([]);
  });
});
