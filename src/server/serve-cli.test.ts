/**
 * `rubricate serve` as a process: address line on stdout, grading through a pool of judge
 * endpoints, and a SIGTERM that drains the request in flight before exiting 0.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { binaryVerdict, startFakeJudge, type FakeJudge } from '../testing/fake-judge.js';
import { safeParseJson } from '../util/json.js';
import { criterionMet, fruitRubric } from './test-support.js';

const projectRoot = path.resolve(import.meta.dirname, '../..');
const children: ChildProcessWithoutNullStreams[] = [];
const fakes: FakeJudge[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill('SIGKILL');
  for (const fake of fakes.splice(0)) await fake.close();
});

interface ServeProcess {
  child: ChildProcessWithoutNullStreams;
  url: string;
  lines: Array<Record<string, unknown>>;
  exited: Promise<number | null>;
}

async function startServe(args: string[]): Promise<ServeProcess> {
  const environment = { ...process.env };
  // Loader flags of the test runner must not leak into the child.
  delete environment.NODE_OPTIONS;
  const child = spawn(process.execPath, ['bin/rubricate.js', 'serve', '--port', '0', '--no-cache', '--log-level', 'warn', ...args], { cwd: projectRoot, env: environment });
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const lines: Array<Record<string, unknown>> = [];
  const first = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let buffered = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${stderr}`)), 20_000);
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      buffered += chunk;
      for (let newline = buffered.indexOf('\n'); newline !== -1; newline = buffered.indexOf('\n')) {
        const parsed = safeParseJson(buffered.slice(0, newline));
        buffered = buffered.slice(newline + 1);
        if (parsed.ok) {
          lines.push(parsed.value as Record<string, unknown>);
          if (lines.length === 1) {
            clearTimeout(timer);
            resolve(lines[0]);
          }
        }
      }
    });
    exited.then((code) => reject(new Error(`serve exited with ${code}: ${stderr}`)));
  });
  expect(first).toMatchObject({ event: 'listening', host: '127.0.0.1' });
  return { child, url: String(first.url), lines, exited };
}

const verdicts = (delayMs = 0) => (request: { criteria: Array<{ text: string }>; response?: string }) => ({
  content: binaryVerdict(criterionMet(request.criteria[0].text, request.response ?? '')),
  delayMs,
});

describe('rubricate serve', () => {
  it('prints its address, grades through a pool of judge endpoints (one down), and exits 0 after draining on SIGTERM', async () => {
    const live = await startFakeJudge(verdicts(300));
    const dead = await startFakeJudge(() => ({ content: 'unused' }));
    const deadUrl = dead.baseUrl;
    await dead.close();
    fakes.push(live);
    const serve = await startServe(['--judge', 'openai:fake', '--judge-base-url', deadUrl, '--judge-base-url', live.baseUrl, '--token', 'tok']);
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const headers = { 'content-type': 'application/json', authorization: 'Bearer tok' };

    const group = await fetch(`${serve.url}/v1/score/group`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ prompt: 'Name some fruit.', rubric: fruitRubric, responses: ['apples and pears', 'pears'], advantages: 'dr_grpo' }),
    });
    expect(group.status).toBe(200);
    const body = await group.json();
    expect(body.rewards).toEqual([1, 0.25]);
    expect(body.advantages).toEqual([0.375, -0.375]);
    // Without the token, /healthz says only the status; with it, the details.
    expect(await (await fetch(`${serve.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const health = await (await fetch(`${serve.url}/healthz`, { headers })).json();
    expect(health.judge_endpoints.map((entry: { healthy: boolean }) => entry.healthy)).toEqual([false, true]);

    // A request in flight when SIGTERM arrives is still answered.
    const inFlight = fetch(`${serve.url}/v1/score`, { method: 'POST', headers, body: JSON.stringify({ prompt: 'q', response: 'rotten apples', rubric: fruitRubric }) });
    await new Promise((resolve) => setTimeout(resolve, 100));
    serve.child.kill('SIGTERM');
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect((await answer.json()).reward).toBe(0.25);
    expect(await serve.exited).toBe(0);
    expect(serve.lines.at(-1)).toEqual({ event: 'stopped', drained: true });
  });
});
