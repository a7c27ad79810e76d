import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { runCliCaptured } from '../cli/in-process.js';
import type { FakeJudge, FakeJudgeAction, FakeJudgeRequest } from '../testing/fake-judge.js';
import { test as base } from '../testing/vitest-fixtures.js';
import { answer, fencedBlocks, generatorAndJudge, mentions, taskOf, type FakeCriterion } from './fixtures/fake-generator.js';
import { dataDirectory, haveData } from '../testing/data.js';

const projectRoot = resolve(__dirname, '../..');
const fixtures = resolve(__dirname, 'fixtures');

function readJsonLines(file: string): Array<Record<string, any>> {
  return readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

/** Criteria a generator writes for each fixture prompt (by the words of its request). */
function fixtureRubric(request: FakeJudgeRequest): FakeCriterion[] {
  const text = fencedBlocks(request, 'request')[0] ?? '';
  const shared = [mentions('because'), mentions('example'), mentions('first'), mentions('second'), mentions('clear')];
  if (text.includes('sky is blue')) {
    return [
      ...shared,
      { text: 'The response has at most 120 words.', importance: 'Essential', kind: 'hard_rule', check: { type: 'count', parameters_json: '{"unit":"words","relation":"at_most","value":120}' } },
      { ...mentions('ocean'), importance: 'Pitfall' },
    ];
  }
  if (text.includes('baking soda')) {
    return [...shared, { text: 'The response uses no commas.', importance: 'Essential', kind: 'hard_rule', check: { type: 'punctuation:no_comma', parameters_json: '{}' } }, mentions('cleaning')];
  }
  return [...shared, mentions('rain'), { text: 'The response has three lines.', importance: 'Essential', kind: 'hard_rule', check: { type: 'count', parameters_json: '{"unit":"lines","value":3}' } }];
}

type Handlers = { generate?: (request: FakeJudgeRequest) => FakeJudgeAction };

/** `startFake(handlers)`: one fake server as keyword judge and as a generator for every task (a fixture rubric per prompt unless `handlers.generate` says otherwise). */
const test = base.extend<{ startFake: (handlers?: Handlers) => Promise<FakeJudge> }>({
  startFake: async ({ startJudge }, use) => {
    await use((handlers = {}) =>
      startJudge(
        generatorAndJudge((request, task) => {
          if (task === 'generate') return handlers.generate?.(request) ?? { content: answer(fixtureRubric(request)) };
          if (task === 'contrastive') {
            const chosen = fencedBlocks(request, 'preferred')[0];
            const words = [...new Set(chosen.match(/[A-Za-z]{4,}/g) ?? [])].slice(0, 3);
            return { content: answer(words.map((word) => mentions(word))) };
          }
          if (task === 'refine') {
            const [first, second] = [fencedBlocks(request, 'response-1')[0], fencedBlocks(request, 'response-2')[0]];
            const existing = [...request.userText.matchAll(/mentions "([^"]+)"/g)].map((match) => match[1]);
            const extra = first.split(/\s+/).find((word) => !second.includes(word)) ?? second.split(/\s+/).find((word) => !first.includes(word));
            return { content: answer([...new Set([...existing, ...(extra ? [extra] : [])])].map((word) => mentions(word))) };
          }
          if (task === 'respond') return { content: `sampled ${request.index}` };
          return { content: answer([mentions('finer one'), mentions('finer two')]) };
        }),
      ),
    );
  },
});

function commonFlags(directory: string, baseUrl: string): string[] {
  return ['--generator', 'openai:writer', '--generator-base-url', baseUrl, '--generator-attempts', '2', '--cache', join(directory, 'cache.sqlite')];
}

describe('rubricate generate --input', () => {
  test('writes one complete item per prompt that `rubricate grade` consumes once responses are added', async ({ startFake, tempDir: directory }) => {
    const { baseUrl } = await startFake();
    const out = join(directory, 'items.jsonl');
    const generated = await runCliCaptured(['generate', '--input', join(fixtures, 'prompts.jsonl'), '--out', out, ...commonFlags(directory, baseUrl)]);
    expect(generated.stderr).toContain('3 prompts: 3 rubrics written, 0 failed, 0 invalid');
    expect(generated.stderr).toContain('checks: 3 proposed, 2 kept, 1 dropped');
    expect(generated.stderr).toMatch(/warning: id p3: check dropped from "The response has three lines\." \(judged instead\): check "count": parameter "relation"/);
    expect(generated.code).toBe(0);

    const items = readJsonLines(out);
    expect(items.map((item) => item.id)).toEqual(['p1', 'p2', 'p3']);
    expect(items[0].prompt).toBe('Explain in under 120 words why the sky is blue.');
    expect(items[0].reference).toMatch(/^Rayleigh/);
    expect(items[1].prompt).toEqual([{ role: 'system', content: 'You are a concise assistant.' }, { role: 'user', content: 'List three uses of baking soda, without using commas.' }]);
    expect(items[1].metadata).toEqual({ source: 'fixture' });
    expect(items[0].rubric.criteria).toHaveLength(7);
    expect(items[0].rubric.metadata.generation).toMatchObject({ method: 'generate', prompt_version: 'generate/v1', generator: { id: 'openai:writer', model: 'writer' }, sampling: { temperature: 0.7, max_tokens: 4096 } });
    expect(items[2].rubric.criteria.find((criterion: { text: string }) => criterion.text.startsWith('The response has three lines'))).toMatchObject({ kind: 'hard_rule' });
    expect(items[2].rubric.criteria.some((criterion: { check?: unknown }) => criterion.check)).toBe(false);

    // Add responses and grade the generated file as it is.
    const responses = ['The sky is blue because air scatters blue light more: for example, at noon. First, second, clear.', 'Cleaning\nbaking\ndeodorising', 'Autumn rain falls\nsoftly on the roof\nfirst leaves'];
    const withResponses = join(directory, 'with-responses.jsonl');
    writeFileSync(withResponses, items.map((item, index) => JSON.stringify({ ...item, response: responses[index] })).join('\n'));
    const results = join(directory, 'results.jsonl');
    const graded = await runCliCaptured(['grade', '--input', withResponses, '--out', results, '--judge', 'openai:judge', '--judge-base-url', baseUrl, '--cache', join(directory, 'cache.sqlite'), '--quiet']);
    expect(graded.code).toBe(0);
    const lines = readJsonLines(results);
    expect(lines.map((line) => [line.id, line.status])).toEqual([['p1', 'ok'], ['p2', 'ok'], ['p3', 'ok']]);
    const wordCheck = lines[0].criteria.find((criterion: { text: string }) => criterion.text === 'The response has at most 120 words.');
    expect(wordCheck).toMatchObject({ source: 'check', met: true });
    expect(lines[1].criteria.find((criterion: { text: string }) => criterion.text === 'The response uses no commas.')).toMatchObject({ source: 'check', met: true });
    expect(lines[0].criteria.find((criterion: { text: string }) => criterion.text === 'The response mentions "because".')).toMatchObject({ source: 'judge', met: true, points: 3 });
    expect(lines[0].rubric_id).toBe(items[0].rubric.id);
  });

  test('reports a prompt whose answers are all malformed, writes nothing for it, and exits 3', async ({ startFake, tempDir: directory }) => {
    const fake = await startFake({
      generate: (request) => (fencedBlocks(request, 'request')[0].includes('baking soda') ? { content: { criteria: [{ text: 'too few' }] } } : { content: answer(fixtureRubric(request)) }),
    });
    const out = join(directory, 'items.jsonl');
    const result = await runCliCaptured(['generate', '--input', join(fixtures, 'prompts.jsonl'), '--out', out, '--quiet', ...commonFlags(directory, fake.baseUrl)]);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/failed: .*prompts\.jsonl:2 id p2: \[JUDGE_UNPARSEABLE\] generator answer rejected after 2 attempts: answer does not follow the schema: criteria\.0\.importance/);
    expect(readJsonLines(out).map((item) => item.id)).toEqual(['p1', 'p3']);
    expect(fake.requests.filter((request) => fencedBlocks(request, 'request')[0]?.includes('baking soda'))).toHaveLength(2);
  });

  test('rejects invalid flag combinations and input lines with clear messages', async ({ startFake, tempDir: directory }) => {
    const neither = await runCliCaptured(['generate', '--out', join(directory, 'x.jsonl'), '--generator', 'openai:x', '--generator-base-url', 'http://127.0.0.1:9/v1']);
    expect(neither.code).toBe(2);
    expect(neither.stderr).toContain('give --input: prompts (--format prompts) or preference pairs (--format pairs, llmbar, …)');
    const input = join(directory, 'bad.jsonl');
    writeFileSync(input, '{"id": "a"}\n{"id": "b", "prompt": "ok", "reference": 5}\n');
    const { baseUrl } = await startFake();
    const bad = await runCliCaptured(['generate', '--input', input, '--out', join(directory, 'out.jsonl'), ...commonFlags(directory, baseUrl)]);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain(`invalid input: ${input}:1 field prompt: missing required field`);
    expect(bad.stderr).toContain(`invalid input: ${input}:2 field reference: reference must be a string`);
    const points = await runCliCaptured(['generate', '--input', input, '--out', join(directory, 'out.jsonl'), '--importance-points', 'Pitfall=3', ...commonFlags(directory, baseUrl)]);
    expect(points.code).toBe(2);
    expect(points.stderr).toContain('Pitfall must be negative');
  });
});

