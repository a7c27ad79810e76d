/**
 * http(s) image URLs fetched at the edge, against a loopback HTTP server: redirects bounded,
 * a byte limit, a timeout, an image content type required, credentials never shown.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect } from 'vitest';
import type { RubricateError } from '../errors.js';
import { getItemImporter } from '../rubric/formats/index.js';
import type { Item } from '../rubric/schema.js';
import { solidPng } from '../testing/png.js';
import { test as base } from '../testing/vitest-fixtures.js';
import { fetchImageBytes } from './images.js';

const png = solidPng(6, 4, [0, 200, 0]);

/** `origin`: a loopback HTTP server of images, redirects and misbehaving routes (stopped after the test), as `http://127.0.0.1:PORT`. */
const test = base.extend<{ origin: string }>({
  origin: async ({ closeAfter }, use) => {
    const hung: Array<() => void> = [];
    const server = createServer((request, response) => {
      const url = request.url ?? '';
      if (url === '/green.png') return void response.writeHead(200, { 'content-type': 'image/png', 'content-length': png.length }).end(png);
      if (url.startsWith('/hop/')) {
        const left = Number(url.slice(5));
        return void response.writeHead(302, { location: left > 0 ? `/hop/${left - 1}` : '/green.png' }).end();
      }
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
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closeAfter({
      async close() {
        for (const close of hung) close();
        server.closeAllConnections();
        await new Promise((resolve) => server.close(resolve));
      },
    });
    await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  },
});

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
  test('fetches the bytes, following a bounded number of redirects', async ({ origin }) => {
    expect((await fetchImageBytes(`${origin}/green.png`, location)).equals(png)).toBe(true);
    expect((await fetchImageBytes(`${origin}/hop/2`, location)).equals(png)).toBe(true);
    const tooMany = await failure(fetchImageBytes(`${origin}/hop/5`, location, { maxRedirects: 3 }));
    expect(tooMany.message).toMatch(/redirects more than 3 times/);
    expect(tooMany.details).toMatchObject(location);
    expect((await failure(fetchImageBytes(`${origin}/to-file`, location))).message).toMatch(/redirects to a file: URL/);
  });

  test('refuses what is not an image, too large, missing or too slow, naming the field', async ({ origin }) => {
    expect((await failure(fetchImageBytes(`${origin}/page`, location))).message).toMatch(/content type text\/html, not an image/);
    expect((await failure(fetchImageBytes(`${origin}/declared-huge`, location, { maxBytes: 1000 }))).message).toMatch(/is 50000000 bytes, over the 1000-byte limit/);
    expect((await failure(fetchImageBytes(`${origin}/endless`, location, { maxBytes: 200_000 }))).message).toMatch(/over the 200000-byte limit/);
    expect((await failure(fetchImageBytes(`${origin}/nothing.png`, location))).message).toMatch(/answered HTTP 404/);
    const slow = await failure(fetchImageBytes(`${origin}/silent`, location, { timeoutMs: 300 }));
    expect(slow.message).toMatch(/no answer within 300 ms/);
    expect(slow.details).toMatchObject(location);
  });

  test('never shows the credentials of a URL in an error', async ({ origin }) => {
    const withCredentials = origin.replace('http://', 'http://agent:s3cret-pass@');
    const error = await failure(fetchImageBytes(`${withCredentials}/nothing.png?api_key=k-123456789`, location));
    expect(error.message).toMatch(/answered HTTP 404/);
    expect(error.message).not.toContain('s3cret-pass');
    expect(error.message).not.toContain('k-123456789');
    // The credentials are sent the way a browser sends them: as Basic authorization.
    expect((await fetchImageBytes(`${withCredentials}/private.png`, location)).equals(png)).toBe(true);
    expect((await failure(fetchImageBytes(`${origin}/private.png`, location))).message).toMatch(/answered HTTP 401/);
  });

  test('fetches remote images when an items file is read: the bytes are attached and hashed like any other image', async ({ origin, tempDir }) => {
    const input = path.join(tempDir, 'items.jsonl');
    const rubric = { criteria: [{ id: 'c', text: 'Shows green.' }] };
    await writeFile(input, [
      { id: 'remote', prompt: [{ role: 'user', content: [{ type: 'text', text: 'Colour?' }, { type: 'image_url', image_url: { url: `${origin}/hop/1` } }] }], response: 'Green.', rubric },
      { id: 'broken', prompt: 'p', response: [{ type: 'image_url', image_url: { url: `${origin}/page` } }], rubric },
    ].map((item) => JSON.stringify(item)).join('\n') + '\n');
    const items: Item[] = [];
    const errors: RubricateError[] = [];
    for await (const record of getItemImporter('items').read(input, {})) {
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
