/**
 * Reports people look at: a self-contained HTML page (or a Markdown summary) built from a
 * results file, optionally compared with a baseline run, or from a meta-evaluation report.
 */
import { basename } from 'node:path';
import { RubricateError } from '../errors.js';
import { writeFileAtomic } from '../util/files.js';
import { rubricateVersion } from '../version.js';
import { collectRun, histogram, histogramEdges, type CollectOptions, type CollectedRun } from './collect.js';
import { compareRuns, type CompareOptions } from './compare.js';
import type { PayloadCompression } from './encoding.js';
import { renderReportHtml } from './html/page.js';
import { detectReportInput } from './input.js';
import { renderCompareMarkdown, renderMetaMarkdown, renderProbeMarkdown, renderResultsMarkdown } from './markdown.js';
import { overlayLabels } from './labels.js';
import { collectPairwise } from './pairwise.js';
import { reportPayloadVersion, type CompareReportPayload, type LabelsOverlay, type MetaReportPayload, type ProbeReportPayload, type ReportFormat, type ReportPayload, type ResultsReportPayload, type TextChunk } from './types.js';

export type * from './types.js';
export type { PayloadCompression } from './encoding.js';
export { renderResultsMarkdown } from './markdown.js';
export { detectReportInput } from './input.js';

export interface WriteReportOptions {
  /** Results JSONL, a `rubricate compare` JSONL, or a meta-evaluation report JSON (detected by content). */
  input: string;
  out: string;
  /** Baseline results to compare with (matched by id; Δ = input − compare). */
  compare?: string;
  /** Human labels (a `meta --labels` file) laid over the input's verdicts: agreement per criterion and tag, and the disagreements. */
  labels?: string;
  /** Default: `md` when `out` ends in .md, else `html`. */
  format?: ReportFormat;
  title?: string;
  /** Scoring to apply; default: the one recorded in the results, else healthbench. */
  scoring?: string;
  /** Unreadable results lines, as "file:line: reason"; they are skipped. */
  onWarning?: (message: string) => void;
  /** Embedded data compression; `auto` compresses large reports. */
  compression?: PayloadCompression;
  /** Bootstrap settings of the comparison. */
  bootstrapSamples?: number;
  seed?: number;
  /** Timestamp shown as "generated" (ISO 8601); default now. Fix it for byte-identical reports. */
  generatedAt?: string;
  /** Largest image embedded in the report (bytes); larger ones get a placeholder. Default 2 MB. */
  maxImageBytes?: number;
}

export interface ReportDocument {
  payload: ReportPayload;
  /** Per run, its text chunks (results views; the compare view has one list, for its pairs). */
  texts: TextChunk[][];
}

export interface WrittenReport {
  bytes: number;
  format: ReportFormat;
  view: ReportPayload['view'];
  /** Unreadable lines skipped, over all input files. */
  invalidLines: number;
}

function defaultTitle(input: string, compare?: string): string {
  return compare ? `${basename(input)} vs ${basename(compare)}` : `Grading report · ${basename(input)}`;
}

/**
 * Reads the inputs and prepares everything a report shows.
 *
 * @example
 * ```ts
 * import { buildReport, renderReport } from 'rubricate/report';
 * const markdown = renderReport(await buildReport({ input: 'results.jsonl' }), 'md');
 * ```
 */
export async function buildReport(options: Omit<WriteReportOptions, 'out' | 'format'>): Promise<ReportDocument> {
  const detected = await detectReportInput(options.input);
  const generatedAt = options.generatedAt ?? new Date().toISOString();
  if (detected.kind !== 'results') {
    const what = detected.kind === 'meta' ? 'meta-evaluation reports' : detected.kind === 'probes' ? 'probe reports' : 'compare files';
    if (options.compare) throw new RubricateError('CONFIG_INVALID', `--compare works with results files, not ${what}`, { file: options.input, field: 'compare' });
    if (options.labels) throw new RubricateError('CONFIG_INVALID', `--labels works with results files, not ${what}`, { file: options.input, field: 'labels' });
  }
  if (detected.kind === 'probes') {
    const payload: ProbeReportPayload = {
      view: 'probes',
      version: reportPayloadVersion,
      title: options.title ?? `Judge robustness probes · ${basename(options.input)}`,
      generatedAt,
      rubricateVersion,
      label: basename(options.input),
      report: detected.report,
    };
    return { payload, texts: [] };
  }
  if (detected.kind === 'meta') {
    const payload: MetaReportPayload = {
      view: detected.report.kind === 'binary' ? 'meta-binary' : 'meta-pairwise',
      version: reportPayloadVersion,
      title: options.title ?? `Judge meta-evaluation · ${basename(options.input)}`,
      generatedAt,
      rubricateVersion,
      label: basename(options.input),
      report: detected.report,
    };
    return { payload, texts: [] };
  }
  if (detected.kind === 'compare') {
    const collected = await collectPairwise(options.input, { onWarning: options.onWarning });
    const payload: CompareReportPayload = {
      view: 'compare',
      version: reportPayloadVersion,
      title: options.title ?? `Pairwise comparison · ${basename(options.input)}`,
      generatedAt,
      rubricateVersion,
      summary: collected.summary,
      strings: collected.strings,
      pairs: collected.pairs,
      comparisons: collected.comparisons,
      textChunkSize: collected.textChunkSize,
    };
    return { payload, texts: [collected.texts] };
  }

  const collectOptions: CollectOptions = { scoring: options.scoring, onWarning: options.onWarning, keepTagScores: Boolean(options.compare), maxImageBytes: options.maxImageBytes };
  const run = await collectRun(options.input, collectOptions);
  refuseNoResults(options.input, run);
  let baseline: CollectedRun | undefined;
  if (options.compare) {
    const compareDetected = await detectReportInput(options.compare);
    if (compareDetected.kind !== 'results') {
      throw new RubricateError('INPUT_INVALID', 'the file to compare with must be a results file', { file: options.compare, field: 'compare' });
    }
    // Both runs are scored the same way, or their difference would mean nothing.
    baseline = await collectRun(options.compare, { ...collectOptions, scoring: run.scoring.name });
  }
  const labels = options.labels ? await overlayLabels(run, options.input, options.labels, options.onWarning) : null;
  return { payload: resultsPayload(run, baseline, options, generatedAt, labels), texts: baseline ? [run.texts, baseline.texts] : [run.texts] };
}

