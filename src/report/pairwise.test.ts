import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import { exitCodes, RubricateError } from '../errors.js';
import { CompareSummaryBuilder, type CompareRecord } from '../pipeline/compare.js';
import { bootstrap } from '../statistics/bootstrap.js';
import { mean } from '../statistics/descriptive.js';
import { embedPayload } from './encoding.js';
import { rubricateReadEmbedded } from './client/decode.js';
import { rubricateDecodePair } from './client/pairwise-decode.js';
import { buildReport, detectReportInput, writeReportFromResults } from './index.js';
import { markdownCell, renderCompareMarkdown } from './markdown.js';
import { collectPairwise } from './pairwise.js';
import { syntheticCompareRecords } from './synthetic-pairwise.js';
import type { CompareReportPayload, PairTexts } from './types.js';
import { test } from '../testing/vitest-fixtures.js';

let directory: string;

function write(name: string, text: string): string {
  const file = join(directory, name);
  writeFileSync(file, text);
  return file;
}

function jsonl(records: readonly unknown[]): string {
  return records.map((record) => JSON.stringify(record)).join('\n') + '\n';
}

const hostile = '</script><script>window.__injected = 1</script> | pipe `tick`';
const sources = ['natural', 'adversarial', `odd ${hostile}`];
const records: CompareRecord[] = [...syntheticCompareRecords({ pairs: 160, seed: 9, criteriaPerPair: 2, labels: true, sources, callErrorRate: 0.04, invalidRate: 0.03 })];
// A pair without a source among sourced ones, one judged in one order only, and a hostile criterion text.
delete records[5].source;
{
  const oneOrder = records[4];
  const overall = { ...oneOrder.overall!, orders: { ab: oneOrder.orders.ab }, consistent: null, winner: oneOrder.orders.ab!, explanations: { ab: oneOrder.overall!.explanations!.ab } };
  records[4] = { ...oneOrder, overall, orders: overall.orders, consistent: null, winner: overall.winner };
}
records[7].criteria[0] = { ...records[7].criteria[0], text: hostile };
records[8] = { ...records[8], response_a: hostile, prompt: [{ role: 'system', content: 'Judge kindly.' }, { role: 'user', content: hostile }] };
// The same id twice.
records[9] = { ...records[9], id: records[10].id };
const unreadable = '{"id": "broken", "status": "graded", "winner": "A"}';
let compareFile: string;
test.beforeAll(({ fileTempDir }) => {
  directory = fileTempDir;
  compareFile = write('compare.jsonl', jsonl(records.slice(0, 40)) + unreadable + '\n' + jsonl(records.slice(40)));
});

/** Win-rate score of a verdict: inconsistent counts as a tie. */
function winScore(winner: CompareRecord['winner']): number {
  return winner === 'A' ? 1 : winner === 'B' ? 0 : 0.5;
}

/** The pairs the summary's rates are over: readable, status ok, with a verdict. */
function decided(list: readonly CompareRecord[]): CompareRecord[] {
  return list.filter((record) => record.status === 'ok' && record.winner !== null);
}

