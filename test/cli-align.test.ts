/**
 * `rubricate align` end to end, on a scripted judge (real-model gains are not measured here):
 * the judge is right on two criteria, wrong on one unless an example of it is in the prompt,
 * wrong on another unless it is reworded, and wrong on a last one whatever happens. Alignment
 * must lift test-split agreement, keep only the rewording that helps, never let a test item's
 * text into a prompt other than its own grading, and apply with --alignment to grade, compare
 * and rejudge, its hash in cache keys and provenance.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { binaryVerdict, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const criteria = [
  { id: 'easy1', text: 'Names the dose', points: 2 },
  { id: 'easy2', text: 'Gives the schedule', points: 1 },
  { id: 'example', text: 'Warns about interactions', points: 2 },
  { id: 'reword', text: 'Mentions the missed-dose rule', points: 1 },
  { id: 'stubborn', text: 'Uses a reassuring tone', points: 1 },
];

/** The reviewers' verdict on an item's criterion (both verdicts occur for every criterion). */
function truth(item: number, criterion: string): boolean {
  return createHash('sha256').update(`${item}:${criterion}`).digest()[0] % 2 === 0;
}

/** The item's marker: it appears in its texts and nowhere else, so a prompt holding it holds the item. */
const marker = (item: number) => `[[item ${item}]]`;

function writeCase(directory: string, count: number): { items: string; labels: string } {
  const items = join(directory, 'items.jsonl');
  const lines = Array.from({ length: count }, (_, index) =>
    JSON.stringify({
      id: `q${index}`,
      prompt: `How should I take this medicine? ${marker(index)}`,
      // The response says which criteria it meets, so the scripted judge knows the right verdict.
      response: `Reply ${marker(index)}. ${criteria.map((criterion) => `${criterion.id}=${truth(index, criterion.id) ? 'yes' : 'no'}`).join(' ')}`,
      rubric: { id: 'medicine', criteria },
    }),
  );
  writeFileSync(items, `${lines.join('\n')}\n`);
  const labels = join(directory, 'labels.jsonl');
  writeFileSync(labels, `${Array.from({ length: count }, (_, index) => JSON.stringify({ id: `q${index}`, labels: Object.fromEntries(criteria.map((criterion) => [criterion.id, truth(index, criterion.id)])), reviewer: 'ana' })).join('\n')}\n`);
  return { items, labels };
}

function itemOf(request: FakeJudgeRequest): number {
  return Number(/\[\[item (\d+)\]\]/.exec(request.response ?? '')?.[1]);
}

/** Right where the script says so, wrong elsewhere. */
function scriptedJudge(request: FakeJudgeRequest) {
  const [criterion] = request.criteria;
  const right = truth(itemOf(request), criterion.id);
  const examplesBlock = /<examples-[0-9a-f]{16}>[\s\S]*<\/examples-[0-9a-f]{16}>/.exec(request.userText)?.[0] ?? '';
  const correct =
    criterion.id.startsWith('easy') ||
    (criterion.id === 'example' && examplesBlock.includes(`Criterion: ${criteria[2].text}`)) ||
    (criterion.id === 'reword' && criterion.text.includes('(stated outright)'));
  return { content: binaryVerdict(correct ? right : !right) };
}

/** Proposes a rewording: one that helps for `reword`, one that does not elsewhere. */
function generatorScript(request: FakeJudgeRequest) {
  const text = /<criterion-[0-9a-f]{16}>\n([\s\S]*?)\n<\/criterion-[0-9a-f]{16}>/.exec(request.userText)?.[1] ?? '';
  return { content: { text: text === criteria[3].text ? `${text} (stated outright)` : `${text}, as a whole` } };
}

