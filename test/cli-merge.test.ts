/**
 * `rubricate merge` gives the whole run or nothing: the files must be the N shards of one input
 * (`grade --shard I/N` stamps every line with its shard, the input's record count and identity),
 * each complete, graded by one judge setup. A missing, cut-short, repeated or foreign shard is
 * refused naming the file and the input lines, writing nothing: an earlier output is kept. The
 * CLI runs in this process against a loopback judge.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../src/testing/vitest-fixtures.js';
import { binaryVerdict, startFakeJudge, type FakeJudge } from '../src/testing/fake-judge.js';
import { runCliInProcess } from './helpers.js';
import { hangGuard } from '../src/testing/hang-guard.js';

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function writeItems(path: string, count: number, topic = 'question'): string {
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({ id: `item-${index}`, prompt: `A ${topic} ${index}?`, response: `Answer ${index}.`, rubric: { criteria: [{ text: `Answers ${topic} ${index}`, points: 1 }] } }),
  );
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

/** Verdicts that are a pure function of the criterion and response. */
function verdictFor(text: string): boolean {
  return createHash('sha256').update(text).digest()[0] < 128;
}

interface Run {
  directory: string;
  input: string;
  whole: string;
  shards: string[];
}

describe('merge: the complete shards of one run, or nothing', { timeout: hangGuard(120_000) }, () => {
  let judge: FakeJudge;
  let run: Run;
  const grade = (input: string, out: string, extra: string[] = [], model = 'fake-judge') =>
    runCliInProcess(['grade', '--input', input, '--out', out, '--judge', `openai:${model}`, '--judge-base-url', judge.baseUrl, '--no-cache', '--quiet', ...extra]);

  test.beforeAll(async ({ fileTempDir: directory }) => {
    judge = await startFakeJudge((request) => ({ content: binaryVerdict(verdictFor(`${request.criteria[0]?.text}\u0000${request.response}`)) }));
    const input = writeItems(join(directory, 'items.jsonl'), 9);
    const whole = join(directory, 'whole.jsonl');
    expect((await grade(input, whole)).code).toBe(0);
    const shards = [0, 1, 2].map((index) => join(directory, `shard-${index}.jsonl`));
    for (const [index, out] of shards.entries()) expect((await grade(input, out, ['--shard', `${index}/3`])).code).toBe(0);
    run = { directory, input, whole, shards };
    return async () => judge.close();
  });

  /** Runs merge and checks that no input changed and no temporary file was left. */
  async function merge(files: string[], out: string) {
    const before = new Map(files.map((file) => [file, sha256(file)]));
    const listing = readdirSync(run.directory).sort();
    const result = await runCliInProcess(['merge', ...files, '--out', out]);
    for (const [file, hash] of before) expect(sha256(file), `${file} unchanged`).toBe(hash);
    const after = readdirSync(run.directory).sort();
    expect(after.filter((name) => !listing.includes(name) && !out.endsWith(name))).toEqual([]);
    return result;
  }

  test('all three shards: exactly the single run, byte for byte, with no shard stamp left', async ({ tempDir }) => {
    // Every shard line names its shard and the whole input.
    const first = JSON.parse(readFileSync(run.shards[1], 'utf8').split('\n')[0]) as { line: number; shard: Record<string, unknown> };
    expect(first.line).toBe(2);
    expect(first.shard).toEqual({ index: 1, count: 3, records: 9, input_sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const out = join(tempDir, 'merged.jsonl');
    const result = await merge([run.shards[2], run.shards[0], run.shards[1]], out);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toContain('merged 9 results from 3 files (3 shards)');
    expect(readFileSync(out, 'utf8')).toBe(readFileSync(run.whole, 'utf8'));
  });

  test('a missing shard: refused naming it and its input lines, writing nothing; a good earlier output is kept', async ({ tempDir }) => {
    const out = join(tempDir, 'merged.jsonl');
    expect((await merge(run.shards, out)).code).toBe(0);
    const good = readFileSync(out, 'utf8');
    const result = await merge(run.shards.slice(0, 2), out);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error \[MERGE_REFUSED\]: field shard: the shards do not cover the input \(9 records in 3 shards\): shard 2\/3 is missing: no file given is it \(3 record\(s\): input lines 3, 6; the input's last record, after line 8\)\. Nothing was written/m);
    // The earlier output is untouched: 9 lines, not the 6 of the two shards.
    expect(readFileSync(out, 'utf8')).toBe(good);
    const missingFirst = await merge(run.shards.slice(1), join(tempDir, 'other.jsonl'));
    expect(missingFirst.code).toBe(2);
    expect(missingFirst.stderr).toContain('shard 0/3 is missing: no file given is it (3 record(s): input lines 1, 4, 7)');
  });

  test('a shard cut short (an interrupted run): refused naming the file and the lines it lacks', async ({ tempDir }) => {
    const short = join(tempDir, 'shard-1-short.jsonl');
    writeFileSync(short, `${readFileSync(run.shards[1], 'utf8').trim().split('\n').slice(0, 2).join('\n')}\n`);
    const out = join(tempDir, 'merged.jsonl');
    const result = await merge([run.shards[0], short, run.shards[2]], out);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`${short} (shard 1/3) stops after 2 of its 3 results, an interrupted or failed run (missing 1: input line 8)`);
    expect(() => readFileSync(out)).toThrow();
  });

  test('a shard of another input: refused naming the foreign file', async ({ tempDir }) => {
    const otherInput = writeItems(join(tempDir, 'other-items.jsonl'), 9, 'riddle');
    const foreign = join(tempDir, 'foreign-2.jsonl');
    expect((await grade(otherInput, foreign, ['--shard', '2/3'])).code).toBe(0);
    const result = await merge([run.shards[0], run.shards[1], foreign], join(tempDir, 'merged.jsonl'));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`error \\[MERGE_REFUSED\\]: ${foreign.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} field shard: ${foreign.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is a shard of another input than`));
    // The same input split in two, not three, is another split.
    const halves = join(tempDir, 'half-1.jsonl');
    expect((await grade(run.input, halves, ['--shard', '1/2'])).code).toBe(0);
    const split = await merge([run.shards[0], halves], join(tempDir, 'merged.jsonl'));
    expect(split.code).toBe(2);
    expect(split.stderr).toContain('is shard 1/2 of 9 records');
  });

  test('a shard graded by another judge, a shard given twice, a file that is not a shard output: refused', async ({ tempDir }) => {
    const otherJudge = join(tempDir, 'shard-2-other-judge.jsonl');
    expect((await grade(run.input, otherJudge, ['--shard', '2/3'], 'other-judge')).code).toBe(0);
    const judged = await merge([run.shards[0], run.shards[1], otherJudge], join(tempDir, 'merged.jsonl'));
    expect(judged.code).toBe(2);
    expect(judged.stderr).toContain(`${otherJudge} was graded with another judge or scoring than`);
    expect(judged.stderr).toContain('field judge');

    const twice = await merge([run.shards[0], run.shards[0], run.shards[1], run.shards[2]], join(tempDir, 'merged.jsonl'));
    expect(twice.code).toBe(2);
    expect(twice.stderr).toContain(`${run.shards[0]} and ${run.shards[0]} are both shard 0/3: give each shard once`);

    const unsharded = await merge([run.whole, run.shards[1]], join(tempDir, 'merged.jsonl'));
    expect(unsharded.code).toBe(2);
    expect(unsharded.stderr).toContain(`${run.whole} is not the output of \`grade --shard I/N\`: its line 1 names no shard`);

    const overInput = await runCliInProcess(['merge', ...run.shards, '--out', run.shards[0]]);
    expect(overInput.code).toBe(2);
    expect(overInput.stderr).toContain('[OUTPUT_CONFLICT]');
    expect(readFileSync(join(tempDir, 'merged.jsonl'), { flag: 'a+' }).length).toBe(0);
  });
});

