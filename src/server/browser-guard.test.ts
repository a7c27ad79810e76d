/**
 * The browser attack surface of the reward server: cross-site "simple" POSTs (text/plain, form
 * encodings, untyped bodies), foreign Host and Origin headers (cross-site pages, DNS rebinding),
 * an open server beyond loopback, and garbage in the verdicts that retire evolving criteria.
 * Both through app.request() and through the real server on a loopback port.
 */
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { createRubricEvolver } from '../generation/evolver.js';
import { createServerApp } from './app.js';
import { hostnameOf } from './browser-guard.js';
import { isJsonContentType } from './content-type.js';
import { startServer } from './start.js';
import { fruitRubric, startTestServer } from './test-support.js';
import { test } from '../testing/vitest-fixtures.js';

const item = { prompt: 'Name some fruit.', response: 'apples and pears', rubric: fruitRubric };

function rawRequest(url: string, options: { method?: string; headers?: Record<string, string>; body?: string }): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method ?? 'GET', headers: options.headers }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
    });
    request.on('error', reject);
    request.end(options.body);
  });
}

describe('content types', () => {
  test('refuses cross-site simple bodies (text/plain, form, untyped) with 415 before any judge call', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    for (const contentType of ['text/plain', 'text/plain;charset=UTF-8', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', undefined]) {
      const response = await server.app.request('/v1/score', { method: 'POST', headers: contentType ? { 'content-type': contentType } : {}, body: JSON.stringify(item) });
      expect(response.status, String(contentType)).toBe(415);
      expect(await response.json()).toMatchObject({ error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
    }
    // The trainer adapters read their bodies the same way.
    for (const path of ['/get_reward', '/slime/reward', '/reward']) {
      expect((await server.app.request(path, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' })).status, path).toBe(415);
    }
    expect(server.fake.requests).toHaveLength(0);
    const accepted = await server.post('/v1/score', item, { 'content-type': 'application/json; charset=utf-8' });
    expect(accepted.status).toBe(200);
    expect(isJsonContentType('application/vnd.api+json')).toBe(true);
    expect(isJsonContentType('text/json')).toBe(false);
  });
});

describe('Host and Origin', () => {
  test('a loopback server accepts loopback names and no Origin, and refuses foreign Hosts and Origins with 403', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const post = (headers: Record<string, string>) => server.post('/v1/score', item, headers);
    expect((await post({})).status).toBe(200);
    expect((await post({ host: '127.0.0.1:8000' })).status).toBe(200);
    expect((await post({ host: '[::1]:8000' })).status).toBe(200);
    expect((await post({ host: 'localhost:8000', origin: 'http://localhost:8000' })).status).toBe(200);
    const rebound = await post({ host: 'attacker.example:8000' });
    expect(rebound.status).toBe(403);
    expect((await rebound.json()).error).toMatchObject({ code: 'FORBIDDEN_ORIGIN', message: expect.stringContaining('--allow-origin') });
    const crossSite = await post({ origin: 'https://attacker.example' });
    expect(crossSite.status).toBe(403);
    expect((await post({ origin: 'null' })).status).toBe(403);
    // Even the probes: a rebound page must not read the server's state.
    expect((await server.app.request('/healthz', { headers: { host: 'attacker.example' } })).status).toBe(403);
    const judgeCalls = server.fake.requests.length;
    expect(judgeCalls).toBe(4 * 3);
  });

  test('--allow-origin lets a named origin or host through', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const app = createServerApp({ service: server.service, allowOrigins: ['https://trainer.example', 'rewards.internal'] });
    const post = (headers: Record<string, string>) => app.request('/v1/score', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(item) });
    expect((await post({ origin: 'https://trainer.example' })).status).toBe(200);
    expect((await post({ host: 'rewards.internal:8000' })).status).toBe(200);
    expect((await post({ origin: 'https://other.example' })).status).toBe(403);
    expect(() => createServerApp({ service: server.service, allowOrigins: ['http://['] })).toThrow(/allow-origin/);
  });

  test('a server bound to every interface checks that an Origin matches its Host', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const app = createServerApp({ service: server.service, bindHost: '0.0.0.0' });
    const post = (headers: Record<string, string>) => app.request('/v1/score', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(item) });
    expect((await post({ host: '10.1.2.3:8000' })).status).toBe(200);
    expect((await post({ host: '10.1.2.3:8000', origin: 'http://10.1.2.3:8000' })).status).toBe(200);
    expect((await post({ host: '10.1.2.3:8000', origin: 'https://attacker.example' })).status).toBe(403);
  });

  it('parses Host headers', () => {
    expect(hostnameOf('LocalHost:80')).toBe('localhost');
    expect(hostnameOf('[::1]:8000')).toBe('::1');
    expect(hostnameOf('example.com')).toBe('example.com');
  });
});