describe('collectPairwise', () => {
  it('recomputes counts, rates and intervals from the records', async () => {
    const warnings: string[] = [];
    const collected = await collectPairwise(compareFile, { onWarning: (message) => warnings.push(message) });
    const figures = collected.summary.figures;
    expect(warnings).toEqual([`${compareFile}:41 field status: not a compare line: Invalid option: expected one of "ok"|"error"|"invalid"`]);
    expect(collected.summary.invalidLines).toEqual([{ line: 41, message: warnings[0] }]);

    const ok = decided(records);
    const invalid = records.filter((record) => record.status === 'invalid').length;
    expect(invalid).toBeGreaterThan(0);
    expect(figures.n).toBe(records.length + 1);
    expect(figures.n_invalid).toBe(invalid + 1);
    expect(figures.n_ok).toBe(ok.length);
    expect(figures.n_error).toBe(records.length - invalid - ok.length);
    expect(figures.n_error).toBeGreaterThan(0);
    expect(figures.overall).toMatchObject({
      win: ok.filter((record) => record.winner === 'A').length,
      loss: ok.filter((record) => record.winner === 'B').length,
      tie: ok.filter((record) => record.winner === 'tie').length,
      inconsistent: ok.filter((record) => record.winner === 'inconsistent').length,
    });
    expect(figures.overall.inconsistent).toBeGreaterThan(0);

    const scores = ok.map((record) => winScore(record.winner));
    expect(figures.overall.win_rate.value).toBeCloseTo(scores.reduce((total, score) => total + score, 0) / scores.length, 12);
    expect(figures.overall.win_rate.ci95).toEqual(bootstrap(scores, mean, 1000, 11).ci95);
    expect(figures.overall.tie_rate.value).toBeCloseTo(ok.filter((record) => record.winner === 'tie').length / ok.length, 12);
    const bothOrders = ok.filter((record) => record.consistent !== null);
    expect(bothOrders.length).toBe(ok.length - 1);
    expect(figures.overall.position_consistency.value).toBeCloseTo(bothOrders.filter((record) => record.consistent).length / bothOrders.length, 12);
    const [low, high] = figures.overall.position_consistency.ci95!;
    expect(low).toBeLessThanOrEqual(figures.overall.position_consistency.value!);
    expect(high).toBeGreaterThanOrEqual(figures.overall.position_consistency.value!);

    expect(collected.summary.swappedPairs).toBe(records.filter((record) => record.orders.ba !== undefined).length);
    expect(collected.summary.labelledPairs).toBe(records.filter((record) => record.label).length);
    expect(collected.summary.duplicateIds).toBe(1);
    expect(figures.usage.calls).toBe(records.reduce((total, record) => total + (record.usage?.calls ?? 0), 0));
    expect(collected.summary.judges.map((judge) => judge.model)).toEqual(['gpt-4.1-mini']);
    expect(collected.summary.costUsd).toBeGreaterThan(0);
  });

  it('agrees exactly with the summary rubricate compare writes for the same records', async () => {
    const collected = await collectPairwise(compareFile);
    const builder = new CompareSummaryBuilder();
    for (const record of records.slice(0, 40)) builder.add(record);
    builder.add({ id: '', status: 'invalid', winner: null, consistent: null, orders: {}, criteria: [], rubricate_version: '' });
    for (const record of records.slice(40)) builder.add(record);
    expect(collected.summary.figures).toEqual(builder.finish());
  });

  it('scores agreement with gold labels per order, as LLMBar defines it', async () => {
    const { summary } = await collectPairwise(compareFile);
    const agreement = summary.figures.agreement!.overall;
    // Invalid pairs carry no label; every other pair has one.
    const labelled = records.filter((record) => record.label && record.status !== 'invalid');
    const verdict = (record: CompareRecord, order: 'ab' | 'ba') => record.orders[order] ?? 'invalid';
    expect(agreement.pairs).toBe(labelled.length);
    expect(agreement.accuracy.original).toBeCloseTo(labelled.filter((record) => verdict(record, 'ab') === record.label).length / labelled.length, 12);
    expect(agreement.accuracy.swapped).toBeCloseTo(labelled.filter((record) => verdict(record, 'ba') === record.label).length / labelled.length, 12);
    expect(agreement.accuracy.average).toBeCloseTo((agreement.accuracy.original! + agreement.accuracy.swapped!) / 2, 12);
    expect(agreement.positionalAgreement).toBeCloseTo(labelled.filter((record) => verdict(record, 'ab') === verdict(record, 'ba')).length / labelled.length, 12);
    // Per source, the same definitions over that source's pairs.
    const natural = labelled.filter((record) => record.source === 'natural');
    expect(summary.figures.agreement!.bySource.natural.accuracy.original).toBeCloseTo(natural.filter((record) => verdict(record, 'ab') === record.label).length / natural.length, 12);
  });

  it('tallies every criterion and every source', async () => {
    const { summary } = await collectPairwise(compareFile);
    const expectedCriteria = new Map<string, { win: number; tie: number; loss: number; inconsistent: number; errors: number; bothOrders: number; consistentPairs: number }>();
    for (const record of records) {
      for (const comparison of record.criteria) {
        const key = `${comparison.id}|${comparison.text}`;
        const tally = expectedCriteria.get(key) ?? { win: 0, tie: 0, loss: 0, inconsistent: 0, errors: 0, bothOrders: 0, consistentPairs: 0 };
        const outcome = comparison.winner === 'A' ? 'win' : comparison.winner === 'B' ? 'loss' : comparison.winner === 'tie' ? 'tie' : comparison.winner === 'inconsistent' ? 'inconsistent' : 'errors';
        tally[outcome] += 1;
        if (comparison.orders.ab && comparison.orders.ba) {
          tally.bothOrders += 1;
          if (comparison.orders.ab === comparison.orders.ba) tally.consistentPairs += 1;
        }
        expectedCriteria.set(key, tally);
      }
    }
    // c1's hostile text on one pair makes its own row: criteria are grouped by id and text.
    expect(summary.criteria).toHaveLength(3);
    for (const row of summary.criteria) expect(row).toEqual({ id: row.id, text: row.text, ...expectedCriteria.get(`${row.id}|${row.text}`) });
    expect(summary.criteria.map((row) => row.win + row.tie + row.loss + row.inconsistent + row.errors)).toEqual([...summary.criteria.map((row) => row.win + row.tie + row.loss + row.inconsistent + row.errors)].sort((a, b) => b - a));

    const readable = records;
    const sourceNames = [...new Set(readable.map((record) => record.source ?? null))];
    expect(summary.sources.map((row) => row.source).sort()).toEqual(sourceNames.sort());
    for (const row of summary.sources) {
      const members = readable.filter((record) => (record.source ?? null) === row.source);
      const ok = decided(members);
      expect(row.n).toBe(members.length);
      expect(row.n_invalid).toBe(members.filter((record) => record.status === 'invalid').length);
      expect(row.win).toBe(ok.filter((record) => record.winner === 'A').length);
      expect(row.loss).toBe(ok.filter((record) => record.winner === 'B').length);
      if (ok.length > 0) expect(row.win_rate.value).toBeCloseTo(ok.reduce((total, record) => total + winScore(record.winner), 0) / ok.length, 12);
      else expect(row.win_rate).toEqual({ value: null, ci95: null });
    }
    expect(summary.sources.map((row) => row.n)).toEqual([...summary.sources.map((row) => row.n)].sort((a, b) => b - a));
  });

  it('notes when the summary file beside the records disagrees with them', async () => {
    const file = write('checked.jsonl', jsonl(records));
    const builder = new CompareSummaryBuilder();
    for (const record of records) builder.add(record);
    const stored = builder.finish();
    writeFileSync(`${file}.summary.json`, JSON.stringify(stored, null, 2));
    expect((await collectPairwise(file)).summary.summaryFile).toEqual({ label: 'checked.jsonl.summary.json', differences: [] });
    writeFileSync(`${file}.summary.json`, JSON.stringify({ ...stored, n: stored.n + 2, overall: { ...stored.overall, win: stored.overall.win + 2 } }));
    expect((await collectPairwise(file)).summary.summaryFile!.differences).toEqual([
      `pairs: ${stored.n + 2} in the summary, ${stored.n} in the records`,
      `win: ${stored.overall.win + 2} in the summary, ${stored.overall.win} in the records`,
    ]);
    expect((await collectPairwise(compareFile)).summary.summaryFile).toBeNull();
  });
});

