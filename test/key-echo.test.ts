/**
 * Every judge, generator and Batch API client against a server that echoes the API key back in
 * each error shape it has (the 401 and 400 bodies gateways and proxies send): the key is in no
 * output, log or answer. The keys are shaped like no provider's (no `sk-`, no `AIza`) and named
 * by no environment variable, so only the one registration every key goes through can hide them.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { runCliCaptured } from '../src/cli/in-process.js';
import { startFakeAnthropic } from '../src/testing/fake-anthropic.js';
import { startFakeGemini } from '../src/testing/fake-gemini.js';
import { type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';

function itemsFile(directory: string): string {
  const file = join(directory, 'items.jsonl');
  const rubric = { criteria: [{ id: 'rest', text: 'Mentions rest', points: 2 }] };
  writeFileSync(file, `${[0, 1].map((index) => JSON.stringify({ id: `i${index}`, prompt: `Question ${index}`, response: 'Rest.', rubric })).join('\n')}\n`);
  return file;
}

const readIfThere = (file: string) => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
};

/** The key as each provider carries it, echoed in an error message the way careless gateways do. */
const keyOf = (headers: FakeJudgeRequest['headers']) => String(headers['x-api-key'] ?? headers['api-key'] ?? headers['x-goog-api-key'] ?? headers.authorization ?? '');
const echoed = (headers: FakeJudgeRequest['headers']) => `invalid credentials: ${keyOf(headers)} was not accepted (key=${keyOf(headers).replace(/^Bearer /, '')})`;

/** Runs a command and returns everything it wrote, and every file it left in the folder. */
async function outputsOf(args: string[], directory: string): Promise<{ code: number; text: string }> {
  const result = await runCliCaptured(args);
  const files = ['results.jsonl', 'metrics.json', 'rubrics.jsonl', 'compare.jsonl', 'compare.jsonl.summary.json'].map((name) => readIfThere(join(directory, name)));
  return { code: result.code, text: [result.stdout, result.stderr, ...files].join('\n') };
}

