import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { pathToFileURL } from 'node:url';
import { readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { appendRunIndexLine, maximumLineBytes, readRunIndex, runIndexPath, startRunRecording, type RunIndexLine } from './run-index.js';

describe('the run index', () => {
  test('is the flag, else RUBRICATE_RUN_INDEX ("off": none), else the XDG state folder', () => {
    expect(runIndexPath('/a/runs.jsonl', { RUBRICATE_RUN_INDEX: '/b/runs.jsonl' })).toBe('/a/runs.jsonl');
    expect(runIndexPath(undefined, { RUBRICATE_RUN_INDEX: '/b/runs.jsonl' })).toBe('/b/runs.jsonl');
    expect(runIndexPath(undefined, { RUBRICATE_RUN_INDEX: 'off' })).toBeUndefined();
    if (process.platform === 'linux') expect(runIndexPath(undefined, { XDG_STATE_HOME: '/state' })).toBe('/state/rubricate/runs.jsonl');
  });

  test('records a run as one line when it starts and one when it ends, folded by run id, newest first', async ({ tempDir }) => {
    const index = join(tempDir, 'history', 'runs.jsonl');
    const problems: string[] = [];
    const first = startRunRecording(index, { results: join(tempDir, 'a.jsonl'), command: 'grade', judges: ['scripted:mixed'], benchmark: 'ifeval' }, (message) => problems.push(message))!;
    expect((await readRunIndex(index)).map((run) => [run.status, run.made_up])).toEqual([['running', true]]);
    first.end('finished', { items: { n: 2, ok: 2, error: 0, invalid: 0 } });
    first.end('failed');
    const second = startRunRecording(index, { results: join(tempDir, 'b.jsonl'), command: 'rejudge', judges: ['openai:gpt-4.1'] }, (message) => problems.push(message))!;
    second.end('failed', { error: 'JUDGE_UNAVAILABLE: no answer' });
    const lines = readFileSync(index, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(4);
    const runs = await readRunIndex(index);
    expect(runs.map((run) => [run.results, run.status, run.command])).toEqual([
      [join(realpathSync(tempDir), 'b.jsonl'), 'failed', 'rejudge'],
      [join(realpathSync(tempDir), 'a.jsonl'), 'finished', 'grade'],
    ]);
    expect(runs[1]).toMatchObject({ items: { n: 2, ok: 2 }, benchmark: 'ifeval', made_up: true, ended_at: expect.any(String) });
    expect(runs[0]).toMatchObject({ made_up: false, error: 'JUDGE_UNAVAILABLE: no answer' });
    expect(problems).toEqual([]);
  });

  test('a running run whose process is gone reads as interrupted; unreadable lines are skipped', async ({ tempDir }) => {
    const index = join(tempDir, 'runs.jsonl');
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    const line: RunIndexLine = { run_index: 1, run: 'r1', status: 'running', results: '/x/a.jsonl', command: 'grade', started_at: '2026-01-01T00:00:00.000Z', judges: [], made_up: false, pid: gone, host: hostname() };
    appendRunIndexLine(index, line);
    appendRunIndexLine(index, { ...line, run: 'r2', pid: process.pid, started_at: '2026-01-02T00:00:00.000Z' });
    writeFileSync(index, readFileSync(index, 'utf8') + 'not json\n{"run_index": 1, "run": "r3"}\n');
    const runs = await readRunIndex(index);
    expect(runs.map((run) => [run.run, run.status, run.process_gone])).toEqual([['r2', 'running', undefined], ['r1', 'interrupted', true]]);
  });

  test('lines appended by several processes at once never interleave', async ({ tempDir }) => {
    const index = join(tempDir, 'runs.jsonl');
    const module = pathToFileURL(join(import.meta.dirname, 'run-index.ts')).href;
    // Each process appends 200 lines of about 2 KiB (a long benchmark name pads them) as fast as it can.
    const writer = (name: string) =>
      `const { appendRunIndexLine } = await import(${JSON.stringify(module)});
       for (let n = 0; n < 200; n += 1) appendRunIndexLine(${JSON.stringify(index)}, { run_index: 1, run: '${name}-' + n, status: 'running', results: '/r/${name}.jsonl', command: 'grade', started_at: new Date().toISOString(), judges: [], made_up: false, benchmark: '${name}'.repeat(2000), pid: process.pid, host: 'h' });`;
    const children = ['a', 'b', 'c'].map((name) => spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', writer(name)], { stdio: 'inherit' }));
    const codes = await Promise.all(children.map(async (child) => (await once(child, 'exit'))[0]));
    expect(codes).toEqual([0, 0, 0]);
    const lines = readFileSync(index, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(600);
    const parsed = lines.map((text) => JSON.parse(text) as RunIndexLine);
    for (const name of ['a', 'b', 'c']) expect(parsed.filter((line) => line.results === `/r/${name}.jsonl` && line.benchmark === name.repeat(2000))).toHaveLength(200);
    expect((await readRunIndex(index)).length).toBe(600);
  });

  test('a line over the bound drops its optional fields, never writes a cut line', async ({ tempDir }) => {
    const index = join(tempDir, 'runs.jsonl');
    const recording = startRunRecording(index, { results: join(tempDir, 'a.jsonl'), command: 'grade', judges: [], input: join(tempDir, 'x'.repeat(maximumLineBytes)) }, () => undefined)!;
    recording.end('failed', { error: 'e'.repeat(maximumLineBytes) });
    const lines = readFileSync(index, 'utf8').trim().split('\n');
    expect(lines.map((text) => Buffer.byteLength(text) < maximumLineBytes)).toEqual([true, true]);
    expect(lines.map((text) => JSON.parse(text).input)).toEqual([undefined, undefined]);
    expect(JSON.parse(lines[1]).error).toHaveLength(200);
  });

  test('an index that cannot be written is said, and the run goes on', ({ tempDir }) => {
    writeFileSync(join(tempDir, 'file'), '');
    const problems: string[] = [];
    const recording = startRunRecording(join(tempDir, 'file', 'runs.jsonl'), { results: join(tempDir, 'a.jsonl'), command: 'grade', judges: [] }, (message) => problems.push(message));
    recording?.end('finished');
    expect(problems).toEqual([expect.stringMatching(/runs\.jsonl could not be written \(E[A-Z]+\); the run goes on$/), expect.stringMatching(/could not be written/)]);
  });
});
