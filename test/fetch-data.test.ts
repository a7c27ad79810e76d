/**
 * `npm run data:fetch` (scripts/fetch_data.py) against a loopback server standing in for GitHub:
 * each file is taken from its repository, commit and path, checked against its git blob id,
 * rebuilt as SOURCES.md derives it, checked against the sha256 the tests expect, and written
 * outside the repository; a file already there is not fetched again, a tampered one is refused.
 * The real manifest is checked against ../shared/data/SOURCES.md and the data where present.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { dataDirectory, haveData } from '../src/testing/data.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const script = join(projectRoot, 'scripts/fetch_data.py');
const gitBlobId = (data: Buffer) => createHash('sha1').update(`blob ${data.length}\0`).update(data).digest('hex');
const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');

/** The published files, by URL path (/REPO/COMMIT/PATH). */
const published: Record<string, string> = {
  '/owner/verbatim/c1/data/pairs.json': '[{"input": "q", "output_1": "a", "output_2": "b", "label": 1}]\n',
  '/owner/bench/c2/data/judge_responses.jsonl': '{"prompt_id": "p1", "prompt": [{"role": "user", "content": "Fièvre?"}], "rubrics": [], "score": 0.5}\n{"prompt_id": "p2", "prompt": [], "rubrics": [{"points": 5.0}], "score": 1}\n',
  '/owner/bench/c2/data/responses.jsonl': '{"prompt": "Write a poem with one placeholder."}\n{"prompt": "Shrines: at least one placeholder, please."}\n',
  '/owner/export/c3/sample 100.csv': `prompt,rubrics\n"Hi","array([{'criterion': 'Says hi', 'points': 2}], dtype=object)"\n`,
};

/** What the tests read from each, as the derivations write it. */
const expected: Record<string, string> = {
  'sets/pairs.json': published['/owner/verbatim/c1/data/pairs.json'],
  'sets/first.jsonl': '{"prompt_id": "p1", "prompt": [{"role": "user", "content": "Fièvre?"}], "rubrics": []}\n{"prompt_id": "p2", "prompt": [], "rubrics": [{"points": 5.0}]}\n',
  'sets/fixed.jsonl': '{"prompt": "Write a poem with one placeholder."}\n{"prompt": "Shrines: at least 3 placeholders, please."}\n',
  'sets/export.jsonl': '{"prompt": "Hi", "rubrics": [{"criterion": "Says hi", "points": 2}]}\n',
  'sets/export.csv': published['/owner/export/c3/sample 100.csv'],
};

function entry(file: string, url: string, derive?: Record<string, unknown>) {
  const [, owner, repo, commit, ...path] = url.split('/');
  return { file, repo: `${owner}/${repo}`, commit, path: path.join('/'), blob: gitBlobId(Buffer.from(published[url])), source_bytes: Buffer.byteLength(published[url]), bytes: Buffer.byteLength(expected[file]), sha256: sha256(expected[file]), ...(derive ? { derive } : {}) };
}

const manifest = {
  url: 'https://raw.githubusercontent.com/{repo}/{commit}/{path}',
  files: [
    entry('sets/pairs.json', '/owner/verbatim/c1/data/pairs.json'),
    entry('sets/first.jsonl', '/owner/bench/c2/data/judge_responses.jsonl', { kind: 'keep-keys', keys: ['prompt_id', 'prompt', 'rubrics'] }),
    entry('sets/fixed.jsonl', '/owner/bench/c2/data/responses.jsonl', { kind: 'replace-in-line', line_starts_with: '{"prompt": "Shrines', old: 'at least one placeholder', new: 'at least 3 placeholders' }),
    entry('sets/export.jsonl', '/owner/export/c3/sample 100.csv', { kind: 'csv-to-jsonl', columns: ['prompt', 'rubrics'], literal: ['rubrics'] }),
    entry('sets/export.csv', '/owner/export/c3/sample 100.csv'),
  ],
};

/** A path that streams bytes without end (no Content-Length) until the client hangs up; `sent` counts them. */
const endless = '/owner/endless/c9/huge.bin';