/** The page's own decoder, run in Node: the modules the report bundles. */
const pairDecoder = { readEmbedded: rubricateReadEmbedded, decodePair: rubricateDecodePair };

/** What the page should give back for a record: its fields minus provenance the view summarises. */
function expectedPair(record: CompareRecord, line: number): Record<string, unknown> {
  const { judge: _judge, usage: _usage, rubricate_version: _version, line: _line, error, ...rest } = record;
  const expected: Record<string, unknown> = { ...rest, line, criteria: record.criteria };
  if (error) expected.error = { code: error.code, message: error.message };
  if (record.prompt === undefined) expected.prompt = [];
  expected.response_a = record.response_a ?? null;
  expected.response_b = record.response_b ?? null;
  if (record.status === 'invalid') expected.criteria = [];
  return expected;
}

describe('compare view data in the page', () => {
  for (const compression of ['never', 'always'] as const) {
    it(`gives back every field of every pair (${compression === 'never' ? 'plain JSON' : 'gzip + base64'})`, async () => {
      const file = write(`round-trip-${compression}.jsonl`, jsonl(records));
      const document = await buildReport({ input: file });
      const embedded = embedPayload(document.payload, compression);
      const payload = (await pairDecoder.readEmbedded(embedded.encoding, embedded.text)) as CompareReportPayload;
      expect(payload.view).toBe('compare');
      const chunks: PairTexts[] = [];
      for (const chunk of document.texts[0]) {
        const each = embedPayload(chunk, compression);
        chunks.push((await pairDecoder.readEmbedded(each.encoding, each.text)) as PairTexts);
      }
      records.forEach((record, index) => {
        expect(pairDecoder.decodePair(payload, chunks[Math.floor(index / payload.textChunkSize)], index)).toEqual(expectedPair(record, index + 1));
      });
    });
  }

  it('keeps chunk-local indices right across chunk boundaries, and decodes verdicts without texts', async () => {
    const collected = await collectPairwise(compareFile, { textChunkSize: 7 });
    const payload = { view: 'compare', summary: collected.summary, strings: collected.strings, pairs: collected.pairs, comparisons: collected.comparisons, textChunkSize: 7 } as unknown as CompareReportPayload;
    expect(collected.texts.map((chunk) => chunk.firstPair).slice(0, 3)).toEqual([0, 7, 14]);
    records.forEach((record, index) => {
      // The unreadable line 41 sits between records 39 and 40.
      const line = index < 40 ? index + 1 : index + 2;
      expect(pairDecoder.decodePair(payload, collected.texts[Math.floor(index / 7)], index)).toEqual(expectedPair(record, line));
    });
    const bare = pairDecoder.decodePair(payload, null, 7) as { overall: { explanations?: unknown; orders: unknown }; prompt?: unknown };
    expect(bare.prompt).toBeUndefined();
    expect(bare.overall.explanations).toBeUndefined();
    expect(bare.overall.orders).toEqual(records[7].overall!.orders);
  });
});

