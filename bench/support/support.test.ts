import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { safeParseJson } from '../../src/util/json.js';
import { countCriteria, defaultHealthBenchFile, loadHealthBenchItems, toPromptfooItems } from './healthbench.js';
import { readItemsFile } from './items-file.js';
import { measureSelf, parseBashTimes, peakRssBytes, processTreeCpuMs, timed } from './measure.js';
import { startSimulatorProcess } from './simulator-process.js';
import { formatMarkdownTable, formatTable } from './table.js';
import { haveData } from '../../src/testing/data.js';

describe('formatTable', () => {
  const rows = [
    { grader: 'rubricate', calls: 988, wallMs: 1234.5678 },
    { grader: 'promptfoo', calls: 12345, wallMs: 9.5, note: 'j=8' },
  ];

  it('aligns text left and numbers right under a dashed rule, with empty missing cells', () => {
    const lines = formatTable(rows).split('\n');
    expect(lines).toEqual([
      'grader     calls   wallMs  note',
      '---------  -----  -------  ----',
      'rubricate    988  1234.57',
      'promptfoo  12345     9.50  j=8',
    ]);
  });

  it('honours the decimals option and returns nothing for no rows', () => {
    expect(formatTable([{ value: 1 / 3 }], { decimals: 4 })).toBe(' value\n------\n0.3333');
    expect(formatTable([])).toBe('');
  });

  it('renders Markdown with right-aligned numeric columns and escaped pipes', () => {
    const markdown = formatMarkdownTable([{ name: 'a|b', count: 3 }, { name: 'line\nbreak', count: 4.25 }]);
    expect(markdown.split('\n')).toEqual(['| name | count |', '| --- | ---: |', '| a\\|b | 3 |', '| line break | 4.25 |']);
  });
});

// The child processes below mostly start up and idle (what they measure is CPU time, not wall
// time): these tests run side by side.
describe('measurement', { concurrent: true }, () => {
  it('measureSelf reports a peak RSS at least the current RSS, and CPU that grows with work', async () => {
    const before = measureSelf();
    expect(before.peakRssBytes).toBeGreaterThan(10 * 1024 * 1024);
    expect(before.peakRssBytes).toBeGreaterThanOrEqual(before.rssBytes * 0.95);
    const spent = await timed(() => {
      let sum = 0;
      for (let index = 0; index < 3e7; index += 1) sum += index % 7;
      return sum;
    });
    expect(spent.cpuMs).toBeGreaterThan(5);
    expect(measureSelf().cpuMs).toBeGreaterThan(before.cpuMs);
    const big = Buffer.alloc(64 * 1024 * 1024, 1);
    expect(peakRssBytes()).toBeGreaterThanOrEqual(before.peakRssBytes);
    expect(big[big.length - 1]).toBe(1);
  });

  it('parses the output of bash `times`', () => {
    const parsed = parseBashTimes('0m0.004s 0m0.002s\n1m2.500s 0m0.250s\n');
    expect(parsed).toEqual({ shellUserMs: 4, shellSystemMs: 2, childrenUserMs: 62_500, childrenSystemMs: 250 });
    expect(parseBashTimes('nothing here')).toBeUndefined();
  });

  // Burns 300 ms of its own CPU (not wall time, which stretches on a loaded machine), says so, then idles.
  const busyChild =
    "while (process.cpuUsage().user < 300000) {} process.stdout.write('busy done\\n'); setTimeout(() => {}, IDLE_MS);";

  it('bash `times` counts a busy child process', async () => {
    const output = await new Promise<string>((resolve) => {
      let text = '';
      const child = spawn('bash', ['-c', `"$@"; times`, 'bash', process.execPath, '-e', busyChild.replace('IDLE_MS', '0')], { stdio: ['ignore', 'pipe', 'inherit'] });
      child.stdout.on('data', (chunk: Buffer) => (text += chunk.toString()));
      child.on('close', () => resolve(text));
    });
    const times = parseBashTimes(output);
    expect(times).toBeDefined();
    expect((times?.childrenUserMs ?? 0) + (times?.childrenSystemMs ?? 0)).toBeGreaterThanOrEqual(290);
  });

  it.skipIf(!existsSync('/proc/self/stat'))('processTreeCpuMs sums a live process tree from /proc', async () => {
    const parent = spawn('bash', ['-c', `"$@"`, 'bash', process.execPath, '-e', busyChild.replace('IDLE_MS', '30000')], {
      stdio: ['ignore', 'pipe', 'ignore'],
      // Its own process group, so the whole tree can be ended by the group id.
      detached: true,
    });
    try {
      await new Promise<void>((resolve) => parent.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('busy done') && resolve()));
      // bash waits on node, so the busy node process is a live descendant of the shell.
      expect(processTreeCpuMs(parent.pid as number)).toBeGreaterThanOrEqual(290);
    } finally {
      process.kill(-(parent.pid as number), 'SIGKILL');
    }
  });
});

