import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../cli/main.js';
import { exitCodes, RubricateError } from '../errors.js';
import { computeBinaryMeta } from '../meta/binary-metrics.js';
import { computePairwiseMeta } from '../scoring/pairwise-metrics.js';
import type { ResultRecord } from '../results/results.js';
import { buildReport, detectReportInput, renderResultsMarkdown, writeReportFromResults } from './index.js';
import { markdownCell } from './markdown.js';
import { syntheticResultRecords } from './synthetic.js';
import type { ProbeReportPayload, ResultsReportPayload } from './types.js';
import { analyseProbe, type VariantObservation } from '../meta/probes/analysis.js';
import { formatProbeTable } from '../meta/probes/format.js';
import { probeDefinitions } from '../meta/probes/perturbations.js';
import type { ProbeReport } from '../meta/probes/runner.js';
import { emptyUsage } from '../engine/usage.js';
import { loadLabels } from '../meta/labels.js';
import { metaFromResults } from '../meta/results-meta.js';
import { collectRun } from './collect.js';
import { overlayLabels } from './labels.js';
import { test } from '../testing/vitest-fixtures.js';
import { captureOutput } from '../cli/in-process.js';

let directory: string;

function write(name: string, text: string): string {
  const file = join(directory, name);
  writeFileSync(file, text);
  return file;
}

function jsonl(records: readonly unknown[]): string {
  return records.map((record) => JSON.stringify(record)).join('\n') + '\n';
}

const runRecords: ResultRecord[] = [...syntheticResultRecords({ items: 60, criteriaPerItem: 5, seed: 31 })];
runRecords[0] = { ...runRecords[0], tags: ['theme:pipe|tag'] };
runRecords[0].criteria = runRecords[0].criteria.map((criterion) => ({ ...criterion, text: 'Mentions <script>alert(1)</script> | pipes', met: criterion.points < 0 }));
const baselineRecords: ResultRecord[] = [...syntheticResultRecords({ items: 60, criteriaPerItem: 5, seed: 31, qualityShift: 0.2 })];
let resultsFile: string;
let baselineFile: string;
test.beforeAll(({ fileTempDir }) => {
  directory = fileTempDir;
  resultsFile = write('run.jsonl', jsonl(runRecords));
  baselineFile = write('baseline.jsonl', jsonl(baselineRecords));
});

const binaryReport = computeBinaryMeta(
  Array.from({ length: 40 }, (_, index) => ({ prediction: index % 3 !== 0, label: index % 4 !== 0, groups: { criterion: `c${index % 5}` } })),
  { resamples: 50 },
);
const pairwiseReport = computePairwiseMeta(
  Array.from({ length: 30 }, (_, index) => ({ gold: index % 2 ? ('A' as const) : ('B' as const), original: index % 3 ? ('A' as const) : ('B' as const), swapped: 'A' as const, source: `s${index % 3}` })),
  { resamples: 50 },
);

describe('detectReportInput', () => {
  it('reads JSON lines as results and a JSON document with kind binary/pairwise as a meta-evaluation report', async () => {
    expect(await detectReportInput(resultsFile)).toEqual({ kind: 'results' });
    const pretty = await detectReportInput(write('binary.json', `${JSON.stringify(binaryReport, null, 2)}\n`));
    expect(pretty.kind === 'meta' && pretty.report.kind).toBe('binary');
    const oneLine = await detectReportInput(write('pairwise.json', JSON.stringify(pairwiseReport)));
    expect(oneLine.kind === 'meta' && oneLine.report.kind).toBe('pairwise');
    // A results file whose first line is broken is still a results file (the bad line is reported later).
    expect(await detectReportInput(write('broken-first.jsonl', `{"id": \n${JSON.stringify(runRecords[1])}\n`))).toEqual({ kind: 'results' });
  });

  it('names what is wrong with a file that is neither', async () => {
    const { groups: _groups, ...withoutGroups } = binaryReport;
    await expect(detectReportInput(write('no-groups.json', JSON.stringify(withoutGroups, null, 2)))).rejects.toMatchObject({ code: 'INPUT_INVALID', details: { field: 'groups' } });
    await expect(detectReportInput(write('metrics.json', JSON.stringify({ scoring: 'healthbench', overall: null }, null, 2)))).rejects.toThrow(/neither a results file/);
    const missing = join(directory, 'missing.jsonl');
    await expect(detectReportInput(missing)).rejects.toMatchObject({ code: 'INPUT_INVALID', message: 'file not found', details: { file: missing } });
  });
});