describe('detectReportInput with compare files', () => {
  it('tells compare records from results records, whatever the first line looks like', async () => {
    expect(await detectReportInput(compareFile)).toEqual({ kind: 'compare' });
    const invalidFirst = records.find((record) => record.status === 'invalid')!;
    expect(await detectReportInput(write('invalid-first.jsonl', jsonl([invalidFirst, records[0]])))).toEqual({ kind: 'compare' });
    expect(await detectReportInput(write('broken-first.jsonl', `not json\n{"id": \n${JSON.stringify(records[0])}\n`))).toEqual({ kind: 'compare' });
    // A first line longer than the 64 kB the detector peeks at.
    const long = { ...records[0], response_a: 'x'.repeat(100_000) };
    expect(await detectReportInput(write('long-first.jsonl', jsonl([long, records[1]])))).toEqual({ kind: 'compare' });
    expect(await detectReportInput(write('long-only.jsonl', JSON.stringify(long)))).toEqual({ kind: 'compare' });
    expect(await detectReportInput(write('results-like.jsonl', jsonl([{ id: 'a', status: 'ok', score: 0.5, criteria: [] }])))).toEqual({ kind: 'results' });
    expect(await detectReportInput(write('empty.jsonl', ''))).toEqual({ kind: 'results' });
  });
});

