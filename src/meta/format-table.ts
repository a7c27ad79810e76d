/**
 * Plain-text rendering of meta-evaluation reports for terminals and logs.
 */
import type { ConfidenceInterval } from '../statistics/bootstrap.js';
import type { BinaryMetaReport, BinaryMetrics, RaterAgreement } from './binary-metrics.js';
import type { PairwiseMetaReport, PairwiseMetrics } from '../scoring/pairwise-metrics.js';
import type { PublishedFormat } from './published/types.js';

/** What `formatMetaTable` accepts: any report, with the published-judge header when present. */
export type FormattableReport =
  | BinaryMetaReport
  | (PairwiseMetaReport & { published?: { format: PublishedFormat; file: string; judge: string | null; strategy: string | null; invalidRows: number } });

const missing = '—';

function formatNumber(value: number | null | undefined, digits = 4): string {
  return value === null || value === undefined ? missing : value.toFixed(digits);
}

function formatInterval(interval: ConfidenceInterval | null | undefined, digits = 4): string {
  return interval ? `[${interval.lower.toFixed(digits)}, ${interval.upper.toFixed(digits)}]` : '';
}

/** Left-aligns the first column and right-aligns the others, padded to the widest cell. */
export function renderTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const renderRow = (row: readonly string[]) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
      .join('  ')
      .trimEnd();
  const rule = widths.map((width) => '-'.repeat(width)).join('  ');
  return [renderRow(header), rule, ...rows.map(renderRow)].join('\n');
}

function binaryOverallTable(report: BinaryMetaReport): string {
  const metrics = report.overall;
  const confidence = `${Math.round(report.bootstrap.confidence * 100)}% CI`;
  const rows: string[][] = [
    ['accuracy', formatNumber(metrics.accuracy), formatInterval(metrics.intervals.accuracy)],
    ['balanced F1 (HealthBench)', formatNumber(metrics.balancedF1), formatInterval(metrics.intervals.balancedF1)],
    ['macro F1', formatNumber(metrics.macroF1), formatInterval(metrics.intervals.macroF1)],
    ["Cohen's kappa", formatNumber(metrics.cohenKappa), formatInterval(metrics.intervals.cohenKappa)],
    ['precision (met)', formatNumber(metrics.positive.precision), ''],
    ['recall (met)', formatNumber(metrics.positive.recall), ''],
    ['F1 (met)', formatNumber(metrics.positive.f1), ''],
    ['precision (not met)', formatNumber(metrics.negative.precision), ''],
    ['recall (not met)', formatNumber(metrics.negative.recall), ''],
    ['F1 (not met)', formatNumber(metrics.negative.f1), ''],
  ];
  if (report.biasIndex) {
    rows.push(['bias index (ProfBench)', formatNumber(report.biasIndex.biasIndex), formatInterval(report.biasIndex.intervals.biasIndex)]);
    rows.push(['MF1 - BI', formatNumber(report.biasIndex.mf1MinusBiasIndex), formatInterval(report.biasIndex.intervals.mf1MinusBiasIndex)]);
  }
  rows.push(["Matthews' correlation", formatNumber(report.agreement.matthews), '']);
  rows.push(["Krippendorff's alpha (labels + judge)", formatNumber(report.agreement.krippendorffAlpha.humansAndJudge), '']);
  if (report.agreement.recordsWithSeveralLabels > 0) rows.push(["Fleiss' kappa (human labels)", formatNumber(report.agreement.humanFleissKappa), '']);
  if (report.agreement.recordsWithJury > 0) rows.push(["Fleiss' kappa (jury)", formatNumber(report.agreement.juryFleissKappa), '']);
  return renderTable(['metric', 'value', confidence], rows);
}

/** The judge beside the human ceiling: each rater against the other raters of the same items. */
function humanBaselineTable(report: BinaryMetaReport): string | undefined {
  const baseline = report.humanBaseline;
  if (!baseline) return undefined;
  const perRater = baseline.byRater;
  const pooled = baseline.pooled;
  // Reports written before the judge's weighted figure existed lack it.
  const weighted = baseline.judge as RaterAgreement | undefined;
  const rows: string[][] = [
    ['balanced F1 (HealthBench)', formatNumber(report.overall.balancedF1), weighted ? formatNumber(weighted.balancedF1) : missing, formatNumber(baseline.balancedF1), formatNumber(pooled.balancedF1), perRater ? formatNumber(perRater.meanBalancedF1) : missing],
    ["Cohen's kappa", formatNumber(report.overall.cohenKappa), weighted ? formatNumber(weighted.cohenKappa) : missing, formatNumber(baseline.cohenKappa), formatNumber(pooled.cohenKappa), perRater ? formatNumber(perRater.meanCohenKappa) : missing],
    ['accuracy', formatNumber(report.overall.accuracy), weighted ? formatNumber(weighted.accuracy) : missing, formatNumber(baseline.accuracy), formatNumber(pooled.accuracy), perRater ? formatNumber(perRater.meanAccuracy) : missing],
    ['pairs', String(report.overall.pairs), weighted ? String(weighted.pairs) : missing, String(baseline.pairs), String(pooled.pairs), perRater ? `${Object.keys(perRater.raters).length} raters` : missing],
  ];
  const how = baseline.aggregation === 'healthbench' ? `HealthBench's weighted average of raters over (rater, ${baseline.categoryKey}) cells` : `raters not named: one anonymous rater per ${baseline.categoryKey}`;
  return `Judge beside the human baseline (each rater against the other raters of the same ${baseline.records} records; ${how}):\n${renderTable(['metric', 'judge', 'judge (weighted as humans)', 'humans', 'humans (pooled pairs)', 'mean over raters'], rows)}`;
}