describe('Markdown summary', () => {
  it('gives the headline, every tag, the criteria that cost most, with cells that cannot break the table', async () => {
    const document = await buildReport({ input: resultsFile });
    const payload = document.payload as ResultsReportPayload;
    const markdown = renderResultsMarkdown(payload);
    const metrics = payload.runs[0].summary.metrics;
    expect(markdown).toContain(`**Score (healthbench): ${metrics.overall!.score.toFixed(4)}**`);
    expect(markdown).toContain(`n = ${metrics.overall!.n_samples}`);
    for (const [tag, metric] of Object.entries(metrics.by_tag)) expect(markdown).toContain(`| ${markdownCell(tag, 80)} | ${metric.score.toFixed(4)} |`);
    expect(markdown).toContain('theme:pipe\\|tag');
    expect(markdown).toContain('## Criteria that cost the most');
    expect(markdown).not.toContain('<script>');
    expect(markdown).toContain('Mentions &lt;script&gt;alert(1)&lt;/script&gt; \\| pipes');
    for (const line of markdown.split('\n').filter((each) => each.startsWith('| Mentions'))) expect(line.split(/(?<!\\)\|/).length).toBe(7);
  });

  it('adds the paired differences when comparing', async () => {
    const document = await buildReport({ input: resultsFile, compare: baselineFile });
    const payload = document.payload as ResultsReportPayload;
    const markdown = renderResultsMarkdown(payload);
    const difference = payload.comparison!.overall!.difference;
    expect(difference).toBeLessThan(0);
    expect(markdown).toContain(`**Δ overall: −${Math.abs(difference).toFixed(4)}**`);
    expect(markdown).toContain('### Criterion verdict flips');
    for (const [tag, value] of Object.entries(payload.comparison!.byTag)) expect(markdown).toContain(`| ${markdownCell(tag, 80)} | ${value.baseline.toFixed(4)} | ${value.run.toFixed(4)} |`);
  });

  it('leads with the coverage, the errors by code and how to finish when items failed', async () => {
    const failed = [...syntheticResultRecords({ items: 20, criteriaPerItem: 3, seed: 4, errorRate: 0.3 })];
    const document = await buildReport({ input: write('failed.jsonl', jsonl(failed)) });
    const summary = (document.payload as ResultsReportPayload).runs[0].summary;
    const markdown = renderResultsMarkdown(document.payload as ResultsReportPayload);
    expect(summary.coverage).not.toBeNull();
    expect(markdown.startsWith(`# Grading report · failed.jsonl\n\n> **${summary.coverage}**\n\n| error code | count | example |`)).toBe(true);
    expect(markdown).toContain(`| \`JUDGE_UNPARSEABLE\` | ${summary.metrics.n_error} |`);
    expect(markdown).toContain(`- To finish: ${summary.advice[0]}`);
    expect(markdown.indexOf('To finish')).toBeLessThan(markdown.indexOf('**Score ('));
  });

  it('summarises a meta-evaluation report', async () => {
    const out = join(directory, 'meta.md');
    await writeReportFromResults({ input: write('binary-md.json', JSON.stringify(binaryReport)), out });
    const markdown = readFileSync(out, 'utf8');
    expect(markdown).toContain(`**Balanced F1 (HealthBench): ${binaryReport.overall.balancedF1!.toFixed(4)}**`);
    expect(markdown).toContain('```');
  });

  it('puts the judge beside the human baseline when records carry several labels', async () => {
    const out = join(directory, 'meta-raters.md');
    const report = computeBinaryMeta([{ prediction: true, label: [true, false] }, { prediction: false, label: [false, false] }], { resamples: 0 });
    await writeReportFromResults({ input: write('binary-raters.json', JSON.stringify(report)), out });
    const markdown = readFileSync(out, 'utf8');
    expect(markdown).toContain('Judge beside the human baseline');
    expect(markdown).toMatch(/pairs +4 +4/);
  });
});