describe('rubricate generate --pairs (contrastive, preference-consistency filter)', () => {
  test('keeps rubrics that order their pair, tests them on held-out pairs and writes the report', async ({ startFake, tempDir: directory }) => {
    const { baseUrl } = await startFake();
    const out = join(directory, 'rubrics.jsonl');
    const reportFile = join(directory, 'report.json');
    const result = await runCliCaptured([
      'generate', '--pairs', join(fixtures, 'pairs.jsonl'), '--out', out, '--report', reportFile, '--attempts', '2', '--min-criteria', '1',
      '--judge', 'openai:judge', '--judge-base-url', baseUrl, ...commonFlags(directory, baseUrl),
    ]);
    expect(result.code).toBe(0);
    const report = JSON.parse(readFileSync(reportFile, 'utf8'));
    expect(report.input).toMatchObject({ pairs: 4, groups: 2, held_out_pairs: 2 });
    expect(report.generation).toMatchObject({ pairs: 2, kept: 2, keep_rate: 1 });
    // pair-2 ("Blue ... no mix") and pair-4 ("Yellow, since it cannot be mixed") under pair-1's rubric ("Red", "primary", "because").
    expect(report.evaluation.held_out).toMatchObject({ pairs: 2, graded: 2 });
    expect(report.evaluation.same_pairs.note).toMatch(/by construction/);
    expect(report.judge).toMatchObject({ id: 'openai:judge' });
    expect(result.stderr).toContain('kept: 2 of 2 (100.0%) within 2 attempts');
    const kept = readJsonLines(out);
    expect(kept.map((item) => item.id)).toEqual(['pair-1', 'pair-3']);
    expect(kept[0].metadata.contrastive).toMatchObject({ pair_id: 'pair-1', attempts_used: 1 });
    expect(kept[0].rubric.metadata.generation).toMatchObject({ method: 'contrastive', prompt_version: 'contrastive/v1' });
  });
});

