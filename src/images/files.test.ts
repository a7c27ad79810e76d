/**
 * Image paths in an items file are untrusted input: through the CLI, as a user runs it, a
 * path may name only a regular file inside the input file's folder (or an `--image-root`),
 * checked after `..` and symlinks are resolved. Everything else is a per-record error naming
 * file, line and field, the judge never sees those bytes, and nothing is ever blocked on.
 */
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect } from 'vitest';
import { runCliCaptured as runCliInProcess } from '../cli/in-process.js';
import { exitCodes } from '../errors.js';
import type { FakeJudge } from '../testing/fake-judge.js';
import { solidPng } from '../testing/png.js';
import { test } from '../testing/vitest-fixtures.js';

const inside = solidPng(4, 4, [0, 160, 0]);
const secret = solidPng(5, 5, [160, 0, 0]);
const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const rubric = { criteria: [{ id: 'c', text: 'Shows a square.' }] };
const imageItem = (id: string, url: string) => ({ id, prompt: 'Draw a square.', response: [{ type: 'image_url', image_url: { url } }], rubric });

/** The sha256 of every image the judge received, from the data URLs of its requests' image_url parts. */
function imagesSent(fake: FakeJudge): string[] {
  const hashes: string[] = [];
  for (const request of fake.requests) {
    for (const message of (request.body.messages ?? []) as Array<{ content: unknown }>) {
      if (!Array.isArray(message.content)) continue;
      for (const part of message.content as Array<{ type: string; image_url?: { url: string } }>) {
        if (part.type === 'image_url') hashes.push(sha(Buffer.from(part.image_url!.url.replace(/^data:[^,]*,/, ''), 'base64')));
      }
    }
  }
  return hashes;
}

interface Layout {
  folder: string;
  input: string;
  outsideFolder: string;
  outside: string;
}

/** An input folder holding `inside.png`, and beside it a folder whose `secret.png` the items must not reach. */
function layout(tempDir: string): Layout {
  const folder = path.join(tempDir, 'items');
  const outsideFolder = path.join(tempDir, 'private');
  mkdirSync(folder);
  mkdirSync(outsideFolder);
  writeFileSync(path.join(folder, 'inside.png'), inside);
  const outside = path.join(outsideFolder, 'secret.png');
  writeFileSync(outside, secret);
  return { folder, input: path.join(folder, 'items.jsonl'), outsideFolder, outside };
}

function writeItems(file: string, items: unknown[]): string {
  const text = `${items.map((item) => JSON.stringify(item)).join('\n')}\n`;
  writeFileSync(file, text);
  return text;
}

const readResults = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; status: string; error?: { code: string; message: string; details?: Record<string, unknown> } });