describe('shards of an input counted through its importer (not by its lines)', { timeout: hangGuard(120_000) }, () => {
  test('every shard stamps the whole input\'s record count, and merge accepts the shards', async ({ tempDir }) => {
    // A CSV input is counted by reading it through its importer (a JSONL one by its lines).
    const input = join(tempDir, 'items.csv');
    const rows = Array.from({ length: 5 }, (_, index) => `item-${index},Question ${index}?,Answer ${index}.,"{""criteria"": [{""text"": ""Answers question ${index}"", ""points"": 1}]}"`);
    writeFileSync(input, `id,prompt,response,rubric\n${rows.join('\n')}\n`);
    const common = ['--judge', 'scripted', '--no-cache', '--quiet'];
    const whole = join(tempDir, 'whole.jsonl');
    expect((await runCliInProcess(['grade', '--input', input, '--out', whole, ...common])).code).toBe(0);
    const records = readFileSync(whole, 'utf8').trim().split('\n').length;
    const shards = [0, 1].map((index) => join(tempDir, `shard-${index}.jsonl`));
    for (const [index, out] of shards.entries()) expect((await runCliInProcess(['grade', '--input', input, '--out', out, '--shard', `${index}/2`, ...common])).code).toBe(0);
    const stamps = shards.map((file) => (JSON.parse(readFileSync(file, 'utf8').split('\n')[0]) as { shard: { records: number } }).shard.records);
    expect(stamps).toEqual([records, records]);
    const merged = await runCliInProcess(['merge', ...shards, '--out', join(tempDir, 'merged.jsonl')]);
    expect(merged.code, merged.stderr).toBe(0);
    expect(merged.stderr).toContain(`merged ${records} results from 2 files (2 shards)`);
  });
});
