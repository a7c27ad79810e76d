import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { requestKey } from '../src/engine/request-key.js';
import { createPerCriterionStrategy } from '../src/grading/strategies.js';
import { defaultSampling } from '../src/pipeline/defaults.js';
import { healthbenchImporter } from '../src/formats/healthbench.js';
import { binaryVerdict, startFakeJudge, type FakeJudge, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { runCliInProcess, startCli } from './helpers.js';
import { dataPath } from '../src/testing/data.js';
import { openSqlite } from '../src/store/sqlite-driver.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const realExamples = dataPath('healthbench/oss_eval_first100.jsonl');
let fake: FakeJudge | undefined;

afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** The verdict is a pure function of (criterion, response): reruns must agree with it. */
function expectedVerdict(criterion: string, response: string): boolean {
  return createHash('sha256').update(`${criterion}\u0000${response}`).digest()[0] < 128;
}

function judgeScript(delayMs: number) {
  return (request: FakeJudgeRequest) => ({
    content: binaryVerdict(expectedVerdict(request.criteria[0]?.text ?? '', request.response ?? '')),
    delayMs,
    usage: { prompt_tokens: 400, completion_tokens: 30 },
  });
}

/** 100 HealthBench examples (the real ones when the data folder is there) and a responses file. */
function healthbenchWorkload(directory: string): { examples: string; responses: string; criteria: number } {
  let examples = realExamples;
  if (!existsSync(realExamples)) {
    console.warn(`${realExamples} not found: using 100 synthetic HealthBench-shaped examples`);
    examples = join(directory, 'examples.jsonl');
    const lines = Array.from({ length: 100 }, (_, index) =>
      JSON.stringify({
        prompt_id: `p${index}`,
        prompt: [{ role: 'user', content: `Question ${index} about a symptom.` }],
        rubrics: Array.from({ length: 11 }, (_, criterion) => ({ criterion: `Criterion ${criterion} for ${index}`, points: criterion % 4 === 3 ? -5 : 5, tags: ['level:example', `axis:a${criterion % 3}`] })),
        example_tags: [`theme:t${index % 5}`],
      }),
    );
    writeFileSync(examples, lines.join('\n'));
  }
  const rows = readFileSync(examples, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { prompt_id: string; rubrics: unknown[] });
  const responses = join(directory, 'responses.jsonl');
  writeFileSync(responses, rows.map((row, index) => JSON.stringify({ prompt_id: row.prompt_id, response: `Answer ${index}: rest, fluids, and see a doctor if it gets worse.` })).join('\n'));
  return { examples, responses, criteria: rows.reduce((total, row) => total + row.rubrics.length, 0) };
}

/** Cache key of every planned request, by its user message: the engine's own key derivation. */
async function keysByUserMessage(examples: string, responses: string, baseUrl: string): Promise<Map<string, string>> {
  const strategy = createPerCriterionStrategy({ sampling: defaultSampling });
  const keys = new Map<string, string>();
  for await (const record of healthbenchImporter.read(examples, { responses })) {
    if (record.kind !== 'item') continue;
    for (const task of strategy.plan(record.item, record.item.rubric.criteria)) {
      keys.set(task.request.messages[1].content, requestKey({ id: 'openai:fake-judge', model: 'fake-judge', baseUrl }, task.templateVersion, task.request, 0, task.keyMaterial));
    }
  }
  return keys;
}

describe('rubricate grade (end to end through the CLI entry point; a real process where it is killed)', () => {
  test('survives kill -9 half way: the rerun completes with zero repeated calls for verdicts already obtained', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-kill-');
    const { examples, responses, criteria } = healthbenchWorkload(directory);
    fake = await startFakeJudge(judgeScript(15));
    const cache = join(directory, 'cache.sqlite');
    const out = join(directory, 'results.jsonl');
    const args = ['grade', '--format', 'healthbench', '--input', examples, '--responses', responses, '--judge', 'openai:fake-judge', '--judge-base-url', fake.baseUrl, '--cache', cache, '--out', out, '--concurrency', '8', '--quiet'];

    const first = startCli(args);
    await new Promise<void>((resolveWait, reject) => {
      const timer = setInterval(() => {
        if (fake!.requests.length >= criteria / 2) {
          clearInterval(timer);
          first.child.kill('SIGKILL');
          resolveWait();
        }
      }, 5);
      first.done.then((result) => {
        clearInterval(timer);
        reject(new Error(`first run ended before it was killed: ${result.stderr}`));
      });
    });
    const killed = await first.done;
    expect(killed.signal).toBe('SIGKILL');

    // Obtained = in the database, or in the killed process's journal (appended before each verdict was used).
    const database = openSqlite(cache, { readOnly: true });
    const obtained = new Set((database.prepare('SELECT key FROM replies').all() as Array<{ key: string }>).map((row) => row.key));
    database.close();
    for (const name of readdirSync(directory).filter((entry) => entry.startsWith('cache.sqlite.journal-'))) {
      for (const line of readFileSync(join(directory, name), 'utf8').split('\n')) {
        const tab = line.indexOf('\t');
        if (tab > 0) obtained.add(JSON.parse(line.slice(0, tab)) as string);
      }
    }
    expect(obtained.size).toBeGreaterThan(criteria / 4);
    const firstRunRequests = fake.requests.length;

    // The rerun is about what it asks the judge, not about its process: the CLI's entry point in this process.
    const second = await runCliInProcess(args);
    expect(second.code, second.stderr).toBe(0);
    const secondRunRequests = fake.requests.slice(firstRunRequests);
    const keys = await keysByUserMessage(examples, responses, fake.baseUrl);
    expect(secondRunRequests.every((request) => keys.has(request.userText))).toBe(true);
    const repeated = secondRunRequests.filter((request) => obtained.has(keys.get(request.userText)!));
    expect(repeated).toHaveLength(0);
    expect(secondRunRequests.length).toBeLessThanOrEqual(criteria - obtained.size);

    const results = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; status: string; criteria: Array<{ text: string; met: boolean }>; response: string });
    expect(results).toHaveLength(100);
    expect(results.every((result) => result.status === 'ok')).toBe(true);
    for (const result of results) for (const criterion of result.criteria) expect(criterion.met).toBe(expectedVerdict(criterion.text, result.response));
  }, hangGuard(120_000));

  test('reports bad input lines with file, line and field, grades the rest, and re-scores identically', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-bad-');
    const input = join(directory, 'items.jsonl');
    writeFileSync(
      input,
      [
        JSON.stringify({ id: 'good-1', prompt: 'Say hi', response: 'Hi there', rubric: { criteria: [{ text: 'Greets', points: 2 }, { text: 'Is rude', points: -1 }] } }),
        '{"id": "broken", "prompt": ',
        JSON.stringify({ id: 'no-points', prompt: 'x', response: 'y', rubric: { criteria: [{ text: 't', points: 'many' }] } }),
        JSON.stringify({ id: 'good-2', prompt: 'Count to 3', response: '1 2 3', rubric: { criteria: [{ text: 'Counts correctly', points: 5, tags: ['axis:accuracy'] }] } }),
      ].join('\n'),
    );
    fake = await startFakeJudge(judgeScript(0));
    const out = join(directory, 'results.jsonl');
    const metricsFile = join(directory, 'metrics.json');
    const result = await runCliInProcess(['grade', '--input', input, '--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--no-cache', '--out', out, '--metrics', metricsFile, '--scoring', 'weighted_mean']);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`${input}:2: not valid JSON`);
    expect(result.stderr).toContain(`${input}:3 field rubric.criteria[0].points: expected number, got string`);
    expect(result.stderr).not.toMatch(/\n\s+at /);
    const lines = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; status: string; line: number });
    expect(lines.map((line) => [line.id, line.status, line.line])).toEqual([
      ['good-1', 'ok', 1],
      ['', 'invalid', 2],
      ['no-points', 'invalid', 3],
      ['good-2', 'ok', 4],
    ]);
    const metrics = JSON.parse(readFileSync(metricsFile, 'utf8')) as { overall: { score: number }; n_invalid: number; usage: { calls: number } };
    expect(metrics.n_invalid).toBe(2);
    expect(metrics.usage.calls).toBe(3);
    // The journal of a --no-cache run is removed once the run completes.
    expect(existsSync(`${out}.journal.sqlite`)).toBe(false);

    const rescored = await runCliInProcess(['score', '--input', out]);
    const recomputed = JSON.parse(rescored.stdout) as { overall: { score: number }; scoring: string };
    expect(recomputed.scoring).toBe('weighted_mean');
    expect(recomputed.overall).toEqual(metrics.overall);
  }, hangGuard(60_000));

  test('--strict stops at the first invalid record; usage errors exit 2 without a stack trace', async ({ makeTempDir }) => {
    const directory = makeTempDir('rubricate-strict-');
    const input = join(directory, 'items.jsonl');
    writeFileSync(input, ['{"id": 1', JSON.stringify({ id: 'later', prompt: 'p', response: 'r', rubric: { criteria: [{ text: 't' }] } })].join('\n'));
    const strict = await runCliInProcess(['grade', '--input', input, '--judge', 'none', '--out', join(directory, 'out.jsonl'), '--strict']);
    expect(strict.code).toBe(3);
    expect(readFileSync(join(directory, 'out.jsonl'), 'utf8').trim().split('\n')).toHaveLength(1);
    const unknown = await runCliInProcess(['grade', '--format', 'nope', '--input', input, '--out', join(directory, 'x.jsonl'), '--judge', 'none']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/error \[CONFIG_INVALID\]: .*unknown input format "nope"/);
    expect(unknown.stderr).not.toMatch(/\n\s+at /);
    const missing = await runCliInProcess(['grade', '--input', join(directory, 'absent.jsonl'), '--out', join(directory, 'y.jsonl'), '--judge', 'none']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/error \[INPUT_UNREADABLE\]: .*absent\.jsonl field input: cannot read --input: no such file or folder/);
  }, hangGuard(60_000));
});