describe('image files an items file names', () => {
  test('only inside the input file\'s folder: "..", absolute paths, file: URLs and symlinks that lead out are refused per record, unread', async ({ fakeJudge, tempDir, closeAfter }) => {
    const { folder, input, outside } = layout(tempDir);
    symlinkSync(outside, path.join(folder, 'link.png'));
    mkdirSync(path.join(folder, 'sub'));
    mkdirSync(path.join(folder, 'album'));
    // A FIFO with a writer waiting: a reader that opened it would get an image and carry on; one that is refused never opens it.
    const fifo = path.join(folder, 'pipe.png');
    execFileSync('mkfifo', [fifo]);
    const writer = spawn('sh', ['-c', 'cat "$0" > "$1"', outside, fifo], { stdio: 'ignore' });
    closeAfter({ close: async () => void writer.kill('SIGKILL') });
    const inputText = writeItems(input, [
      imageItem('inside', 'sub/../inside.png'),
      imageItem('dot-dot', '../private/secret.png'),
      imageItem('absolute', outside),
      imageItem('file-url', pathToFileURL(outside).href),
      imageItem('symlink', 'link.png'),
      imageItem('fifo', 'pipe.png'),
      imageItem('folder', 'album'),
    ]);
    const out = path.join(tempDir, 'results.jsonl');
    const run = await runCliInProcess(['grade', '--input', input, '--out', out, '--judge', 'openai:vision', '--judge-base-url', fakeJudge.baseUrl, '--judge-api-key', 'k', '--no-cache', '--quiet']);
    expect(run.code).toBe(exitCodes.itemsFailed);
    const results = Object.fromEntries(readResults(out).map((result) => [result.id, result]));
    expect(results.inside.status).toBe('ok');
    const refused = { 'dot-dot': 2, absolute: 3, 'file-url': 4, symlink: 5 } as const;
    for (const [id, line] of Object.entries(refused)) {
      expect(results[id].status, id).toBe('invalid');
      expect(results[id].error, id).toMatchObject({ code: 'INPUT_INVALID', details: { file: input, line, field: 'response[0].image_url.url' } });
      expect(results[id].error!.message, id).toMatch(/is outside the input file's folder: refused/);
      expect(run.stderr).toContain(`${input}:${line} field response[0].image_url.url`);
    }
    for (const [id, line] of [['fifo', 6], ['folder', 7]] as const) {
      expect(results[id].error, id).toMatchObject({ code: 'INPUT_INVALID', details: { file: input, line, field: 'response[0].image_url.url' } });
      expect(results[id].error!.message, id).toMatch(/is not a regular file \(a folder, FIFO or device\): refused/);
    }
    // The judge saw the inside image once, and never the secret one.
    expect(imagesSent(fakeJudge)).toEqual([sha(inside)]);
    expect(readFileSync(input, 'utf8')).toBe(inputText);
    expect(readFileSync(outside).equals(secret)).toBe(true);
  });

  test('--image-root widens the folders, still to regular files only (a device is refused without being read)', async ({ fakeJudge, tempDir }) => {
    const { input, outside, outsideFolder } = layout(tempDir);
    writeItems(input, [imageItem('secret', outside), imageItem('device', '/dev/zero')]);
    const out = path.join(tempDir, 'results.jsonl');
    const run = await runCliInProcess(['grade', '--input', input, '--out', out, '--image-root', outsideFolder, '--image-root', '/dev', '--judge', 'openai:vision', '--judge-base-url', fakeJudge.baseUrl, '--judge-api-key', 'k', '--no-cache', '--quiet']);
    expect(run.code).toBe(exitCodes.itemsFailed);
    const results = Object.fromEntries(readResults(out).map((result) => [result.id, result]));
    expect(results.secret.status).toBe('ok');
    expect(results.device.error).toMatchObject({ code: 'INPUT_INVALID', details: { file: input, line: 2, field: 'response[0].image_url.url' } });
    expect(results.device.error!.message).toMatch(/not a regular file/);
    expect(imagesSent(fakeJudge)).toEqual([sha(secret)]);

    const missing = await runCliInProcess(['grade', '--input', input, '--out', out, '--image-root', path.join(tempDir, 'nowhere'), '--judge', 'none', '--quiet']);
    expect(missing.code).toBe(exitCodes.usage);
    expect(missing.stderr).toMatch(/CONFIG_INVALID.*--image-root ".*nowhere" is not a folder/s);
  });

  test('an image over the size bound is refused from its size, before it is read', async ({ fakeJudge, tempDir }) => {
    const { folder, input } = layout(tempDir);
    const huge = path.join(folder, 'huge.png');
    // Sparse: 21 MB on paper, no blocks written.
    writeFileSync(huge, '');
    truncateSync(huge, 21 * 1024 * 1024);
    writeItems(input, [imageItem('huge', 'huge.png')]);
    const out = path.join(tempDir, 'results.jsonl');
    const run = await runCliInProcess(['grade', '--input', input, '--out', out, '--judge', 'openai:vision', '--judge-base-url', fakeJudge.baseUrl, '--judge-api-key', 'k', '--no-cache', '--quiet']);
    expect(run.code).toBe(exitCodes.itemsFailed);
    const [result] = readResults(out);
    expect(result.error).toMatchObject({ code: 'INPUT_INVALID', details: { line: 1, field: 'response[0].image_url.url' } });
    expect(result.error!.message).toMatch(/image file "huge.png" is 22020096 bytes, over the 20971520-byte limit/);
    expect(fakeJudge.requests).toHaveLength(0);
  });
});
