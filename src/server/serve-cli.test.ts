/**
 * `rubricate serve` as a process: address line on stdout, grading through a pool of judge
 * endpoints, and a SIGTERM that drains the request in flight before exiting 0.
 */
import { describe, expect, vi } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { fruitRubric, ruleScript } from './test-support.js';

describe('rubricate serve', () => {
  test('prints its address, grades through a pool of judge endpoints (one down), and exits 0 after draining on SIGTERM', async ({ startJudge, startServe }) => {
    // Calls about the response sent just before SIGTERM are held until the server says it is draining.
    let releaseInFlight!: () => void;
    const inFlightHeld = new Promise<void>((resolve) => (releaseInFlight = resolve));
    const live = await startJudge(async (request) => {
      if (request.response === 'rotten apples') await inFlightHeld;
      return ruleScript(request);
    });
    const dead = await startJudge(() => ({ content: 'unused' }));
    await dead.close();
    const serve = await startServe(['--no-cache', '--log-level', 'info', '--judge', 'openai:fake', '--judge-base-url', dead.baseUrl, '--judge-base-url', live.baseUrl, '--token', 'tok']);
    expect(serve.lines[0]).toMatchObject({ event: 'listening', host: '127.0.0.1' });
    expect(serve.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const headers = { 'content-type': 'application/json', authorization: 'Bearer tok' };

    const group = await fetch(`${serve.url}/v1/score/group`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ prompt: 'Name some fruit.', rubric: fruitRubric, responses: ['apples and pears', 'pears'], advantages: 'dr_grpo' }),
    });
    expect(group.status).toBe(200);
    expect(await group.json()).toMatchObject({ rewards: [1, 0.25], advantages: [0.375, -0.375] });
    // Without the token, /healthz says only the status; with it, the details.
    expect(await (await fetch(`${serve.url}/healthz`)).json()).toEqual({ status: 'ok' });
    const health: any = await (await fetch(`${serve.url}/healthz`, { headers })).json();
    expect(health.judge_endpoints.map((entry: { healthy: boolean }) => entry.healthy)).toEqual([false, true]);

    // A request in flight when SIGTERM arrives is still answered.
    const inFlight = fetch(`${serve.url}/v1/score`, { method: 'POST', headers, body: JSON.stringify({ prompt: 'q', response: 'rotten apples', rubric: fruitRubric }) });
    await vi.waitFor(() => expect(live.requests.some((request) => request.response === 'rotten apples')).toBe(true), { timeout: 20_000 });
    serve.process.kill('SIGTERM');
    await vi.waitFor(() => expect(serve.stderr()).toContain('"msg":"draining"'), { timeout: 20_000 });
    releaseInFlight();
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ reward: 0.25 });
    expect(await serve.exited).toBe(0);
    expect(serve.lines.at(-1)).toEqual({ event: 'stopped', drained: true });
  });
});