interface AlignmentFile {
  format: string;
  hash: string;
  examples: { criteria: Record<string, Array<{ label: boolean; response: string; source: string }>>; tags: Record<string, unknown[]> };
  rewordings: Record<string, { text: string; original: string }>;
  calibrator: { threshold: number } | null;
  fit: {
    split: { train: string[]; test: string[] };
    report: {
      test: { before: { accuracy: number; cohenKappa: number; balancedF1: number; intervals: { accuracy: { lower: number; upper: number } } }; after: { accuracy: number; cohenKappa: number; balancedF1: number }; byCriterion: Record<string, { before: number; after: number }> };
      rewordings: Array<{ criterion: string; kept: boolean; trainAccuracyBefore: number; trainAccuracyAfter: number }>;
      usage: { judge: { calls: number; cache_hits: number }; generator: { calls: number } };
      split: { items: { train: number; test: number } };
    };
  };
}

describe('rubricate align', () => {
  test('lifts test agreement on a scripted judge, keeps only the rewording that helps, and no test text reaches another prompt', async ({ startJudge, tempDir }) => {
    const judge = await startJudge(scriptedJudge);
    const generator = await startJudge(generatorScript);
    const { items, labels } = writeCase(tempDir, 30);
    const judgeFlags = ['--judge', 'openai:fake-judge', '--judge-base-url', judge.baseUrl, '--cache', join(tempDir, 'cache.sqlite'), '--quiet'];
    const results = join(tempDir, 'results.jsonl');
    expect((await runCliInProcess(['grade', '--input', items, '--out', results, ...judgeFlags])).code).toBe(0);
    const gradingCalls = judge.requests.length;

    const alignmentFile = join(tempDir, 'alignment.json');
    const aligned = await runCliInProcess(['align', '--input', results, '--labels', labels, '--out', alignmentFile, '--split-seed', '3', '--bootstrap-resamples', '200', ...judgeFlags, '--generator', 'openai:fake-generator', '--generator-base-url', generator.baseUrl]);
    expect(aligned.code, aligned.stderr).toBe(0);
    const alignment = JSON.parse(readFileSync(alignmentFile, 'utf8')) as AlignmentFile;
    const { report, split } = alignment.fit;
    expect(split.test).toHaveLength(9);
    expect(split.train).toHaveLength(21);
    expect(new Set([...split.train, ...split.test]).size).toBe(30);
    // Scripted: two of five criteria right before; four after (examples fix one, a rewording another).
    expect(report.test.before.accuracy).toBeCloseTo(0.4, 12);
    expect(report.test.after.accuracy).toBeCloseTo(0.8, 12);
    expect(report.test.after.cohenKappa).toBeGreaterThan(report.test.before.cohenKappa);
    expect(report.test.after.balancedF1).toBeGreaterThan(report.test.before.balancedF1);
    expect(report.test.before.intervals.accuracy.lower).toBeLessThanOrEqual(0.4);
    expect(report.test.byCriterion).toMatchObject({ easy1: { before: 1, after: 1 }, example: { before: 0, after: 1 }, reword: { before: 0, after: 1 }, stubborn: { before: 0, after: 0 } });
    // Rewordings: tried for the two criteria the examples did not fix; kept only where train agreement rose.
    expect(report.rewordings.map((entry) => [entry.criterion, entry.kept])).toEqual([
      ['reword', true],
      ['stubborn', false],
    ]);
    expect(alignment.rewordings).toEqual({ reword: { text: `${criteria[3].text} (stated outright)`, original: criteria[3].text } });
    // Examples: balanced, from train items only.
    const trainResponses = new Set(split.train.map((id) => `Reply ${marker(Number(id.slice(1)))}`));
    for (const examples of Object.values(alignment.examples.criteria)) {
      expect(examples.filter((example) => example.label).length).toBe(examples.filter((example) => !example.label).length);
      for (const example of examples) expect(trainResponses.has(example.response.split('.')[0])).toBe(true);
    }
    // The baseline came from the store (the replies of the grading run): no call repeated.
    const alignCalls = judge.requests.slice(gradingCalls);
    expect(report.usage.judge.cache_hits).toBeGreaterThanOrEqual(150);
    expect(report.usage.judge.calls).toBe(alignCalls.length);
    expect(report.usage.generator.calls).toBe(2);

    // No test item's text reaches a prompt other than its own grading, nor the generator.
    const testMarkers = split.test.map((id) => marker(Number(id.slice(1))));
    for (const request of alignCalls) {
      const own = marker(itemOf(request));
      for (const testMarker of testMarkers) if (testMarker !== own) expect(request.userText.includes(testMarker), `${testMarker} in a prompt for ${own}`).toBe(false);
    }
    for (const request of generator.requests) for (const testMarker of testMarkers) expect(JSON.stringify(request.messages)).not.toContain(testMarker);
    // Test items were graded with the alignment and their examples came from train items.
    const alignedTest = alignCalls.filter((request) => testMarkers.includes(marker(itemOf(request))) && request.userText.includes('<examples-'));
    expect(alignedTest.length).toBeGreaterThan(0);
    expect(aligned.stderr).toMatch(/test split \(9 items never used to align\):\n {2}before: κ /);

    // Applied with --alignment: its hash in provenance and in cache keys (new calls), and the reworded text shown.
    const alignedResults = join(tempDir, 'aligned.jsonl');
    const before = judge.requests.length;
    const graded = await runCliInProcess(['grade', '--input', items, '--out', alignedResults, '--alignment', alignmentFile, ...judgeFlags]);
    expect(graded.code, graded.stderr).toBe(0);
    const line = JSON.parse(readFileSync(alignedResults, 'utf8').split('\n')[0]) as { judge: { alignment: string; template_version: string }; criteria: Array<{ id: string; text: string }> };
    expect(line.judge.alignment).toBe(alignment.hash);
    expect(line.judge.template_version).toBe(`per-criterion/v2+aligned-${alignment.hash.slice(0, 12)}`);
    // The rubric's own text stays on the results line; the judge saw the rewording.
    expect(line.criteria.find((criterion) => criterion.id === 'reword')?.text).toBe(criteria[3].text);
    const sent = judge.requests.slice(before);
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((request) => request.criteria[0].id === 'reword').every((request) => request.criteria[0].text.endsWith('(stated outright)'))).toBe(true);
    // meta on the held-out items only: the re-graded agreement on the test split matches align's "after".
    const meta = join(tempDir, 'meta.json');
    const held = await runCliInProcess(['meta', '--format', 'results', '--input', alignedResults, '--labels', labels, '--held-out', alignmentFile, '--out', meta, '--bootstrap-resamples', '0', '--quiet']);
    expect(held.code, held.stderr).toBe(0);
    const metaReport = JSON.parse(readFileSync(meta, 'utf8')) as { overall: { accuracy: number; records: number; intervals: { accuracy: unknown } } };
    expect(metaReport.overall.records).toBe(45);
    // --bootstrap-resamples 0 turns the intervals off.
    expect(metaReport.overall.intervals.accuracy).toBeNull();
    expect(metaReport.overall.accuracy).toBeCloseTo(report.test.after.accuracy, 12);

    // rejudge applies it the same way: the aligned results re-judged with the alignment are unchanged.
    const rejudged = join(tempDir, 'rejudged.jsonl');
    const calls = judge.requests.length;
    const again = await runCliInProcess(['rejudge', '--input', alignedResults, '--out', rejudged, '--alignment', alignmentFile, ...judgeFlags]);
    expect(again.code, again.stderr).toBe(0);
    expect(judge.requests).toHaveLength(calls);
    expect(readFileSync(rejudged, 'utf8')).toBe(readFileSync(alignedResults, 'utf8'));
  });

  test('no example chosen: the progress line says why', async ({ tempDir }) => {
    const examples = join(projectRoot, 'examples/meta');
    const results = join(tempDir, 'results.jsonl');
    expect((await runCliInProcess(['grade', '--input', join(examples, 'items.jsonl'), '--judge', 'scripted', '--quiet', '--out', results])).code).toBe(0);
    // Every label "met": no criterion has the met/not-met pair an example needs.
    const labels = join(tempDir, 'labels.jsonl');
    const lines = readFileSync(join(examples, 'labels.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { id: string; labels: Record<string, boolean> });
    writeFileSync(labels, lines.map((line) => JSON.stringify({ id: line.id, labels: Object.fromEntries(Object.keys(line.labels).map((id) => [id, true])) })).join('\n'));
    const result = await runCliInProcess(['align', '--input', results, '--labels', labels, '--no-reword', '--out', join(tempDir, 'alignment.json')]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^examples: 0 from train, for 0 criteria and 0 tags \(examples come in met\/not-met pairs, and each of the 4 labelled criteria has only one of the two among the \d+ train items/m);
  });

  test('probability verdicts: a calibrator fitted on train moves the threshold to where the labels are', async ({ startJudge, tempDir }) => {
    // A judge that says P(met) = 0.35 when the criterion is met and 0.05 when it is not: always "not met" at 0.5.
    const judge = await startJudge((request) => {
      const right = truth(itemOf(request), request.criteria[0].id);
      const p = right ? 0.35 : 0.05;
      const tokens = ['{"explanation": "x", "criteria_met": ', 'false', '}'].map((token) => ({ token, logprob: 0, top_logprobs: token === 'false' ? [{ token: 'false', logprob: Math.log(1 - p) }, { token: 'true', logprob: Math.log(p) }] : [{ token, logprob: 0 }] }));
      return { content: '{"explanation": "x", "criteria_met": false}', logprobs: { content: tokens } };
    });
    const { items, labels } = writeCase(tempDir, 20);
    const judgeFlags = ['--judge', 'openai:fake-judge', '--judge-base-url', judge.baseUrl, '--cache', join(tempDir, 'cache.sqlite'), '--quiet', '--verdict', 'probability'];
    const results = join(tempDir, 'results.jsonl');
    expect((await runCliInProcess(['grade', '--input', items, '--out', results, ...judgeFlags])).code).toBe(0);
    const alignmentFile = join(tempDir, 'alignment.json');
    const aligned = await runCliInProcess(['align', '--input', results, '--labels', labels, '--out', alignmentFile, '--no-reword', '--bootstrap-resamples', '0', ...judgeFlags]);
    expect(aligned.code, aligned.stderr).toBe(0);
    const alignment = JSON.parse(readFileSync(alignmentFile, 'utf8')) as AlignmentFile;
    expect(alignment.calibrator!.threshold).toBeGreaterThan(0.05);
    expect(alignment.calibrator!.threshold).toBeLessThanOrEqual(1);
    expect(alignment.fit.report.test.after.accuracy).toBe(1);
    expect(alignment.fit.report.test.before.accuracy).toBeLessThan(0.8);
    // A calibrator of P(met) cannot apply to binary verdicts: refused by name.
    const binary = await runCliInProcess(['grade', '--input', items, '--out', join(tempDir, 'binary.jsonl'), '--alignment', alignmentFile, ...judgeFlags.filter((flag) => flag !== '--verdict' && flag !== 'probability')]);
    expect(binary.code).toBe(2);
    expect(binary.stderr).toContain('--verdict probability');
  });

  test('splits by text: items repeating a text under other ids stay on one side, no test text is an example, and the repeats are counted', async ({ startJudge, tempDir }) => {
    const judge = await startJudge(scriptedJudge);
    const { items, labels } = writeCase(tempDir, 12);
    // Every text again under another id, with the same labels (as real data sets repeat texts).
    const original = readFileSync(items, 'utf8').trim().split('\n');
    const repeats = original.map((line) => JSON.stringify({ ...(JSON.parse(line) as Record<string, unknown>), id: `again-${(JSON.parse(line) as { id: string }).id}` }));
    writeFileSync(items, `${[...original, ...repeats].join('\n')}\n`);
    const labelLines = readFileSync(labels, 'utf8').trim().split('\n');
    writeFileSync(labels, `${[...labelLines, ...labelLines.map((line) => line.replace('"id":"q', '"id":"again-q'))].join('\n')}\n`);
    const judgeFlags = ['--judge', 'openai:fake-judge', '--judge-base-url', judge.baseUrl, '--cache', join(tempDir, 'cache.sqlite'), '--quiet'];
    const results = join(tempDir, 'results.jsonl');
    expect((await runCliInProcess(['grade', '--input', items, '--out', results, ...judgeFlags])).code).toBe(0);
    const alignmentFile = join(tempDir, 'alignment.json');
    const aligned = await runCliInProcess(['align', '--input', results, '--labels', labels, '--out', alignmentFile, '--no-reword', '--bootstrap-resamples', '0', '--examples-per-verdict', '5', ...judgeFlags.filter((flag) => flag !== '--quiet')]);
    expect(aligned.code, aligned.stderr).toBe(0);
    const alignment = JSON.parse(readFileSync(alignmentFile, 'utf8')) as AlignmentFile & { fit: { report: { split: { duplicates: { items: number; texts: number } } } } };
    const { split, report } = alignment.fit;
    expect(report.split.duplicates).toEqual({ items: 24, texts: 12 });
    expect(aligned.stderr).toContain('24 items share their text with another (12 texts), each text kept on one side');
    const textOf = (id: string) => Number(/\d+$/.exec(id)?.[0]);
    const testTexts = new Set(split.test.map(textOf));
    expect(testTexts.size).toBeGreaterThan(0);
    // Both ids of a text on the same side.
    for (const id of split.train) expect(testTexts.has(textOf(id)), `${id} in train, its text in test`).toBe(false);
    expect(split.test).toHaveLength(testTexts.size * 2);
    // No example shows a test item's text.
    const examples = Object.values(alignment.examples.criteria).flat();
    expect(examples.length).toBeGreaterThan(0);
    for (const example of examples) {
      const shown = Number(/\[\[item (\d+)\]\]/.exec(example.response)?.[1]);
      expect(testTexts.has(shown), `example shows test text ${shown}`).toBe(false);
    }
  });

  test('an unreadable generator answer is an error, never a skipped rewording; an edited alignment is refused', async ({ startJudge, tempDir }) => {
    const judge = await startJudge(scriptedJudge);
    const generator = await startJudge(() => ({ content: 'I would rather not.' }));
    const { items, labels } = writeCase(tempDir, 12);
    const judgeFlags = ['--judge', 'openai:fake-judge', '--judge-base-url', judge.baseUrl, '--cache', join(tempDir, 'cache.sqlite'), '--quiet'];
    const results = join(tempDir, 'results.jsonl');
    expect((await runCliInProcess(['grade', '--input', items, '--out', results, ...judgeFlags])).code).toBe(0);
    const alignmentFile = join(tempDir, 'alignment.json');
    const failed = await runCliInProcess(['align', '--input', results, '--labels', labels, '--out', alignmentFile, '--generator-attempts', '2', ...judgeFlags, '--generator', 'openai:fake-generator', '--generator-base-url', generator.baseUrl]);
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/generator answer rejected after 2 attempts/);
    expect(existsSync(alignmentFile)).toBe(false);
    expect(generator.requests).toHaveLength(2);

    const done = await runCliInProcess(['align', '--input', results, '--labels', labels, '--out', alignmentFile, '--no-reword', ...judgeFlags]);
    expect(done.code, done.stderr).toBe(0);
    const edited = JSON.parse(readFileSync(alignmentFile, 'utf8')) as AlignmentFile;
    edited.rewordings = { easy1: { text: 'Always met.', original: criteria[0].text } };
    writeFileSync(alignmentFile, JSON.stringify(edited));
    const refused = await runCliInProcess(['grade', '--input', items, '--out', join(tempDir, 'x.jsonl'), '--alignment', alignmentFile, ...judgeFlags]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/its hash does not match/);
  });
});