describe('compare report output', () => {
  it('gives the headline figures and tables in Markdown, with cells that cannot break the table', async () => {
    const document = await buildReport({ input: compareFile });
    const payload = document.payload as CompareReportPayload;
    const markdown = renderCompareMarkdown(payload);
    const overall = payload.summary.figures.overall;
    const percent = (value: number) => `${(value * 100).toFixed(1)}%`;
    expect(markdown).toMatch(/^# Pairwise comparison · compare\.jsonl\n/);
    expect(markdown).toContain(`**Win rate of A: ${percent(overall.win_rate.value!)}** (95% CI ${percent(overall.win_rate.ci95![0])} – ${percent(overall.win_rate.ci95![1])}`);
    expect(markdown).toContain(`position consistency ${percent(overall.position_consistency.value!)}`);
    expect(markdown).toContain(`A better ${overall.win} · tie ${overall.tie} · B better ${overall.loss} · order-inconsistent ${overall.inconsistent}`);
    expect(markdown).toContain(`| accuracy · original order | ${payload.summary.figures.agreement!.overall.accuracy.original!.toFixed(4)} |`);
    expect(markdown).toContain('1 unreadable line counted as invalid pairs');
    for (const row of payload.summary.criteria) expect(markdown).toContain(`| ${markdownCell(row.text, 100)} | \`${row.id}\` |`);
    for (const row of payload.summary.sources) expect(markdown).toContain(`| ${row.source === null ? '(no source)' : markdownCell(row.source, 80)} | ${row.n} | ${row.win} |`);
    expect(markdown).not.toContain('<script>');
    for (const line of markdown.split('\n').filter((each) => each.includes('odd &lt;/script&gt;'))) expect(line.split(/(?<!\\)\|/).length).toBe(14);
  });

  it('writes the HTML view and refuses --compare with a compare file', async () => {
    const out = join(directory, 'compare.html');
    const written = await writeReportFromResults({ input: compareFile, out });
    expect(written).toMatchObject({ format: 'html', view: 'compare', invalidLines: 1 });
    const html = readFileSync(out, 'utf8');
    // Payload, Chart.js, page code and one text chunk: the hostile texts stayed inside JSON.
    expect(html.match(/<script/g)).toHaveLength(4);
    expect(html).toContain('<title>Pairwise comparison · compare.jsonl</title>');
    await expect(writeReportFromResults({ input: compareFile, compare: compareFile, out })).rejects.toSatisfy((error: unknown) => RubricateError.isInstance(error) && error.code === 'CONFIG_INVALID');
    const results = write('results.jsonl', jsonl([{ id: 'a', status: 'ok', score: 1, criteria: [], rubricate_version: '0' }]));
    await expect(writeReportFromResults({ input: results, compare: compareFile, out })).rejects.toSatisfy((error: unknown) => RubricateError.isInstance(error) && error.code === 'INPUT_INVALID');
  });

  it('rubricate report prints the compare summary as Markdown', async () => {
    const output = { stdout: [] as string[], stderr: [] as string[] };
    const context = { stdout: (text: string) => output.stdout.push(text), stderr: (text: string) => output.stderr.push(text), signal: new AbortController().signal };
    expect(await runCli(['report', '--input', compareFile, '--out', '-', '--title', 'LLMBar run'], context)).toBe(exitCodes.success);
    expect(output.stdout.join('\n')).toMatch(/^# LLMBar run\n\n\*\*Win rate of A: /);
    expect(output.stderr.join('\n')).toContain(`invalid input: ${compareFile}:41`);
  });
});
