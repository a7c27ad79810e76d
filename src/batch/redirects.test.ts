import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect } from 'vitest';
import { RubricateError } from '../errors.js';
import { test } from '../testing/vitest-fixtures.js';
import { fetchWithoutCrossOriginCredentials } from './redirects.js';

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** A loopback server that records each request and answers what `answer` says. */
async function server(closeAfter: <T extends { close(): Promise<void> }>(value: T) => T, answer: (request: Seen) => { status: number; headers?: Record<string, string>; body?: string }) {
  const seen: Seen[] = [];
  const listening = http.createServer((incoming, outgoing) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const request = { method: incoming.method ?? '', url: incoming.url ?? '', headers: incoming.headers, body: Buffer.concat(chunks).toString('utf8') };
      seen.push(request);
      const reply = answer(request);
      outgoing.writeHead(reply.status, reply.headers).end(reply.body ?? '');
    });
  });
  await new Promise<void>((resolve) => listening.listen(0, '127.0.0.1', resolve));
  closeAfter({ close: () => new Promise<void>((resolve) => listening.close(() => resolve())) });
  return { url: `http://127.0.0.1:${(listening.address() as AddressInfo).port}`, seen };
}

const credentials = { authorization: 'Bearer sk-secret', 'x-api-key': 'ak-secret', 'api-key': 'az-secret', 'x-gateway': 'gw-secret' };

describe('batch API redirects', () => {
  test('same origin keeps every header; another origin gets none of them on a GET', async ({ closeAfter }) => {
    const other = await server(closeAfter, () => ({ status: 200, body: 'results' }));
    const api = await server(closeAfter, (request) =>
      request.url === '/start' ? { status: 302, headers: { location: '/moved' } } : { status: 307, headers: { location: `${other.url}/signed?sig=abc` } },
    );
    const response = await fetchWithoutCrossOriginCredentials(`${api.url}/start`, { method: 'GET', headers: credentials }, api.url);
    expect(await response.text()).toBe('results');
    expect(api.seen.map((request) => [request.url, request.headers['x-api-key'], request.headers['api-key'], request.headers['x-gateway']])).toEqual([
      ['/start', 'ak-secret', 'az-secret', 'gw-secret'],
      ['/moved', 'ak-secret', 'az-secret', 'gw-secret'],
    ]);
    expect(other.seen).toHaveLength(1);
    for (const name of Object.keys(credentials)) expect(other.seen[0].headers[name]).toBeUndefined();
    expect(JSON.stringify(other.seen[0].headers)).not.toMatch(/secret/);
  });

  test('a call with a body redirected to another origin is refused, and the other origin gets nothing', async ({ closeAfter }) => {
    const other = await server(closeAfter, () => ({ status: 200, body: '{}' }));
    const api = await server(closeAfter, () => ({ status: 307, headers: { location: `${other.url}/files` } }));
    const refused = await fetchWithoutCrossOriginCredentials(`${api.url}/files`, { method: 'POST', headers: credentials, body: 'prompts' }, api.url).catch((error: unknown) => error);
    expect(RubricateError.isInstance(refused) && [refused.code, refused.message]).toEqual(['JUDGE_SERVER_ERROR', expect.stringMatching(/^batch API redirect refused: a POST to another origin/)]);
    expect(other.seen).toHaveLength(0);
  });

  test('a 303 after a POST becomes a GET without the body; more than 5 redirects are refused', async ({ closeAfter }) => {
    const api = await server(closeAfter, (request) => (request.url === '/create' ? { status: 303, headers: { location: '/batch' } } : { status: 200, body: request.method }));
    const response = await fetchWithoutCrossOriginCredentials(`${api.url}/create`, { method: 'POST', headers: credentials, body: 'x' }, api.url);
    expect(await response.text()).toBe('GET');
    expect(api.seen[1].body).toBe('');

    let hops = 0;
    const loop = await server(closeAfter, () => ({ status: 302, headers: { location: `/hop-${++hops}` } }));
    const refused = await fetchWithoutCrossOriginCredentials(`${loop.url}/start`, { method: 'GET', headers: {} }, loop.url).catch((error: unknown) => error);
    expect(RubricateError.isInstance(refused) && refused.message).toMatch(/more than 5 redirects/);
    expect(loop.seen).toHaveLength(6);
  });
});
