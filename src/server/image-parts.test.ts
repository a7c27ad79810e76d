/**
 * `serve` takes image parts as data URLs only (docs/agents-and-images.md). Anything else a
 * posted item names (a path, a `file:` URL, an http(s) URL) is one and the same 400, whatever
 * it names: the server never reads its own disk or fetches for a caller, so the answer tells
 * nothing about the server's files, and a FIFO or `/dev/urandom` cannot stall it.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect } from 'vitest';
import { solidPng } from '../testing/png.js';
import { test } from '../testing/vitest-fixtures.js';
import { fruitRubric, startTestServer } from './test-support.js';

const png = solidPng(4, 4, [200, 0, 0]);

describe('image parts posted to serve', () => {
  test('a path, a file: URL or an http(s) URL is one generic 400, with no judge call, no fetch and no file opened', async ({ closeAfter, tempDir }) => {
    const server = closeAfter(await startTestServer());
    const picture = path.join(tempDir, 'picture.png');
    writeFileSync(picture, png);
    mkdirSync(path.join(tempDir, 'folder'));
    const fifo = path.join(tempDir, 'pipe.png');
    execFileSync('mkfifo', [fifo]);
    const named = [
      picture, // a readable PNG the server could have sent to the judge
      pathToFileURL(picture).href,
      'package.json', // relative to the server's working directory
      path.join(tempDir, 'missing.png'),
      path.join(tempDir, 'folder'),
      fifo, // opening it for reading would block
      '/dev/urandom', // reading it never ends
      `${server.fake.baseUrl}/picture.png`, // the loopback judge counts every request it gets
    ];
    const messages = new Set<string>();
    // Each answer is checked as it comes, so a server that would read the next one is stopped at the first that it did read.
    for (const url of named) {
      const response = await server.post('/v1/score', { id: 'i', prompt: 'Draw a red square.', response: [{ type: 'image_url', image_url: { url } }], rubric: fruitRubric });
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(response.status, url).toBe(400);
      expect(body.error.code, url).toBe('INPUT_INVALID');
      // A single item's answer names the field in its message, as every 400 of /v1/score does.
      expect(body.error.message, url).toContain('field response[0].image_url.url:');
      messages.add(body.error.message);
    }
    // One message for all: nothing tells a missing file from a folder, a device or a readable image.
    expect(messages.size).toBe(1);
    expect([...messages][0]).toMatch(/only data URLs are accepted/);
    // In a batch, the refused item carries the code and field; the others are graded.
    const batch = await (await server.post('/v1/score/batch', { items: [{ id: 'ok', prompt: 'p', response: 'apples', rubric: fruitRubric }, { id: 'path', prompt: 'p', response: [{ type: 'image_url', image_url: { url: picture } }], rubric: fruitRubric }], on_invalid: 'fail_item' })).json();
    expect(batch.results[1].error).toMatchObject({ code: 'INPUT_INVALID', details: { field: 'items[1].response[0].image_url.url' } });
    expect(batch.results[1].error.message).toMatch(/only data URLs are accepted/);
    // Only the text item reached the judge (one call per criterion): nothing was sent for the refused ones.
    expect(server.fake.requests.map((request) => request.response)).toEqual(fruitRubric.criteria.map(() => 'apples'));
    // The event loop was never blocked: the server still answers, and still grades a data URL.
    expect((await server.app.request('/healthz')).status).toBe(200);
    const dataUrl = await server.post('/v1/score', { id: 'd', prompt: 'p', response: [{ type: 'text', text: 'apples' }, { type: 'image_url', image_url: { url: `data:image/png;base64,${png.toString('base64')}` } }], rubric: fruitRubric });
    expect(dataUrl.status).toBe(200);
  });
});
