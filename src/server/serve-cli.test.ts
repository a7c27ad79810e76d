/**
 * `rubricate serve` as a process: address line on stdout, grading through a pool of judge
 * endpoints, and a SIGTERM that drains the request in flight before exiting 0.
 */
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, vi } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import { binaryVerdict } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { criterionMet, fruitRubric, ruleScript } from './test-support.js';
import { hangGuard } from '../testing/hang-guard.js';

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
    await vi.waitFor(() => expect(live.requests.some((request) => request.response === 'rotten apples')).toBe(true), { timeout: hangGuard(20_000) });
    serve.process.kill('SIGTERM');
    await vi.waitFor(() => expect(serve.stderr()).toContain('"msg":"draining"'), { timeout: hangGuard(20_000) });
    releaseInFlight();
    const answer = await inFlight;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ reward: 0.25 });
    expect(await serve.exited).toBe(0);
    expect(serve.lines.at(-1)).toEqual({ event: 'stopped', drained: true });
  });

  test('with --audit-judge, audits in the background, reports on /metrics and writes its log whole at shutdown', async ({ startJudge, startServe, tempDir }) => {
    const policy = await startJudge(ruleScript);
    const audit = await startJudge((request) => ({ content: binaryVerdict(!criterionMet(request.criteria[0].text, request.response ?? '')) }));
    const log = join(tempDir, 'audit.jsonl');
    const serve = await startServe(['--no-cache', '--judge', 'openai:policy', '--judge-base-url', policy.baseUrl, '--audit-judge', 'openai:audit', '--audit-base-url', audit.baseUrl, '--audit-share', '1', '--audit-log', log]);
    const answer = await fetch(`${serve.url}/v1/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ prompt: 'q', response: 'apples', rubric: fruitRubric, step: 7 }) });
    expect(await answer.json()).toMatchObject({ reward: 0.75 });
    await vi.waitFor(() => expect(audit.requests).toHaveLength(3), { timeout: hangGuard(20_000) });
    await vi.waitFor(async () => expect(await (await fetch(`${serve.url}/metrics`)).text()).toContain('rubricate_audit_step_agreement_ratio 0'), { timeout: hangGuard(20_000) });
    serve.process.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    const [line] = readFileSync(log, 'utf8').trim().split('\n').map((entry) => JSON.parse(entry) as Record<string, unknown>);
    // The audit judge says the opposite: pears (1) and rotten (−2) met, apples not: −1 ÷ 4.
    expect(line).toMatchObject({ event: 'audit', step: 7, policy_reward: 0.75, audit_reward: -0.25, criteria: 3, agreed: 0 });
  });

  test('a port already in use: exit 2 with an error naming the port and the ways out, not a bare EADDRINUSE', async ({ closeAfter }) => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    closeAfter({ close: () => new Promise<void>((resolve) => holder.close(() => resolve())) });
    const { port } = holder.address() as AddressInfo;
    const result = await runCliCaptured(['serve', '--port', String(port), '--judge', 'scripted', '--no-cache']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`error [CONFIG_INVALID]: field port: cannot listen on 127.0.0.1:${port}: port ${port} is already in use on 127.0.0.1`);
    expect(result.stderr).toContain(`--port ${port + 1}, or --port 0 for any free one`);
    expect(result.stderr.match(/EADDRINUSE/g)).toBeNull();
  });

  test('refuses audit settings without an audit judge, and model flags the audit judge does not read, by name', async () => {
    const without = await runCliCaptured(['serve', '--judge', 'none', '--audit-share', '0.5']);
    expect(without.code).toBe(2);
    expect(without.stderr).toContain('--audit-share sets the reward-hacking monitor: add --audit-judge');
    const unread = await runCliCaptured(['serve', '--judge', 'none', '--no-cache', '--audit-judge', 'anthropic:m', '--audit-threads', '2']);
    expect(unread.code).toBe(2);
    expect(unread.stderr).toContain('--audit-threads does not apply to anthropic: audit judges');
    const same = await runCliCaptured(['serve', '--judge', 'openai:m', '--judge-base-url', 'http://127.0.0.1:9/v1', '--no-cache', '--audit-judge', 'openai:m', '--audit-base-url', 'http://127.0.0.1:9/v1']);
    expect(same.code).toBe(2);
    expect(same.stderr).toContain('--audit-judge is the policy judge itself');
  });
});