function resultsPayload(run: CollectedRun, baseline: CollectedRun | undefined, options: Omit<WriteReportOptions, 'out' | 'format'>, generatedAt: string, labels: LabelsOverlay | null): ResultsReportPayload {
  const runs = baseline ? [run, baseline] : [run];
  if (baseline) {
    // One set of bins for both runs, so the histograms overlay.
    const edges = histogramEdges(runs.map((each) => each.data.items.scores));
    for (const each of runs) each.data.summary.histogram = histogram(each.data.items.scores, edges);
  }
  const compareOptions: CompareOptions = { bootstrapSamples: options.bootstrapSamples, seed: options.seed };
  return {
    view: 'results',
    version: reportPayloadVersion,
    title: options.title ?? defaultTitle(options.input, options.compare),
    generatedAt,
    rubricateVersion,
    runs: runs.map((each) => each.data),
    comparison: baseline ? compareRuns(run, baseline, compareOptions) : null,
    ...(labels ? { labels } : {}),
  };
}

/**
 * A built report as one self-contained HTML page or as Markdown.
 *
 * @example
 * ```ts
 * import { buildReport, renderReport } from 'rubricate/report';
 * const html = renderReport(await buildReport({ input: 'results.jsonl', compare: 'baseline.jsonl' }), 'html');
 * ```
 */
export function renderReport(document: ReportDocument, format: ReportFormat, options: { compression?: PayloadCompression; connectSelf?: boolean } = {}): string {
  if (format === 'md') {
    const payload = document.payload;
    switch (payload.view) {
      case 'results':
        return renderResultsMarkdown(payload);
      case 'compare':
        return renderCompareMarkdown(payload);
      case 'probes':
        return renderProbeMarkdown(payload);
      case 'meta-binary':
      case 'meta-pairwise':
        return renderMetaMarkdown(payload);
      default:
        throw new RubricateError('CONFIG_INVALID', `a ${payload.view} page has no Markdown form`, { field: 'format' });
    }
  }
  return renderReportHtml(document.payload, document.texts, { compression: options.compression, ...(options.connectSelf ? { connectSelf: true } : {}) });
}

function formatFor(options: WriteReportOptions): ReportFormat {
  if (options.format === undefined) return /\.(md|markdown)$/i.test(options.out) ? 'md' : 'html';
  if (options.format !== 'html' && options.format !== 'md') {
    throw new RubricateError('CONFIG_INVALID', `unknown report format "${String(options.format)}" (expected html or md)`, { field: 'format' });
  }
  return options.format;
}

/**
 * Writes a report for a results file (or a compare file, or a meta-evaluation report). `rubricate grade --report`
 * and `rubricate report` both end here.
 */
/**
 * JSON lines none of which is a results line (items not graded yet, some other JSONL) are not a
 * run to report: INPUT_WRONG_TYPE (exit 2), before anything is written, naming what the lines are.
 */
function refuseNoResults(file: string, run: CollectedRun): void {
  const { invalidLineCount, invalidLines } = run.data.summary;
  if (run.data.items.ids.length > 0 || invalidLineCount === 0) return;
  const first = invalidLines[0]?.message ?? '';
  const items = /not a results line/.test(first) ? ' (items to grade? grade them first: rubricate grade --input FILE --judge SPEC --out results.jsonl, then report results.jsonl)' : '';
  throw new RubricateError('INPUT_WRONG_TYPE', `is not a results file: none of its ${invalidLineCount} line${invalidLineCount === 1 ? ' is a results line' : 's is a results line'}${items}; the first: ${first}`, { file, field: 'input' });
}

/**
 * Writes the report of a results, compare or meta-evaluation file, as `rubricate report` does.
 *
 * @example
 * ```ts
 * import { writeReport } from 'rubricate/report';
 * const written = await writeReport({ input: 'results.jsonl', out: 'report.html', title: 'Nightly grading' });
 * ```
 */
export async function writeReportFromResults(options: WriteReportOptions): Promise<WrittenReport> {
  const format = formatFor(options);
  const document = await buildReport(options);
  const text = renderReport(document, format, { compression: options.compression });
  await writeFileAtomic(options.out, text);
  const payload = document.payload;
  const invalidLines =
    payload.view === 'results'
      ? payload.runs.reduce((total, run) => total + run.summary.invalidLineCount, 0) + (payload.labels?.invalidLineCount ?? 0)
      : payload.view === 'compare'
        ? payload.summary.invalidLineCount
        : 0;
  return { bytes: Buffer.byteLength(text, 'utf8'), format, view: document.payload.view, invalidLines };
}