// Each test has servers, folders and keys of its own, and much of its time is spent waiting (a
// batch's quiet second, a retry's backoff): the tests run side by side.
describe('a key echoed back by the server reaches no output', { concurrent: true }, () => {
  test.for([
    ['openai: (lean HTTP)', 'openai:m', []],
    ['openai: (SDK transport)', 'openai:m', ['--judge-transport', 'sdk']],
    ['azure:', 'azure:judge-4o', ['--azure-api-version', '2024-10-21']],
  ] as const)('%s, in 401 and 400 bodies', async ([, spec, extra], { startJudge, tempDir }) => {
    // A key of each case's own: keys stay registered for redaction after a run, so a shared one could hide a leak.
    const key = `echokey-${[spec.split(':')[0], ...extra.slice(1)].join('-')}-5f1c9a2b7731`;
    for (const status of [401, 400]) {
      const fake = await startJudge((request) => ({ status, body: { error: { message: echoed(request.headers), type: 'invalid_request_error' } } }));
      const baseUrl = spec.startsWith('azure') ? fake.baseUrl.replace(/\/v1$/, '') : fake.baseUrl;
      const { text } = await outputsOf(['grade', '--input', itemsFile(tempDir), '--out', join(tempDir, 'results.jsonl'), '--metrics', join(tempDir, 'metrics.json'), '--judge', spec, '--judge-base-url', baseUrl, '--judge-api-key', key, '--no-cache', '--quiet', '--max-attempts', '1', ...extra], tempDir);
      expect(fake.requests.length, `${spec} ${status}`).toBeGreaterThan(0);
      expect(keyOf(fake.requests[0].headers)).toContain(key);
      expect(text).toMatch(/JUDGE_(AUTH|REQUEST_REJECTED)/);
      expect(text.includes(key), `${spec} ${status}: ${text}`).toBe(false);
    }
  });

  test('anthropic: and gemini: judges, in their own error bodies', async ({ closeAfter, tempDir }) => {
    const anthropicKey = 'echokey-anthropic-7e2d41c09a';
    const geminiKey = 'echokey-gemini-b3a90f66d1';
    // The fakes check the key first: the right key reaches the script, which answers with the key in the body.
    const anthropic = closeAfter(await startFakeAnthropic((request) => ({ status: request.index % 2 === 0 ? 401 : 400, message: echoed(request.headers) }), { apiKey: anthropicKey }));
    const gemini = closeAfter(await startFakeGemini((request) => ({ status: 400, statusName: 'INVALID_ARGUMENT', message: echoed(request.headers) }), { apiKey: geminiKey }));
    for (const [spec, baseUrl, key, requests] of [
      ['anthropic:claude-sonnet-4-5', anthropic.baseUrl, anthropicKey, anthropic.requests],
      ['gemini:gemini-2.5-flash', gemini.baseUrl, geminiKey, gemini.requests],
    ] as const) {
      const { text } = await outputsOf(['grade', '--input', itemsFile(tempDir), '--out', join(tempDir, 'results.jsonl'), '--metrics', join(tempDir, 'metrics.json'), '--judge', spec, '--judge-base-url', baseUrl, '--judge-api-key', key, '--no-cache', '--quiet', '--max-attempts', '2'], tempDir);
      expect(requests.length, spec).toBeGreaterThan(0);
      expect(keyOf(requests[0].headers)).toBe(key);
      expect(text).toMatch(/JUDGE_/);
      expect(text.includes(key), `${spec}: ${text}`).toBe(false);
    }
  });

  test('generators: an anthropic: and a gemini: generator', async ({ closeAfter, tempDir }) => {
    const prompts = join(tempDir, 'prompts.jsonl');
    writeFileSync(prompts, `${JSON.stringify({ id: 'p1', prompt: 'Explain fevers.' })}\n`);
    const anthropic = closeAfter(await startFakeAnthropic((request) => ({ status: 401, message: echoed(request.headers) }), { apiKey: 'echokey-generator-a-55c1' }));
    const gemini = closeAfter(await startFakeGemini((request) => ({ status: 400, statusName: 'INVALID_ARGUMENT', message: echoed(request.headers) }), { apiKey: 'echokey-generator-g-91d7' }));
    for (const [spec, baseUrl, key] of [
      ['anthropic:claude-sonnet-4-5', anthropic.baseUrl, 'echokey-generator-a-55c1'],
      ['gemini:gemini-2.5-flash', gemini.baseUrl, 'echokey-generator-g-91d7'],
    ] as const) {
      const { text } = await outputsOf(['generate', '--input', prompts, '--out', join(tempDir, 'rubrics.jsonl'), '--generator', spec, '--generator-base-url', baseUrl, '--generator-api-key', key, '--no-cache', '--generator-attempts', '1'], tempDir);
      expect(text, spec).toMatch(/JUDGE_AUTH|JUDGE_REQUEST_REJECTED/);
      expect(text.includes(key), `${spec}: ${text}`).toBe(false);
    }
    expect(anthropic.requests.length + gemini.requests.length).toBeGreaterThan(1);
  });

  test.for([
    ['openai', 'openai:gpt-4.1', []],
    ['azure', 'azure:gpt-41-batch', ['--azure-api-version', '2024-10-21']],
    ['anthropic', 'anthropic:claude-sonnet-4-5', []],
  ] as const)('the %s Batch API client, in the answer to its first upload', async ([provider, spec, extra], { closeAfter, tempDir }) => {
    const key = `echokey-batch-${provider}-0c4e2b`;
    // A gateway in front of the Batch API: every path answers 401 with the key in the body (the file upload, the batch creation).
    const seen: FakeJudgeRequest['headers'][] = [];
    const gateway = createServer((request, response) => {
      seen.push(request.headers);
      request.resume().on('end', () => response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ type: 'error', error: { type: 'authentication_error', message: echoed(request.headers) } })));
    });
    await new Promise<void>((resolve) => gateway.listen(0, '127.0.0.1', resolve));
    closeAfter({ close: () => new Promise<void>((resolve) => gateway.close(() => resolve())) });
    const root = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
    const baseUrl = provider === 'azure' ? root : `${root}/v1`;
    const { code, text } = await outputsOf(['grade', '--input', itemsFile(tempDir), '--out', join(tempDir, 'results.jsonl'), '--judge', spec, '--judge-base-url', baseUrl, '--judge-api-key', key, '--cache', join(tempDir, 'cache.sqlite'), '--batch', '--batch-poll', '0.05', '--quiet', ...extra], tempDir);
    expect(code).not.toBe(0);
    expect(seen.length).toBeGreaterThan(0);
    expect(keyOf(seen[0])).toContain(key);
    expect(text.includes(key), `${provider}: ${text}`).toBe(false);
  });

  test('serve with an anthropic: judge: /v1/score answers, /healthz with and without the token, and the request log', async ({ closeAfter, startServe }) => {
    const key = 'echokey-serve-3f8a1d2c';
    const token = 'servetoken-echo-77aa21';
    const anthropic = closeAfter(await startFakeAnthropic((request) => ({ status: 401, message: echoed(request.headers) }), { apiKey: key }));
    const serve = await startServe(['--no-cache', '--token', token, '--judge', 'anthropic:claude-sonnet-4-5', '--judge-base-url', anthropic.baseUrl, '--judge-api-key', key, '--max-attempts', '1']);
    const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
    const item = { prompt: 'q', response: 'Rest.', rubric: { criteria: [{ text: 'Mentions rest', points: 1 }] } };
    const answers: string[] = [];
    for (let attempt = 0; attempt < 2; attempt += 1) answers.push(await (await fetch(`${serve.url}/v1/score`, { method: 'POST', headers, body: JSON.stringify(item) })).text());
    answers.push(await (await fetch(`${serve.url}/healthz`)).text());
    answers.push(await (await fetch(`${serve.url}/healthz`, { headers })).text());
    expect(anthropic.requests.length).toBeGreaterThan(0);
    expect(answers.join('\n')).toContain('JUDGE_AUTH');
    serve.process.kill('SIGTERM');
    await serve.exited;
    const everything = [...answers, serve.stderr(), JSON.stringify(serve.lines)].join('\n');
    expect(everything.includes(key), everything).toBe(false);
  });
});