describe('the real server', () => {
  test('refuses a cross-site text/plain POST and a rebound Host on the wire, and serves a JSON client', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const running = await startServer({ service: server.service, port: 0 });
    try {
      const text = await rawRequest(`${running.url}/v1/score`, { method: 'POST', headers: { 'content-type': 'text/plain', origin: `${running.url}` }, body: JSON.stringify(item) });
      expect(text.status).toBe(415);
      // DNS rebinding under names that merely begin like loopback ones.
      for (const host of [`attacker.example:${running.port}`, `127.0.0.1.attacker.example:${running.port}`, `localhost.attacker.example:${running.port}`, `127.0.0.1.nip.io`]) {
        const rebound = await rawRequest(`${running.url}/v1/score`, { method: 'POST', headers: { 'content-type': 'application/json', host }, body: JSON.stringify(item) });
        expect(rebound.status, host).toBe(403);
      }
      const crossSite = await rawRequest(`${running.url}/v1/score`, { method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://attacker.example' }, body: JSON.stringify(item) });
      expect(crossSite.status).toBe(403);
      expect(server.fake.requests).toHaveLength(0);
      const ok = await rawRequest(`${running.url}/v1/score`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(item) });
      expect(ok.status).toBe(200);
      expect(JSON.parse(ok.body).reward).toBe(1);
      // Every loopback name is this server: localhost and the names under it, 127.0.0.0/8, [::1].
      for (const host of [`localhost:${running.port}`, `trainer.localhost:${running.port}`, `127.0.0.2:${running.port}`, `[::1]:${running.port}`]) {
        const loopback = await rawRequest(`${running.url}/v1/score`, { method: 'POST', headers: { 'content-type': 'application/json', host }, body: JSON.stringify(item) });
        expect(loopback.status, host).toBe(200);
      }
    } finally {
      await running.close({ drainTimeoutMs: 2_000 });
    }
  });

  test('warns loudly when bound beyond loopback without a token, and not with one', async ({ closeAfter }) => {
    const server = closeAfter(await startTestServer());
    const warnings: string[] = [];
    const open = await startServer({ service: server.service, port: 0, host: '0.0.0.0', onWarning: (message) => warnings.push(message) });
    await open.close({ drainTimeoutMs: 1_000 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/WARNING: rubricate serve is listening on 0\.0\.0\.0:\d+ WITHOUT a token/);
    const closed = await startServer({ service: server.service, port: 0, host: '0.0.0.0', token: 'tok-123456', onWarning: (message) => warnings.push(message) });
    await closed.close({ drainTimeoutMs: 1_000 });
    const loopback = await startServer({ service: server.service, port: 0, onWarning: (message) => warnings.push(message) });
    await loopback.close({ drainTimeoutMs: 1_000 });
    expect(warnings).toHaveLength(1);
  });
});

describe('POST /v1/rubrics/:id/observe', () => {
  test('refuses verdicts that are not verdicts, naming the field, and changes nothing', async ({ closeAfter, connectJudge }) => {
    const server = closeAfter(await startTestServer());
    const generator = connectJudge(server.fake, { model: 'writer' });
    const evolver = closeAfter(createRubricEvolver({ generator, store: ':memory:', topK: 2 }));
    const app = createServerApp({ service: server.service, evolver });
    const call = async (method: string, path: string, body: unknown) => {
      const response = await app.request(path, { method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as { error?: { code: string; message: string } } & Record<string, unknown> };
    };
    expect((await call('PUT', '/v1/rubrics/q1/persistent', { prompt: 'p', rubric: { criteria: [{ id: 'hello', text: 'says hello', points: 1 }] } })).status).toBe(200);
    const cases: Array<[unknown, string]> = [
      [{ results: [{ criteria: [{ id: { $ne: 1 }, met: 'yes' }] }] }, 'results[0].criteria[0].id'],
      [{ results: [{ criteria: [{ id: 'hello', met: 'yes' }] }] }, 'results[0].criteria[0].met'],
      [{ results: [{ criteria: [{ id: 'hello', met: true, value: '1' }] }] }, 'results[0].criteria[0].value'],
      [{ results: [{ criteria: [{ id: 'hello', met: true, status: 'fine' }] }] }, 'results[0].criteria[0].status'],
      [{ results: [{ criteria: ['hello'] }] }, 'results[0].criteria[0]'],
      [{ results: [{ criteria: { id: 'hello' } }] }, 'results[0].criteria'],
      [{ results: 'all good' }, 'results'],
    ];
    for (const [body, field] of cases) {
      const answer = await call('POST', '/v1/rubrics/q1/observe', body);
      expect(answer.status, field).toBe(400);
      expect(answer.body.error?.code).toBe('INPUT_INVALID');
      expect(answer.body.error?.message, field).toContain(`field ${field}`);
    }
    expect((await evolver.history('q1')).filter((event) => event.event !== 'persistent')).toHaveLength(0);
    // A results line as written by grade fits as it is.
    const good = await call('POST', '/v1/rubrics/q1/observe', { results: [{ criteria: [{ id: 'hello', text: 'says hello', points: 1, met: true, status: 'ok' }] }, { criteria: [{ id: 'hello', met: false }] }] });
    expect(good.status).toBe(200);
    expect(good.body.variances).toEqual({ hello: 0.25 });
  });
});
