/**
 * `npm run data:fetch` (scripts/fetch_data.py) against a loopback server standing in for GitHub:
 * each file is taken from its repository, commit and path, checked against its git blob id,
 * rebuilt as SOURCES.md derives it, checked against the sha256 the tests expect, and written
 * outside the repository; a file already there is not fetched again, a tampered one is refused.
 * The real manifest is checked against ../shared/data/SOURCES.md and the data where present.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
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
  return { file, repo: `${owner}/${repo}`, commit, path: path.join('/'), blob: gitBlobId(Buffer.from(published[url])), bytes: Buffer.byteLength(expected[file]), sha256: sha256(expected[file]), ...(derive ? { derive } : {}) };
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

async function servePublished(files: Record<string, string>) {
  const requested: string[] = [];
  const server = http.createServer((request, response) => {
    const path = decodeURIComponent(new URL(request.url ?? '/', 'http://x').pathname);
    requested.push(path);
    if (files[path] === undefined) return void response.writeHead(404).end('not found');
    response.writeHead(200, { 'content-type': 'application/octet-stream' }).end(files[path]);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requested, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
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

const realManifest = JSON.parse(readFileSync(join(projectRoot, 'scripts/data-sources.json'), 'utf8')) as { files: Array<{ file: string; blob: string; commit: string; sha256: string }> };
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
    }
  });

  test.skipIf(!haveSources)('it lists every file of SOURCES.md with its blob, and matches the data present', () => {
    const listed = [...readFileSync(sourcesFile, 'utf8').matchAll(/^\| `([^`]+)` \| [^|]+ \| `[^`]+` @ `[0-9a-f]+` \| `([0-9a-f]{40})` \|/gm)].map((match) => ({ file: match[1], blob: match[2] }));
    expect(realManifest.files.map(({ file, blob }) => ({ file, blob }))).toEqual(listed);
    const present = realManifest.files.filter((file) => existsSync(join(dataDirectory(), file.file)));
    for (const file of present) expect(sha256(readFileSync(join(dataDirectory(), file.file))), file.file).toBe(file.sha256);
  });
});