/** A probe report as `rubricate probe` writes it, from observations of our own. */
function probeReport(): ProbeReport {
  const observations: VariantObservation[] = Array.from({ length: 8 }, (_, index) => ({
    item: index,
    itemId: `p${index}`,
    variant: 'padding',
    ok: true,
    originalScore: 0.5,
    perturbedScore: 0.5 + 0.1 * (index % 3),
    criteria: [{ id: 'a', text: 'Advises rest', original: index % 2 === 0, perturbed: true }],
  }));
  return {
    kind: 'probes',
    textVersion: 'probes/v1',
    judge: null,
    scoring: 'weighted_mean',
    seed: 0,
    variantsPerItem: 1,
    bootstrap: { resamples: 50, seed: 0, confidence: 0.95, unit: 'item' },
    items: { probed: 8, originalOk: 8, originalFailed: 0, meanOriginalScore: 0.5 },
    usage: emptyUsage(),
    probes: [analyseProbe(probeDefinitions.padding, observations, { resamples: 50 })],
  };
}

describe('probe reports', () => {
  it('are read by content, checked field by field, and shown as the table rubricate probe prints', async () => {
    const report = probeReport();
    const file = write('probe.json', `${JSON.stringify(report, null, 2)}\n`);
    const detected = await detectReportInput(file);
    expect(detected.kind).toBe('probes');
    const document = await buildReport({ input: file });
    expect((document.payload as ProbeReportPayload).report).toEqual(report);
    const markdown = join(directory, 'probe.md');
    await writeReportFromResults({ input: file, out: markdown });
    expect(readFileSync(markdown, 'utf8')).toContain(formatProbeTable(report).trimEnd());
    const { perItem: _perItem, ...withoutItems } = report.probes[0];
    await expect(detectReportInput(write('probe-broken.json', JSON.stringify({ ...report, probes: [withoutItems] })))).rejects.toMatchObject({ code: 'INPUT_INVALID', details: { field: 'probes[0].perItem' } });
    await expect(buildReport({ input: file, labels: file })).rejects.toMatchObject({ code: 'CONFIG_INVALID', details: { field: 'labels' } });
  });
});

describe('labels laid over a results report', () => {
  it('puts each labelled verdict\'s raters beside it and computes the agreement exactly as meta does', async () => {
    const judged = runRecords.slice(1, 6).map((record) => ({ record, criterion: record.criteria.find((criterion) => criterion.source === 'judge' && criterion.status === 'ok')! }));
    const lines = judged.map(({ record, criterion }, index) => JSON.stringify({ id: record.id, criterion_id: criterion.id, label: index === 0 ? [!criterion.met, !criterion.met, criterion.met] : criterion.met, reviewer: 'ana', time: '2025-03-01T12:00:00Z' }));
    lines.push(JSON.stringify({ id: 'nobody', criterion_id: 'c0', label: true }), 'not json');
    const labels = write('labels.jsonl', `${lines.join('\n')}\n`);
    const run = await collectRun(resultsFile);
    const warnings: string[] = [];
    const overlay = await overlayLabels(run, resultsFile, labels, (message) => warnings.push(message));
    const positionOf = (id: string, criterionId: string) => {
      const item = run.indexById.get(id)!;
      for (let position = run.data.items.criteriaOffsets[item]; position < run.data.items.criteriaOffsets[item + 1]; position += 1) if (run.data.strings[run.data.criteria.ids[position]] === criterionId) return position;
      return -1;
    };
    expect(overlay.positions).toEqual(judged.flatMap(({ record, criterion }, index) => [positionOf(record.id, criterion.id), index === 0 ? (criterion.met ? 1 : 2) : criterion.met ? 1 : 0, index === 0 ? (criterion.met ? 2 : 1) : criterion.met ? 0 : 1]));
    const { inputs: _inputs, join, problems: _problems, ...metrics } = await metaFromResults(resultsFile, await loadLabels(labels), { groupBy: ['criterion', 'tag'] });
    expect(overlay.agreement).toEqual(metrics);
    expect(overlay.join).toEqual(join);
    expect(overlay.join!.labelsForMissingItems).toBe(1);
    expect(overlay.invalidLineCount).toBe(1);
    expect(warnings).toHaveLength(1);
    expect(overlay.agreement!.overall.pairs).toBe(7);

    const none = await overlayLabels(run, resultsFile, write('labels-none.jsonl', `${JSON.stringify({ id: 'nobody', criterion_id: 'c0', label: true })}\n`));
    expect(none.agreement).toBeNull();
    expect(none.problem).toMatch(/^nothing to compare: /);
  });
});