async function servePublished(files: Record<string, string>) {
  const requested: string[] = [];
  const stream = { sent: 0, hungUp: false };
  const server = http.createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    requested.push(path);
    if (path === endless) {
      response.writeHead(200, { 'content-type': 'application/octet-stream' });
      const chunk = Buffer.alloc(1 << 16, 120);
      const pump = () => {
        while (!response.destroyed && response.write(chunk)) stream.sent += chunk.length;
      };
      response.on('drain', pump);
      response.on('close', () => (stream.hungUp = true));
      pump();
      return;
    }
    if (files[path] === undefined) return void response.writeHead(404).end('not found');
    response.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': Buffer.byteLength(files[path]) }).end(files[path]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requested,
    stream,
    close: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

function runScript(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('python3', [script, ...args], { cwd: projectRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const realManifest = JSON.parse(readFileSync(join(projectRoot, 'scripts/data-sources.json'), 'utf8')) as { files: Array<{ file: string; blob: string; commit: string; sha256: string; bytes: number; source_bytes: number; derive?: unknown }> };
const sourcesFile = join(dataDirectory(), 'SOURCES.md');
const haveSources = haveData(sourcesFile, 'the data manifest check against SOURCES.md (test/fetch-data.test.ts)');

describe('npm run data:fetch', { timeout: hangGuard(60_000) }, () => {
  test('fetches, checks and rebuilds each file into the data folder, once', async ({ tempDir, closeAfter }) => {
    const server = await servePublished(published);
    closeAfter(server);
    const manifestFile = join(tempDir, 'sources.json');
    writeFileSync(manifestFile, JSON.stringify(manifest));
    const data = join(tempDir, 'data');
    const first = await runScript(['--manifest', manifestFile, '--base-url', server.url, '--data-dir', data]);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    for (const [file, text] of Object.entries(expected)) expect(readFileSync(join(data, file), 'utf8'), file).toBe(text);
    expect(first.stdout).toContain('5 of 5 files ready');
    // The CSV both files come from was downloaded once.
    expect(server.requested.filter((path) => path.endsWith('sample 100.csv'))).toHaveLength(1);

    server.requested.length = 0;
    const again = await runScript(['--manifest', manifestFile, '--base-url', server.url, '--data-dir', data]);
    expect(again.code).toBe(0);
    expect(again.stdout.match(/^ {2}present {2}/gm)).toHaveLength(5);
    expect(server.requested).toEqual([]);
  });

  test('a published file that is not the one named is refused and not written; the others are fetched', async ({ tempDir, closeAfter }) => {
    const server = await servePublished({ ...published, '/owner/verbatim/c1/data/pairs.json': '[{"input": "tampered"}]\n' });
    closeAfter(server);
    const manifestFile = join(tempDir, 'sources.json');
    writeFileSync(manifestFile, JSON.stringify(manifest));
    const data = join(tempDir, 'data');
    const result = await runScript(['--manifest', manifestFile, '--base-url', server.url, '--data-dir', data]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/FAILED {3}sets\/pairs\.json from .*: the published file is not the one named \(git blob [0-9a-f]{40}, expected [0-9a-f]{40}\)/);
    expect(result.stdout).toContain('4 of 5 files ready; 1 failed');
    expect(existsSync(join(data, 'sets/pairs.json'))).toBe(false);
    expect(readFileSync(join(data, 'sets/first.jsonl'), 'utf8')).toBe(expected['sets/first.jsonl']);
  });

  test('a hostile manifest writes nothing outside the data folder: absolute paths, .. segments and links are refused', async ({ tempDir, closeAfter }) => {
    const server = await servePublished(published);
    closeAfter(server);
    const data = join(tempDir, 'data');
    const outside = join(tempDir, 'outside');
    mkdirSync(outside);
    mkdirSync(data);
    // A folder of the data that is a link to another place: writing through it would land outside.
    symlinkSync(outside, join(data, 'linked'));
    const good = manifest.files[0];
    const hostile = ['../escape.json', 'sets/../../escape.json', join(outside, 'absolute.json'), 'linked/through.json', './sets/dot.json', 'sets//empty.json', 'sets\\back.json'];
    const manifestFile = join(tempDir, 'sources.json');
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, files: [...hostile.map((file) => ({ ...good, file })), good] }));
    const result = await runScript(['--manifest', manifestFile, '--base-url', server.url, '--data-dir', data]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(`1 of ${hostile.length + 1} files ready; ${hostile.length} failed`);
    for (const file of hostile) expect(result.stdout).toContain(`FAILED   ${file} from`);
    expect(result.stdout).toMatch(/\.\.\/escape\.json from .*: a path with an empty, '\.' or '\.\.' segment/);
    expect(result.stdout).toMatch(/absolute\.json from .*: an absolute path/);
    expect(result.stdout).toMatch(/linked\/through\.json from .*: linked is a symbolic link/);
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(join(tempDir, 'escape.json'))).toBe(false);
    expect(readFileSync(join(data, good.file), 'utf8')).toBe(expected[good.file]);
    // Nothing half-written is left: every file of the folder is one the manifest names (or the link).
    expect(readdirSync(data).sort()).toEqual(['linked', 'sets']);
    expect(readdirSync(join(data, 'sets'))).toEqual(['pairs.json']);
  });

  test('a download is stopped as soon as it exceeds the size the manifest declares, and one without a declared size is not made', async ({ tempDir, closeAfter }) => {
    const server = await servePublished(published);
    closeAfter(server);
    const data = join(tempDir, 'data');
    const good = manifest.files[0];
    const [, owner, repo, commit, ...path] = endless.split('/');
    const huge = { ...good, file: 'sets/huge.bin', repo: `${owner}/${repo}`, commit, path: path.join('/'), source_bytes: 1_000_000 };
    // The announced length alone is enough to refuse: nothing is read.
    const announced = { ...good, file: 'sets/announced.json', source_bytes: Buffer.byteLength(published['/owner/verbatim/c1/data/pairs.json']) - 1 };
    const { source_bytes: _size, ...undeclared } = { ...good, file: 'sets/undeclared.json' };
    const manifestFile = join(tempDir, 'sources.json');
    writeFileSync(manifestFile, JSON.stringify({ ...manifest, files: [huge, announced, undeclared] }));
    const result = await runScript(['--manifest', manifestFile, '--base-url', server.url, '--data-dir', data]);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/FAILED {3}sets\/huge\.bin from .*: the download exceeds the 1,000,000 bytes the manifest declares: stopped/);
    expect(result.stdout).toMatch(/FAILED {3}sets\/announced\.json from .*: the server announces \d+ bytes, more than the \d+ the manifest declares/);
    expect(result.stdout).toMatch(/FAILED {3}sets\/undeclared\.json from .*: the manifest declares no size for it \(source_bytes\): not downloaded/);
    expect(result.stdout).toContain('0 of 3 files ready; 3 failed');
    // The client hung up on the endless stream: the server never had to send more than its socket buffers hold beyond the bound.
    expect(server.stream.hungUp).toBe(true);
    expect(server.stream.sent).toBeLessThan(64 * 1_000_000);
    expect(existsSync(join(data, 'sets'))).toBe(false);
  });

  test('never writes into the repository', async () => {
    const result = await runScript(['--data-dir', join(projectRoot, 'data'), '--only', 'nothing']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('is inside the repository: the data stays outside it');
  });

  test('the manifest names each file by full commit and blob ids', () => {
    expect(realManifest.files.length).toBeGreaterThan(40);
    for (const file of realManifest.files) {
      expect(file.commit, file.file).toMatch(/^[0-9a-f]{40}$/);
      expect(file.blob, file.file).toMatch(/^[0-9a-f]{40}$/);
      expect(file.sha256, file.file).toMatch(/^[0-9a-f]{64}$/);
      // The bound of each download: the published file's size (the file itself where it is not derived).
      expect(Number.isInteger(file.source_bytes) && file.source_bytes > 0, file.file).toBe(true);
      if (!file.derive) expect(file.source_bytes, file.file).toBe(file.bytes);
    }
  });

  test.skipIf(!haveSources)('it lists every file of SOURCES.md with its blob, and matches the data present', () => {
    const listed = [...readFileSync(sourcesFile, 'utf8').matchAll(/^\| `([^`]+)` \| [^|]+ \| `[^`]+` @ `[0-9a-f]+` \| `([0-9a-f]{40})` \|/gm)].map((match) => ({ file: match[1], blob: match[2] }));
    expect(realManifest.files.map(({ file, blob }) => ({ file, blob }))).toEqual(listed);
    const present = realManifest.files.filter((file) => existsSync(join(dataDirectory(), file.file)));
    for (const file of present) expect(sha256(readFileSync(join(dataDirectory(), file.file))), file.file).toBe(file.sha256);
  });
});