describe('rubricate refine', () => {
  test('refines with responses from a file, filters, and reports separation per round', async ({ startFake, tempDir: directory }) => {
    const { baseUrl } = await startFake();
    const input = join(directory, 'items.jsonl');
    writeFileSync(input, JSON.stringify({ id: 'fruit', prompt: 'Name fruit.', rubric: { criteria: [{ text: 'The response mentions "apple".', points: 3 }, { text: 'The response mentions "pear".', points: 3 }] } }));
    const responsesFile = join(directory, 'responses.jsonl');
    writeFileSync(responsesFile, [{ id: 'fruit', responses: ['apple', 'apple pear', 'apple pear fig'] }, { id: 'fruit', response: 'apple pear kiwi' }].map((line) => JSON.stringify(line)).join('\n'));
    const out = join(directory, 'refined.jsonl');
    const reportFile = join(directory, 'report.json');
    const result = await runCliCaptured(['refine', '--input', input, '--responses-file', responsesFile, '--iterations', '1', '--out', out, '--report', reportFile, '--min-criteria', '1', '--judge', 'openai:judge', '--judge-base-url', baseUrl, ...commonFlags(directory, baseUrl)]);
    expect(result.code).toBe(0);
    const [line] = readJsonLines(out);
    expect(line.rubric.criteria.map((criterion: { text: string }) => criterion.text)).toEqual(['The response mentions "apple".', 'The response mentions "pear".', 'The response mentions "fig".']);
    expect(line.metadata.refinement).toMatchObject({ responses: 4, rounds: 1, filter: false, separation_start: { top_ties: 3 }, separation_end: { top_ties: 1 } });
    const report = JSON.parse(readFileSync(reportFile, 'utf8'));
    expect(report.summary).toMatchObject({ prompts: 1, unique_top_start: 0, unique_top_end: 1 });
    expect(report.prompts[0].iterations).toHaveLength(2);
    expect(result.stderr).toContain('unique best response: 0 → 1 of 1');
  });

  test('samples responses from the generator when no file is given', async ({ startFake, tempDir: directory }) => {
    const fake = await startFake();
    const { baseUrl } = fake;
    const input = join(directory, 'prompts.jsonl');
    writeFileSync(input, JSON.stringify({ id: 'q', prompt: 'Say something.', rubric: { criteria: [{ text: 'The response mentions "sampled".', points: 1 }] } }));
    const out = join(directory, 'refined.jsonl');
    const result = await runCliCaptured(['refine', '--input', input, '--responses', '3', '--iterations', '1', '--filter', '--out', out, '--min-criteria', '1', '--quiet', '--judge', 'openai:judge', '--judge-base-url', baseUrl, ...commonFlags(directory, baseUrl)]);
    expect(result.code).toBe(0);
    expect(fake.requests.filter((request) => taskOf(request) === 'respond')).toHaveLength(3);
    expect(readJsonLines(out)[0].metadata.refinement).toMatchObject({ responses: 3, filter: true });
  });
});