describe('writeReportFromResults', () => {
  it('writes a self-contained HTML page with the data embedded safely', async () => {
    const out = join(directory, 'report.html');
    const written = await writeReportFromResults({ input: resultsFile, out, title: 'Run <one> & "two"' });
    const html = readFileSync(out, 'utf8');
    expect(written).toMatchObject({ format: 'html', view: 'results', invalidLines: 0, bytes: Buffer.byteLength(html) });
    expect(html).toContain('<title>Run &#60;one&#62; &#38; &#34;two&#34;</title>');
    expect(html).toContain("default-src 'none'");
    expect(html).not.toMatch(/<(script|link|img)[^>]+(src|href)=/i);
    // Only our own script elements: the criterion text's <script> stayed inside JSON.
    expect(html.match(/<script/g)).toHaveLength(4);
    expect(html.match(/<\/script>/g)).toHaveLength(4);
  });

  it('refuses to compare a meta-evaluation report', async () => {
    await expect(writeReportFromResults({ input: write('binary2.json', JSON.stringify(binaryReport)), compare: resultsFile, out: join(directory, 'x.html') })).rejects.toSatisfy(
      (error: unknown) => RubricateError.isInstance(error) && error.code === 'CONFIG_INVALID',
    );
  });
});


describe('rubricate report', () => {
  it('reports a bad results line with file:line, skips it and still writes the report', async () => {
    const lines = jsonl(runRecords.slice(0, 10)).split('\n');
    lines.splice(3, 0, '{"id": "x", "status": "graded"}');
    const input = write('with-bad-line.jsonl', lines.join('\n'));
    const out = join(directory, 'cli.html');
    const { output, context } = captureOutput();
    expect(await runCli(['report', '--input', input, '--out', out], context)).toBe(exitCodes.success);
    expect(output.stderr.join('\n')).toContain(`invalid input: ${input}:4`);
    expect(output.stderr.join('\n')).toMatch(/report: .*cli\.html \(html, .*\) \(1 unreadable lines skipped\)/);
    expect(readFileSync(out, 'utf8')).toContain('<!doctype html>');
  });

  it('prints Markdown to stdout with --out -, and fails clearly on a missing input', async () => {
    const printed = captureOutput();
    expect(await runCli(['report', '--input', resultsFile, '--compare', baselineFile, '--out', '-'], printed.context)).toBe(exitCodes.success);
    expect(printed.output.stdout.join('\n')).toMatch(/^# run\.jsonl vs baseline\.jsonl/);
    const missing = captureOutput();
    const file = join(directory, 'nope.jsonl');
    // A missing input is a usage error found before anything runs (exit 2), naming the flag.
    expect(await runCli(['report', '--input', file, '--out', join(directory, 'nope.html')], missing.context)).toBe(exitCodes.usage);
    expect(missing.output.stderr.join('\n')).toBe(`error [INPUT_UNREADABLE]: ${file} field input: cannot read --input: no such file or folder`);
    const html = captureOutput();
    expect(await runCli(['report', '--input', resultsFile, '--out', '-', '--format', 'html'], html.context)).toBe(exitCodes.usage);
  });

  it('runs from the bin script', async () => {
    const out = join(directory, 'bin.md');
    const child = spawn(process.execPath, [resolve('bin/rubricate.js'), 'report', '--input', resultsFile, '--out', out], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((done) => child.on('close', done));
    expect(stderr).toContain('report:');
    expect(code).toBe(0);
    // A run with an item in error leads with how much of it the score covers.
    expect(readFileSync(out, 'utf8')).toMatch(/^# Grading report · run\.jsonl\n\n> \*\*The score covers \d+% of the items \(58 of 60\): 2 in error\.\*\*\n[\s\S]*\n\*\*Score \(healthbench\): /);
  });
});
