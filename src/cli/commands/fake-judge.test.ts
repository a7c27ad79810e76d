import { readFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { scriptedLabel } from '../../judges/scripted.js';
import { test } from '../../testing/vitest-fixtures.js';
import { runCliCaptured } from '../in-process.js';
import { runCli } from '../main.js';

const items = join(import.meta.dirname, '../../../examples/items.jsonl');

/** `rubricate fake-judge` in this process until `stop`: its listening line first. */
async function startFakeJudgeCommand(args: string[] = []) {
  const controller = new AbortController();
  const stdout: string[] = [];
  const stderr: string[] = [];
  let listening: (line: Record<string, unknown>) => void = () => undefined;
  const started = new Promise<Record<string, unknown>>((resolve) => (listening = resolve));
  const exited = runCli(['fake-judge', '--port', '0', ...args], {
    stdout: (text) => {
      stdout.push(text);
      const line = JSON.parse(text) as Record<string, unknown>;
      if (line.event === 'listening') listening(line);
    },
    stderr: (text) => void stderr.push(text),
    signal: controller.signal,
  });
  const line = await Promise.race([started, exited.then((code) => Promise.reject(new Error(`fake-judge exited ${code}`)))]);
  return { url: String(line.url), line, stdout, stderr, stop: async () => (controller.abort(), exited) };
}

/**
 * A POST to the fake judge: its headers, then `bodyBytes` of body in chunks (without ending the
 * request when `end` is false), answered with its status as soon as one comes.
 */
function postRaw(url: string, options: { headers?: Record<string, string>; bodyBytes?: number; end?: boolean }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(`${url}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer scripted', 'content-type': 'application/json', ...options.headers } }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        request.destroy();
        resolve({ status: response.statusCode ?? 0, body });
      });
    });
    request.on('error', reject);
    request.flushHeaders();
    const chunk = Buffer.alloc(1 << 14, 32);
    for (let sent = 0; sent < (options.bodyBytes ?? 0); sent += chunk.length) request.write(chunk);
    if (options.end !== false) request.end();
  });
}

const chatBody = JSON.stringify({ model: 'gpt-4.1-mini', messages: [{ role: 'user', content: 'hello' }] });

function withJudgeEnvironment<T>(baseUrl: string, run: () => Promise<T>): Promise<T> {
  Object.assign(process.env, { OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'scripted' });
  return run().finally(() => {
    delete process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_API_KEY;
  });
}

describe('rubricate fake-judge', () => {
  test('serves made-up, labelled verdicts to openai: judges, synchronously and through the Batch API, until stopped', async ({ tempDir }) => {
    const fake = await startFakeJudgeCommand(['--verdicts', 'met']);
    expect(fake.line).toMatchObject({ judge: 'scripted:met', scripted: true });
    const outcomes = await withJudgeEnvironment(fake.url, async () => [
      await runCliCaptured(['grade', '--input', items, '--judge', 'openai:gpt-4.1-mini', '--no-cache', '--quiet', '--out', join(tempDir, 'sync.jsonl')]),
      await runCliCaptured(['grade', '--input', items, '--judge', 'openai:gpt-4.1-mini', '--no-cache', '--quiet', '--batch', '--batch-poll', '0.05', '--out', join(tempDir, 'batch.jsonl')]),
    ]);
    for (const [index, outcome] of outcomes.entries()) expect(outcome.code, `run ${index}: ${outcome.stderr}`).toBe(0);
    const lines = (file: string) => readFileSync(join(tempDir, file), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    const judged = lines('sync.jsonl').flatMap((result) => result.criteria.filter((criterion: { source: string }) => criterion.source === 'judge'));
    expect(judged.length).toBeGreaterThan(0);
    for (const criterion of judged) expect(criterion).toMatchObject({ status: 'ok', met: true, explanation: scriptedLabel });
    // The same made-up verdicts by batch: every judged criterion answered, the same way.
    expect(lines('batch.jsonl').map((result) => result.criteria.map((criterion: { met: boolean }) => criterion.met))).toEqual(lines('sync.jsonl').map((result) => result.criteria.map((criterion: { met: boolean }) => criterion.met)));
    expect(await fake.stop()).toBe(0);
    expect(JSON.parse(fake.stdout.at(-1)!)).toMatchObject({ event: 'stopped' });
    expect(JSON.parse(fake.stdout.at(-1)!).requests).toBeGreaterThan(judged.length);
  });

  test('a port that is taken is an error, not a hang', async () => {
    const first = await startFakeJudgeCommand();
    const port = new URL(first.url).port;
    const second = await runCliCaptured(['fake-judge', '--port', port]);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`cannot listen on 127.0.0.1:${port}: port ${port} is already in use`);
    await first.stop();
  });

  test('answers loopback Host names only: a rebound name is refused with 403, before any reply is made up', async ({ closeAfter }) => {
    const fake = await startFakeJudgeCommand();
    closeAfter({ close: async () => void (await fake.stop()) });
    const port = new URL(fake.url).port;
    for (const host of ['127.0.0.1.attacker.example', `attacker.example:${port}`, `localhost.attacker.example:${port}`, '[::2]', `127.0.0.1:${port}:1`]) {
      const refused = await postRaw(fake.url, { headers: { host, 'content-length': String(Buffer.byteLength(chatBody)) }, bodyBytes: 0 });
      expect(refused.status, host).toBe(403);
      expect(refused.body).toContain('not a loopback name');
    }
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `judge.localhost:${port}`, `127.3.4.5`]) {
      const answered = await fetch(`${fake.url}/chat/completions`, { method: 'POST', headers: { host, authorization: 'Bearer scripted', 'content-type': 'application/json' }, body: chatBody });
      expect(answered.status, host).toBe(200);
    }
  });

  test('a 300 MB body is refused with 413 from its length, unread, and one over --max-body-bytes as soon as it passes the bound; the server goes on answering', async ({ closeAfter }) => {
    const fake = await startFakeJudgeCommand(['--max-body-bytes', '100000']);
    closeAfter({ close: async () => void (await fake.stop()) });
    // The length alone refuses it: no byte of the body is sent, the answer comes anyway.
    const announced = await postRaw(fake.url, { headers: { 'content-length': String(300 * 1024 * 1024) }, end: false });
    expect(announced.status).toBe(413);
    expect(announced.body).toContain('larger than 100000 bytes');
    // A chunked body with no length: refused once 100,000 bytes have come, the request still open.
    const streamed = await postRaw(fake.url, { headers: { 'transfer-encoding': 'chunked' }, bodyBytes: 120_000, end: false });
    expect(streamed.status).toBe(413);
    const normal = await fetch(`${fake.url}/chat/completions`, { method: 'POST', headers: { authorization: 'Bearer scripted', 'content-type': 'application/json' }, body: chatBody });
    expect(normal.status).toBe(200);
    // The default bound refuses the 300 MB body too.
    const defaults = await startFakeJudgeCommand();
    closeAfter({ close: async () => void (await defaults.stop()) });
    expect((await postRaw(defaults.url, { headers: { 'content-length': String(300 * 1024 * 1024) }, end: false })).status).toBe(413);
  });

  test('on an address beyond loopback it warns on every start that a made-up judge is on the network', async () => {
    for (const attempt of [1, 2]) {
      const fake = await startFakeJudgeCommand(['--host', '0.0.0.0']);
      expect(await fake.stop(), `start ${attempt}`).toBe(0);
      expect(fake.stderr.join('\n'), `start ${attempt}`).toMatch(/WARNING: rubricate fake-judge is listening on 0\.0\.0\.0, beyond loopback: any machine that reaches it gets MADE-UP verdicts/);
    }
    const local = await startFakeJudgeCommand();
    expect(await local.stop()).toBe(0);
    expect(local.stderr.join('\n')).not.toContain('WARNING');
  });
});