describe('real CLI process', () => {
  test('`node bin/rubricate.js generate` writes items that grade reads', async ({ startFake, tempDir: directory }) => {
    const { baseUrl } = await startFake();
    const out = join(directory, 'items.jsonl');
    const generated = await spawnCli(['generate', '--input', join(fixtures, 'prompts.jsonl'), '--out', out, ...commonFlags(directory, baseUrl)]);
    expect(generated.stderr).toContain('3 prompts: 3 rubrics written, 0 failed, 0 invalid');
    expect(generated.code).toBe(0);
    const items = readJsonLines(out).map((item) => ({ ...item, response: 'because of scattering, for example; first and second, clear' }));
    const withResponses = join(directory, 'graded-input.jsonl');
    writeFileSync(withResponses, items.map((item) => JSON.stringify(item)).join('\n'));
    const results = join(directory, 'results.jsonl');
    const graded = await runCliCaptured(['grade', '--input', withResponses, '--out', results, '--judge', 'openai:judge', '--judge-base-url', baseUrl, '--cache', join(directory, 'cache.sqlite'), '--quiet']);
    expect(graded.code).toBe(0);
    expect(readJsonLines(results).map((line) => line.status)).toEqual(['ok', 'ok', 'ok']);
  });
});

const sharedData = dataDirectory();
const realSets = [
  { format: 'llmbar', path: join(sharedData, 'llmbar/LLMBar/Natural/dataset.json') },
  { format: 'pandalm', path: join(sharedData, 'pandalm/testset-v1.json') },
  { format: 'autoj', path: join(sharedData, 'prometheus_eval_benchmarks/autoj_pairwise.jsonl') },
];
const realDataPresent = realSets.map((set) => haveData(set.path, 'generate --pairs on real preference sets (src/generation/cli.test.ts)')).every(Boolean);
if (!realDataPresent) console.warn(`${sharedData}: preference sets not found; skipping the contrastive runs on LLMBar, PandaLM and Auto-J`);

