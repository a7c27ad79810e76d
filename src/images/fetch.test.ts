/**
 * http(s) image URLs fetched at the edge, against loopback HTTP servers: redirects bounded,
 * a byte limit, a timeout, an image content type required, credentials never shown; and,
 * since an items file is untrusted, no URL reaches this machine or a private network (in any
 * spelling of its address, after DNS, on every redirect) without --allow-private-image-urls,
 * and only the records a run grades are fetched.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { runCliCaptured as runCliInProcess } from '../cli/in-process.js';
import { exitCodes, type RubricateError } from '../errors.js';
import { getItemImporter } from '../formats/index.js';
import type { Item } from '../rubric/schema.js';
import { solidPng } from '../testing/png.js';
import { test as base } from '../testing/vitest-fixtures.js';
import { fetchImageBytes } from './fetch.js';
import { ImageReader } from './reader.js';
import { hangGuard } from '../testing/hang-guard.js';

const png = solidPng(6, 4, [0, 200, 0]);

/** A loopback HTTP server of images, redirects and misbehaving routes: every request's path is in `hits`. */
interface ImageServer {
  /** `http://127.0.0.1:PORT` (or the address it was started on). */
  origin: string;
  port: number;
  hits: string[];
  /** Resolves when a request for `path` arrives. */
  arrival(path: string): Promise<void>;
}