function binaryGroupRow(name: string, metrics: BinaryMetrics): string[] {
  return [
    name,
    String(metrics.records),
    String(metrics.pairs),
    formatNumber(metrics.accuracy),
    formatNumber(metrics.balancedF1),
    formatNumber(metrics.macroF1),
    formatNumber(metrics.cohenKappa),
  ];
}

function formatBinary(report: BinaryMetaReport): string {
  const metrics = report.overall;
  const sections = [
    `Binary judge agreement: ${metrics.records} records, ${metrics.pairs} (prediction, label) pairs`,
    binaryOverallTable(report),
  ];
  const baseline = humanBaselineTable(report);
  if (baseline) sections.push(baseline);
  if (report.biasIndex) {
    const rows = Object.entries(report.biasIndex.bySource).map(([source, bias]) => [source, String(bias.pairs), formatNumber(bias.meanError)]);
    sections.push(`Mean error (prediction - label) by ${report.biasIndex.sourceKey}:\n${renderTable([report.biasIndex.sourceKey, 'pairs', 'mean error'], rows)}`);
  }
  for (const [key, byValue] of Object.entries(report.groups)) {
    const rows = Object.entries(byValue).map(([value, groupMetrics]) => binaryGroupRow(value, groupMetrics));
    sections.push(`By ${key}:\n${renderTable([key, 'records', 'pairs', 'accuracy', 'bal. F1', 'macro F1', 'kappa'], rows)}`);
  }
  return `${sections.join('\n\n')}\n`;
}

function pairwiseOverallTable(metrics: PairwiseMetrics, confidence: number): string {
  const rows: string[][] = [
    ['accuracy (original order)', formatNumber(metrics.accuracy.original), formatInterval(metrics.intervals.accuracyOriginal)],
    ['accuracy (swapped order)', formatNumber(metrics.accuracy.swapped), ''],
    ['accuracy (average)', formatNumber(metrics.accuracy.average), formatInterval(metrics.intervals.accuracyAverage)],
    ['accuracy (both orders)', formatNumber(metrics.accuracy.both), ''],
    ['positional agreement', formatNumber(metrics.positionalAgreement), formatInterval(metrics.intervals.positionalAgreement)],
    ['JudgeBench score', formatNumber(metrics.judgeBench.score), formatInterval(metrics.intervals.judgeBenchScore)],
    ["Cohen's kappa (original)", formatNumber(metrics.kappa.original), ''],
    ["Cohen's kappa (swapped)", formatNumber(metrics.kappa.swapped), ''],
  ];
  if (metrics.llmbarKappa) {
    rows.push(['LLMBar kappa (original)', formatNumber(metrics.llmbarKappa.original), '']);
    rows.push(['LLMBar kappa (swapped)', formatNumber(metrics.llmbarKappa.swapped), '']);
    rows.push(['LLMBar kappa (average)', formatNumber(metrics.llmbarKappa.average), '']);
    rows.push(['LLMBar kappa (agreement)', formatNumber(metrics.llmbarKappa.agreement), '']);
  }
  const invalid = metrics.verdicts.original.invalid + metrics.verdicts.swapped.invalid;
  rows.push(['invalid verdicts', String(invalid), '']);
  return renderTable(['metric', 'value', `${Math.round(confidence * 100)}% CI`], rows);
}

function pairwiseGroupTable(title: string, byValue: Record<string, PairwiseMetrics>): string {
  const rows = Object.entries(byValue).map(([value, metrics]) => [
    value,
    String(metrics.pairs),
    formatNumber(metrics.accuracy.original),
    formatNumber(metrics.accuracy.swapped),
    formatNumber(metrics.accuracy.average),
    formatNumber(metrics.positionalAgreement),
    formatNumber(metrics.judgeBench.score),
  ]);
  return `By ${title}:\n${renderTable([title, 'pairs', 'acc. orig', 'acc. swap', 'acc. avg', 'agreement', 'JudgeBench'], rows)}`;
}

function formatPairwise(report: Extract<FormattableReport, { kind: 'pairwise' }>): string {
  const metrics = report.overall;
  const published = report.published;
  const subject = published
    ? `${published.format} judge ${[published.judge, published.strategy].filter(Boolean).join('/') || '(unnamed)'} from ${published.file}`
    : 'pairwise judge agreement';
  const header = `${subject}: ${metrics.pairs} pairs, ${metrics.swappedPairs} judged in both orders${published && published.invalidRows > 0 ? `, ${published.invalidRows} unreadable rows skipped` : ''}`;
  const sections = [header, pairwiseOverallTable(metrics, report.bootstrap.confidence)];
  if (Object.keys(report.byCategory).length > 0) sections.push(pairwiseGroupTable('category', report.byCategory));
  if (Object.keys(report.bySource).length > 0) sections.push(pairwiseGroupTable('source', report.bySource));
  return `${sections.join('\n\n')}\n`;
}

/**
 * A readable text table of a binary or pairwise meta-evaluation report.
 *
 * @example
 * ```ts
 * import { computeBinaryMeta, formatMetaTable } from 'rubricate/meta';
 * console.log(formatMetaTable(computeBinaryMeta([{ prediction: true, label: [true, false] }])));
 * ```
 */
export function formatMetaTable(report: FormattableReport): string {
  return report.kind === 'binary' ? formatBinary(report) : formatPairwise(report);
}