describe.skipIf(!realDataPresent)('rubricate generate --pairs on the real preference sets (scripted generator and judge)', () => {
  test.for(realSets)('$format: reads the set, skips ties, splits per prompt and reports', async ({ format, path }, { startFake, tempDir: directory }) => {
    const { baseUrl } = await startFake();
    const reportFile = join(directory, 'report.json');
    const result = await runCliCaptured([
      'generate', '--pairs', path, '--pairs-format', format, '--limit', '3', '--attempts', '2', '--min-criteria', '1',
      '--out', join(directory, 'rubrics.jsonl'), '--report', reportFile, '--judge', 'openai:judge', '--judge-base-url', baseUrl, ...commonFlags(directory, baseUrl),
    ]);
    expect(result.code).toBe(0);
    const report = JSON.parse(readFileSync(reportFile, 'utf8'));
    expect(report.input.format).toBe(format);
    expect(report.generation.pairs).toBe(3);
    expect(report.generation.kept + report.generation.not_kept).toBe(3);
    expect(report.generation.attempts.total).toBeGreaterThanOrEqual(3);
    if (format === 'llmbar') {
      expect(report.input).toMatchObject({ records: 100, pairs: 100, ties_skipped: 0 });
    } else {
      // PandaLM and Auto-J carry gold ties, which cannot tell a chosen from a rejected response.
      expect(report.input.ties_skipped).toBeGreaterThan(0);
      expect(report.input.pairs + report.input.ties_skipped + report.input.invalid).toBe(report.input.records);
    }
    if (format === 'pandalm') expect(report.input.held_out_pairs).toBeGreaterThan(0);
    expect(readJsonLines(join(directory, 'rubrics.jsonl'))).toHaveLength(report.generation.kept);
  });
});

function spawnCli(args: string[]): Promise<{ code: number | null; stderr: string }> {
  const environment = { ...process.env };
  for (const key of ['OPENAI_BASE_URL', 'OPENAI_API_KEY', 'RUBRICATE_JUDGE', 'RUBRICATE_MODEL']) delete environment[key];
  const child = spawn(process.execPath, [join(projectRoot, 'bin/rubricate.js'), ...args], { cwd: projectRoot, env: environment, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  return new Promise((resolvePromise) => child.on('close', (code) => resolvePromise({ code, stderr })));
}

describe('generate with the scripted generator', () => {
  test('writes rubrics whose made-up criteria carry no check, so nothing is dropped and nothing warned', async ({ tempDir: directory }) => {
    const out = join(directory, 'scripted.jsonl');
    const result = await runCliCaptured(['generate', '--input', join(fixtures, 'prompts.jsonl'), '--generator', 'scripted', '--no-cache', '--out', out]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/warning|not valid JSON/);
    expect(result.stderr).toMatch(/checks: 0 proposed, 0 kept, 0 dropped/);
    const items = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { rubric: { criteria: Array<{ check?: unknown }> } });
    expect(items.length).toBeGreaterThan(0);
    expect(items.flatMap((item) => item.rubric.criteria).every((criterion) => criterion.check === undefined)).toBe(true);
  });
});