async function startImageServer(host: string, closeAfter: (resource: { close(): Promise<void> }) => unknown): Promise<ImageServer> {
  const hung: Array<() => void> = [];
  const hits: string[] = [];
  const waiting = new Map<string, () => void>();
  const server: Server = createServer((request, response) => {
    const url = request.url ?? '';
    hits.push(url);
    waiting.get(url)?.();
    if (url.startsWith('/green')) return void response.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
    if (url.startsWith('/hop/')) {
      const left = Number(url.slice(5));
      return void response.writeHead(302, { location: left > 0 ? `/hop/${left - 1}` : '/green.png' }).end();
    }
    if (url.startsWith('/redirect?to=')) return void response.writeHead(302, { location: decodeURIComponent(url.slice('/redirect?to='.length)) }).end();
    if (url === '/to-file') return void response.writeHead(301, { location: 'file:///etc/passwd' }).end();
    if (url === '/private.png') {
      const expected = `Basic ${Buffer.from('agent:s3cret-pass').toString('base64')}`;
      return void (request.headers.authorization === expected ? response.writeHead(200, { 'content-type': 'image/png' }).end(png) : response.writeHead(401).end());
    }
    if (url === '/page') return void response.writeHead(200, { 'content-type': 'text/html' }).end('<html></html>');
    if (url === '/declared-huge') return void response.writeHead(200, { 'content-type': 'image/png', 'content-length': 50_000_000 }).end();
    if (url === '/endless') {
      // No length announced: the reader must stop at the limit, not buffer everything.
      response.writeHead(200, { 'content-type': 'image/png' });
      const block = Buffer.alloc(64 * 1024, 1);
      const write = () => { while (response.write(block)); };
      response.on('drain', write);
      write();
      hung.push(() => response.destroy());
      return;
    }
    if (url === '/silent') return void hung.push(() => response.destroy());
    response.writeHead(404, { 'content-type': 'text/plain' }).end('not here');
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  closeAfter({
    async close() {
      for (const close of hung) close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  });
  const port = (server.address() as AddressInfo).port;
  return { origin: `http://${host}:${port}`, port, hits, arrival: (url) => new Promise<void>((resolve) => void waiting.set(url, resolve)) };
}

const test = base.extend<{ images: ImageServer }>({
  images: async ({ closeAfter }, use) => {
    await use(await startImageServer('127.0.0.1', closeAfter));
  },
});

/** The loopback servers are private addresses: the tests of fetching as such allow them. */
const loopback = { allowPrivateAddresses: true };

async function failure(promise: Promise<unknown>): Promise<RubricateError> {
  try {
    await promise;
  } catch (error) {
    return error as RubricateError;
  }
  throw new Error('expected a failure');
}

const location = { file: 'items.jsonl', line: 3, field: 'response[0].image_url.url' };

describe('fetching http(s) image URLs', () => {
  test('fetches the bytes, following a bounded number of redirects', async ({ images: { origin } }) => {
    expect((await fetchImageBytes(`${origin}/green.png`, location, loopback)).equals(png)).toBe(true);
    expect((await fetchImageBytes(`${origin}/hop/2`, location, loopback)).equals(png)).toBe(true);
    const tooMany = await failure(fetchImageBytes(`${origin}/hop/5`, location, { ...loopback, maxRedirects: 3 }));
    expect(tooMany.message).toMatch(/redirects more than 3 times/);
    expect(tooMany.details).toMatchObject(location);
    expect((await failure(fetchImageBytes(`${origin}/to-file`, location, loopback))).message).toMatch(/redirects to a file: URL/);
  });

  test('refuses what is not an image, too large, missing or too slow, naming the field', async ({ images: { origin } }) => {
    expect((await failure(fetchImageBytes(`${origin}/page`, location, loopback))).message).toMatch(/content type text\/html, not an image/);
    expect((await failure(fetchImageBytes(`${origin}/declared-huge`, location, { ...loopback, maxBytes: 1000 }))).message).toMatch(/is 50000000 bytes, over the 1000-byte limit/);
    expect((await failure(fetchImageBytes(`${origin}/endless`, location, { ...loopback, maxBytes: 200_000 }))).message).toMatch(/over the 200000-byte limit/);
    expect((await failure(fetchImageBytes(`${origin}/nothing.png`, location, loopback))).message).toMatch(/answered HTTP 404/);
    const slow = await failure(fetchImageBytes(`${origin}/silent`, location, { ...loopback, timeoutMs: 300 }));
    expect(slow.message).toMatch(/no answer within 300 ms/);
    expect(slow.details).toMatchObject(location);
  });

  test('never shows the credentials of a URL in an error', async ({ images: { origin } }) => {
    const withCredentials = origin.replace('http://', 'http://agent:s3cret-pass@');
    const error = await failure(fetchImageBytes(`${withCredentials}/nothing.png?api_key=k-123456789`, location, loopback));
    expect(error.message).toMatch(/answered HTTP 404/);
    expect(error.message).not.toContain('s3cret-pass');
    expect(error.message).not.toContain('k-123456789');
    // The credentials are sent the way a browser sends them: as Basic authorization.
    expect((await fetchImageBytes(`${withCredentials}/private.png`, location, loopback)).equals(png)).toBe(true);
    expect((await failure(fetchImageBytes(`${origin}/private.png`, location, loopback))).message).toMatch(/answered HTTP 401/);
  });

  test('fetches remote images when an items file is read: the bytes are attached and hashed like any other image', async ({ images: { origin }, tempDir }) => {
    const input = path.join(tempDir, 'items.jsonl');
    const rubric = { criteria: [{ id: 'c', text: 'Shows green.' }] };
    await writeFile(input, [
      { id: 'remote', prompt: [{ role: 'user', content: [{ type: 'text', text: 'Colour?' }, { type: 'image_url', image_url: { url: `${origin}/hop/1` } }] }], response: 'Green.', rubric },
      { id: 'broken', prompt: 'p', response: [{ type: 'image_url', image_url: { url: `${origin}/page` } }], rubric },
    ].map((item) => JSON.stringify(item)).join('\n') + '\n');
    const items: Item[] = [];
    const errors: RubricateError[] = [];
    for await (const record of getItemImporter('items').read(input, { images: await ImageReader.open(loopback) })) {
      if (record.kind === 'item') items.push(record.item);
      else errors.push(record.error);
    }
    expect(items.map((item) => item.id)).toEqual(['remote']);
    const [image] = items[0].images!;
    expect(Buffer.from(image.data, 'base64').equals(png)).toBe(true);
    expect(image.sha256).toBe(createHash('sha256').update(png).digest('hex'));
    expect(items[0].prompt[0].content).toContain(`sha256 ${image.sha256.slice(0, 16)}`);
    expect(errors).toHaveLength(1);
    expect(errors[0].details).toMatchObject({ file: input, line: 2, field: 'response[0].image_url.url' });
    expect(errors[0].message).toMatch(/not an image/);
  });
});

const rubric = { criteria: [{ id: 'c', text: 'Shows green.' }] };
const imageItem = (id: string, url: string) => ({ id, prompt: 'Colour?', response: [{ type: 'image_url', image_url: { url } }], rubric });
function writeItems(file: string, items: unknown[]): string {
  const text = `${items.map((item) => JSON.stringify(item)).join('\n')}\n`;
  writeFileSync(file, text);
  return text;
}
const readResults = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; status: string; error?: { code: string; message: string; details?: Record<string, unknown> } });

describe('image URLs are untrusted: no private address, only the graded records', () => {
  test('every spelling of this machine, by name or by address, is refused through the CLI with no request made; --allow-private-image-urls lets it through', async ({ images, fakeJudge, tempDir }) => {
    const spellings = [
      `http://localhost:${images.port}/green-name.png`, // a name: refused after DNS resolution
      `http://127.0.0.1:${images.port}/green-dotted.png`,
      `http://2130706433:${images.port}/green-decimal.png`,
      `http://0x7f000001:${images.port}/green-hex.png`,
      `http://0177.0.0.1:${images.port}/green-octal.png`,
      `http://127.1:${images.port}/green-short.png`,
      `http://[::ffff:127.0.0.1]:${images.port}/green-mapped.png`,
      `http://0.0.0.0:${images.port}/green-unspecified.png`, // Linux connects it to this machine
      `https://[::1]:${images.port}/green-v6.png`,
    ];
    const input = path.join(tempDir, 'items.jsonl');
    const inputText = writeItems(input, spellings.map((url, index) => imageItem(`u${index}`, url)));
    const out = path.join(tempDir, 'results.jsonl');
    const judgeFlags = ['--judge', 'openai:vision', '--judge-base-url', fakeJudge.baseUrl, '--judge-api-key', 'k', '--no-cache', '--quiet'];
    const run = await runCliInProcess(['grade', '--input', input, '--out', out, ...judgeFlags]);
    expect(run.code).toBe(exitCodes.itemsFailed);
    const results = readResults(out);
    expect(results).toHaveLength(spellings.length);
    results.forEach((result, index) => {
      expect(result.status, spellings[index]).toBe('invalid');
      expect(result.error, spellings[index]).toMatchObject({ code: 'INPUT_INVALID', details: { file: input, line: index + 1, field: 'response[0].image_url.url' } });
      expect(result.error!.message, spellings[index]).toMatch(/a (loopback|unspecified) address.*refused|refused: .* a loopback address/);
    });
    expect(results[0].error!.message).toMatch(/localhost resolves to (127\.0\.0\.1|::1), a loopback address/);
    expect(images.hits).toEqual([]);
    expect(fakeJudge.requests).toHaveLength(0);
    expect(readFileSync(input, 'utf8')).toBe(inputText);

    const allowed = await runCliInProcess(['grade', '--input', input, '--out', out, '--allow-private-image-urls', ...judgeFlags]);
    expect(allowed.code).toBe(exitCodes.itemsFailed); // [::1] over https has no server behind it
    expect(readResults(out).filter((result) => result.status === 'ok').map((result) => result.id)).toEqual(['u0', 'u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7']);
    expect(new Set(images.hits)).toEqual(new Set(spellings.slice(0, 8).map((url) => new URL(url).pathname)));
  });

  test('private, shared, link-local, multicast and unspecified addresses are refused before any connection', async () => {
    const refused: Array<[string, string]> = [
      ['http://10.1.2.3/a.png', 'private'],
      ['http://172.16.0.1/a.png', 'private'],
      ['http://192.168.1.1/a.png', 'private'],
      ['http://100.64.0.1/a.png', 'shared \\(CGNAT\\)'],
      ['http://169.254.169.254/latest/meta-data/', 'link-local'],
      ['http://[fd00::1]/a.png', 'private'],
      ['http://[fe80::1]/a.png', 'link-local'],
      ['http://[::ffff:10.0.0.1]/a.png', 'private'],
      ['http://224.0.0.1/a.png', 'multicast'],
      ['http://[ff02::1]/a.png', 'multicast'],
      ['http://0/a.png', 'unspecified'],
      ['http://[::]/a.png', 'unspecified'],
    ];
    for (const [url, kind] of refused) {
      // A short timeout: an attempt to connect would end in "could not be fetched", not in a refusal.
      const error = await failure(fetchImageBytes(url, location, { timeoutMs: 200 }));
      expect(error.message, url).toMatch(new RegExp(`names [0-9a-f.:]+, a ${kind} address: refused`));
      expect(error.details, url).toMatchObject(location);
    }
  });

  test('every redirect hop is checked: a public first hop that redirects to this machine is refused there, in any spelling', async ({ images, closeAfter }) => {
    // 127.0.0.1 stands in for a public server; a second server on 127.0.0.2 for the machine's own services.
    const inner = await startImageServer('127.0.0.2', closeAfter);
    const onlyFirstHopPublic = (address: string) => (address === '127.0.0.1' ? undefined : 'loopback');
    for (const target of [`http://127.0.0.2:${inner.port}/green.png`, `http://2130706434:${inner.port}/green.png`, `http://[::ffff:127.0.0.2]:${inner.port}/green.png`]) {
      const error = await failure(fetchImageBytes(`${images.origin}/redirect?to=${encodeURIComponent(target)}`, location, { refusedAddress: onlyFirstHopPublic }));
      expect(error.message, target).toMatch(/names (127\.0\.0\.2|::ffff:7f00:2), a loopback address: refused/);
    }
    expect(images.hits).toHaveLength(3);
    expect(inner.hits).toEqual([]);
  });

  test('--shard fetches the images of its own records only, and --dry-run fetches none but says how many it would', async ({ images, fakeJudge, tempDir }) => {
    const input = path.join(tempDir, 'items.jsonl');
    writeFileSync(path.join(tempDir, 'local.png'), png);
    writeItems(input, [imageItem('a', `${images.origin}/green-a.png`), imageItem('b', `${images.origin}/green-b.png`), imageItem('c', `${images.origin}/green-c.png`), imageItem('d', 'local.png')]);
    const out = path.join(tempDir, 'results.jsonl');
    const judgeFlags = ['--judge', 'openai:gpt-4o', '--judge-base-url', fakeJudge.baseUrl, '--judge-api-key', 'k', '--quiet', '--allow-private-image-urls'];
    const shard = await runCliInProcess(['grade', '--input', input, '--out', out, '--shard', '1/3', '--no-cache', ...judgeFlags]);
    expect(shard.code).toBe(exitCodes.success);
    expect(readResults(out).map((result) => result.id)).toEqual(['b']);
    expect(images.hits).toEqual(['/green-b.png']);

    const dry = await runCliInProcess(['grade', '--input', input, '--out', path.join(tempDir, 'dry.jsonl'), '--dry-run', '--cache', path.join(tempDir, 'cache.sqlite'), ...judgeFlags]);
    expect(dry.code).toBe(exitCodes.success);
    const estimate = JSON.parse(dry.stdout) as { judge_calls: number; images: { files_read: number; urls_not_fetched: number } };
    expect(estimate.images).toEqual({ files_read: 1, urls_not_fetched: 3 });
    expect(estimate.judge_calls).toBe(4);
    expect(dry.stderr).toMatch(/1 image file\(s\) read, 3 image URL\(s\) a run would fetch \(not fetched\)/);
    expect(images.hits).toEqual(['/green-b.png']);
    expect(fakeJudge.requests).toHaveLength(1);
  });

  test('with --responses too, the image URLs of the shard\'s records are fetched, and only those', async ({ images, fakeJudge, tempDir }) => {
    const input = path.join(tempDir, 'rubrics.jsonl');
    const ids = ['a', 'b', 'c'];
    writeItems(input, ids.map((id) => ({ id, prompt: [{ role: 'user', content: [{ type: 'text', text: 'Colour?' }, { type: 'image_url', image_url: { url: `${images.origin}/green-${id}.png` } }] }], rubric })));
    const responses = path.join(tempDir, 'responses.jsonl');
    writeItems(responses, ids.map((id) => ({ id, response: 'Green.' })));
    const out = path.join(tempDir, 'results.jsonl');
    const run = await runCliInProcess(['grade', '--input', input, '--responses', responses, '--out', out, '--shard', '2/3', '--judge', 'openai:gpt-4o', '--judge-base-url', fakeJudge.baseUrl, '--judge-api-key', 'k', '--no-cache', '--quiet', '--allow-private-image-urls']);
    expect(run.code).toBe(exitCodes.success);
    expect(readResults(out).map((result) => result.id)).toEqual(['c']);
    expect(images.hits).toEqual(['/green-c.png']);
  });

  test('Ctrl-C during an image fetch that never answers stops the run at once (exit 130), writing nothing for that record', { timeout: hangGuard(10_000) }, async ({ images, fakeJudge, tempDir }) => {
    const input = path.join(tempDir, 'items.jsonl');
    writeItems(input, [imageItem('silent', `${images.origin}/silent`)]);
    const out = path.join(tempDir, 'results.jsonl');
    const stop = new AbortController();
    // The first Ctrl-C arrives once the fetch is under way; the fetch's own timeout is 30 s, beyond this test's bound.
    void images.arrival('/silent').then(() => stop.abort(new Error('interrupted')));
    const run = await runCliInProcess(['grade', '--input', input, '--out', out, '--judge', 'openai:gpt-4o', '--judge-base-url', fakeJudge.baseUrl, '--judge-api-key', 'k', '--no-cache', '--quiet', '--allow-private-image-urls'], stop.signal);
    expect(run.code).toBe(exitCodes.interrupted);
    expect(images.hits).toEqual(['/silent']);
    expect(readFileSync(out, 'utf8')).toBe('');
    expect(fakeJudge.requests).toHaveLength(0);
  });
});