describe('startSimulatorProcess', { concurrent: true }, () => {
  it('runs the simulator in another process, reads its stats over HTTP, and stops it', async () => {
    const simulator = await startSimulatorProcess({ fixedMs: 5, maxConcurrent: 4 });
    try {
      expect(simulator.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
      expect(simulator.pid).not.toBe(process.pid);
      const content = ['<response-00000000000000aa>', 'Rest and fluids.', '</response-00000000000000aa>', '<criterion id="c" points="1">', 'Mentions rest', '</criterion>'].join('\n');
      const reply = await fetch(`${simulator.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content }] }),
      });
      expect(reply.status).toBe(200);
      const stats = await simulator.stats();
      expect(stats.completed).toBe(1);
      expect(stats.options.maxConcurrent).toBe(4);
      await simulator.reset();
      expect((await simulator.stats()).requests).toBe(0);
    } finally {
      await simulator.stop();
    }
    expect(() => process.kill(simulator.pid, 0)).toThrow();
  });

  it('reports a simulator that cannot start', async () => {
    await expect(startSimulatorProcess({ fixedMs: -5 })).rejects.toMatchObject({ code: 'JUDGE_UNAVAILABLE' });
  });
});

describe('item files', () => {
  it('reads a JSON array or JSONL', async () => {
    const folder = mkdtempSync(path.join(os.tmpdir(), 'rubricate-items-'));
    try {
      const items = [{ id: 'a', response: 'x', criteria: ['c'] }, { id: 'b', response: 'y', criteria: [] }];
      writeFileSync(path.join(folder, 'items.json'), JSON.stringify(items));
      writeFileSync(path.join(folder, 'items.jsonl'), `${items.map((item) => JSON.stringify(item)).join('\n')}\n`);
      expect(await readItemsFile(path.join(folder, 'items.json'))).toEqual(items);
      expect(await readItemsFile(path.join(folder, 'items.jsonl'))).toEqual(items);
      writeFileSync(path.join(folder, 'broken.jsonl'), '{"id": "a"}\n{oops\n');
      await expect(readItemsFile(path.join(folder, 'broken.jsonl'))).rejects.toMatchObject({ code: 'INPUT_INVALID', details: { line: 2 } });
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

const healthBenchFile = defaultHealthBenchFile();
if (!existsSync(healthBenchFile)) console.warn(`skipping HealthBench item loading: ${healthBenchFile} not found`);
describe.skipIf(!haveData(healthBenchFile, 'HealthBench item loading (bench/support/support.test.ts)'))('HealthBench items', () => {
  it('loads records that have an ideal completion, with their rubric', async () => {
    const items = await loadHealthBenchItems(healthBenchFile);
    // 80 of the first 100 records carry an ideal completion; they hold 988 rubric items.
    expect(items).toHaveLength(80);
    expect(countCriteria(items)).toBe(988);
    expect(items.some((item) => item.criteria.some((criterion) => criterion.points < 0))).toBe(true);
    const first = items[0];
    expect(first.prompt.at(-1)?.role).toBe('user');
    expect(first.response.length).toBeGreaterThan(0);
    const asPromptfoo = toPromptfooItems(items.slice(0, 2));
    expect(asPromptfoo[0].criteria).toEqual(first.criteria.map((criterion) => criterion.text));
    expect((await loadHealthBenchItems(healthBenchFile, { limit: 3 })).length).toBe(3);
  });

  it('matches the source records field by field', async () => {
    const [item] = await loadHealthBenchItems(healthBenchFile, { limit: 1 });
    const { readFileSync } = await import('node:fs');
    const records = readFileSync(healthBenchFile, 'utf8').split('\n').filter(Boolean);
    const record = records.map((line) => safeParseJson(line)).map((parsed) => (parsed.ok ? (parsed.value as any) : undefined)).find((value) => value?.prompt_id === item.id);
    expect(record.ideal_completions_data.ideal_completion).toBe(item.response);
    expect(record.rubrics.map((rubric: any) => rubric.points)).toEqual(item.criteria.map((criterion) => criterion.points));
  });
});
