/**
 * A Markdown summary for CI logs and job summaries: headline, per-tag table, the criteria that
 * cost most, and with a baseline the paired differences; for a compare file, win rate,
 * outcomes, position consistency, gold-label accuracy and the per-criterion and per-source
 * tables. Same figures as the HTML report.
 */
import { formatMetaTable } from '../meta/format-table.js';
import { formatProbeTable } from '../meta/probes/format.js';
import { madeUpBy, madeUpNotice } from '../util/made-up.js';
import type { CompareReportPayload, MetaReportPayload, ProbeReportPayload, ResultsReportPayload, RunSummary, ShareWithInterval } from './types.js';

const tagRowLimit = 100;

/** One table cell: no pipes or line breaks, no markup, bounded length. */
export function markdownCell(text: string, limit = 120): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  const cut = flat.length > limit ? `${flat.slice(0, limit - 1)}…` : flat;
  return cut.replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/`/g, '\\`');
}

function table(header: readonly string[], rows: ReadonlyArray<readonly string[]>, rightAligned: ReadonlySet<number> = new Set()): string {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map((_, index) => (rightAligned.has(index) ? '---:' : '---')).join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

function fixed(value: number | null | undefined, digits = 4): string {
  return typeof value === 'number' && Number.isFinite(value) ? value.toFixed(digits) : '—';
}

function signed(value: number | null | undefined, digits = 4): string {
  if (typeof value !== 'number' || !Number.isFinite(value)) return '—';
  const text = Math.abs(value).toFixed(digits);
  return Number(text) === 0 ? text : `${value > 0 ? '+' : '−'}${text}`;
}

function interval(ci: readonly [number, number] | null | undefined, format: (value: number) => string = (value) => fixed(value)): string {
  return ci && Number.isFinite(ci[0]) && Number.isFinite(ci[1]) ? `${format(ci[0])} – ${format(ci[1])}` : '—';
}

function integer(value: number): string {
  return value.toLocaleString('en-US');
}

function points(value: number): string {
  return `${value < 0 ? '−' : '+'}${Math.abs(value)}`;
}

/** Tags grouped by prefix (axis:, theme:, …), alphabetically, so related rows sit together. */
function sortedTags<Value>(byTag: Record<string, Value>): Array<[string, Value]> {
  return Object.entries(byTag).sort(([left], [right]) => (left < right ? -1 : left > right ? 1 : 0));
}

function usageLine(summary: RunSummary): string {
  const usage = summary.usage;
  const cost = summary.costUsd === null ? 'cost unknown' : `$${summary.costUsd.toFixed(4)}`;
  return `${integer(usage.calls)} judge calls, ${integer(usage.cache_hits)} cache hits, ${integer(usage.retries)} retries, ${integer(usage.prompt_tokens)} input tokens (${integer(usage.cached_prompt_tokens)} cached), ${integer(usage.completion_tokens)} output tokens, ${cost}`;
}

/** The header banner of a report whose verdicts are made up, before any figure. */
function madeUpBannerMarkdown(by: string): string {
  return `> **${markdownCell(madeUpNotice(by), 200)}**. No model was asked: every verdict, score and figure below is scripted, to try the tools or test wiring. Do not read it as a measurement.`;
}

function judgeLine(summary: RunSummary): string {
  if (summary.judges.length === 0) return 'none (checks only)';
  return summary.judges
    .map((judge) => `\`${markdownCell(judge.id, 80)}\` (model ${markdownCell(judge.model, 60)}, template ${markdownCell(judge.template_version, 40)}, ${markdownCell(judge.mode, 40)}${judge.verdict ? `, ${markdownCell(judge.verdict, 20)}` : ''})`)
    .join('; ');
}

function headline(summary: RunSummary): string {
  const metrics = summary.metrics;
  if (!metrics.overall) return `**Score (${summary.scoring}): none** — no item could be scored`;
  const overall = metrics.overall;
  return `**Score (${summary.scoring}): ${fixed(overall.score)}** (95% CI ${interval(overall.ci95)}, bootstrap std ${fixed(overall.bootstrap_std)}, n = ${integer(overall.n_samples)})`;
}

/** A probe report: the table `rubricate probe` prints, as a code block. */
export function renderProbeMarkdown(payload: ProbeReportPayload): string {
  const madeUp = madeUpBy(payload.report);
  return [`# ${markdownCell(payload.title, 200)}`, '', ...(madeUp !== undefined ? [madeUpBannerMarkdown(madeUp), ''] : []), '```text', formatProbeTable(payload.report).trimEnd().replace(/```/g, "'''"), '```', ''].join('\n');
}

export function renderResultsMarkdown(payload: ResultsReportPayload): string {
  const [run, baseline] = payload.runs;
  const summary = run.summary;
  const out: string[] = [];
  out.push(`# ${markdownCell(payload.title, 200)}`, '');
  const madeUp = summary.madeUpBy ?? baseline?.summary.madeUpBy;
  if (madeUp !== undefined) out.push(madeUpBannerMarkdown(madeUp), '');
  if (summary.coverage) {
    out.push(`> **${summary.coverage}**`, '');
    out.push(table(['error code', 'count', 'example'], summary.errors.map((entry) => [`\`${markdownCell(entry.code, 60)}\``, integer(entry.count), markdownCell(entry.example, 160)]), new Set([1])));
    if (summary.errorCodesOmitted > 0) out.push('', `… ${integer(summary.errorCodesOmitted)} more codes in the HTML report.`);
    out.push('', ...summary.advice.map((advice) => `- To finish: ${markdownCell(advice, 240)}`), '');
  }
  out.push(headline(summary), '');
  pushRunFacts(out, summary);
  if (payload.labels) pushLabelAgreement(out, payload.labels);
  pushTagScores(out, summary);
  pushMostFailed(out, summary);
  pushSourcePassRates(out, summary);
  const comparison = payload.comparison;
  if (comparison && baseline) pushBaselineComparison(out, comparison, baseline.summary);
  return `${out.join('\n').trimEnd()}\n`;
}

/** The run's item counts, judge, rubrics, usage and unreadable lines, as a list. */
function pushRunFacts(out: string[], summary: RunSummary): void {
  const metrics = summary.metrics;
  const counts = [`${integer(metrics.n)} items`, `${integer(metrics.n_ok)} ok`, `${integer(metrics.n_error)} error`, `${integer(metrics.n_invalid)} invalid`];
  if (metrics.n_unscorable) counts.push(`${integer(metrics.n_unscorable)} unscorable`);
  out.push(`- Results: \`${markdownCell(summary.label, 120)}\` — ${counts.join(' · ')}`);
  out.push(`- Judge: ${judgeLine(summary)}`);
  out.push(`- Rubrics: ${integer(summary.rubricHashes)} distinct hashes · rubricate ${summary.versions.join(', ') || '—'}`);
  out.push(`- Usage: ${usageLine(summary)}`);
  if (summary.invalidLineCount > 0) out.push(`- **${integer(summary.invalidLineCount)} unreadable lines skipped** (first: ${markdownCell(summary.invalidLines[0]?.message ?? '', 160)})`);
  out.push('');
}

/** `--labels`: the judge's agreement with human labels, or why there is none. */
function pushLabelAgreement(out: string[], labels: NonNullable<ResultsReportPayload['labels']>): void {
  out.push(`## Agreement with \`${markdownCell(labels.label, 120)}\``, '');
  const agreement = labels.agreement;
  if (agreement) {
    const overall = agreement.overall;
    out.push(`${integer(overall.pairs)} judge–label pairs over ${integer(overall.records)} labelled verdicts: accuracy ${fixed(overall.accuracy)}, balanced F1 ${fixed(overall.balancedF1)}, Cohen's κ ${fixed(overall.cohenKappa)} (as \`rubricate meta --format results --labels\` computes them).`, '');
  } else out.push(markdownCell(labels.problem ?? 'no labelled verdict', 240), '');
}

function pushTagScores(out: string[], summary: RunSummary): void {
  const tags = sortedTags(summary.metrics.by_tag);
  if (tags.length === 0) return;
  out.push('## Score by tag', '');
  const rows = tags.slice(0, tagRowLimit).map(([tag, metric]) => [markdownCell(tag, 80), fixed(metric.score), interval(metric.ci95), integer(metric.n_samples)]);
  out.push(table(['tag', 'score', '95% CI', 'n'], rows, new Set([1, 3])));
  if (tags.length > tagRowLimit) out.push('', `… ${tags.length - tagRowLimit} more tags in the HTML report.`);
  out.push('');
}

function pushMostFailed(out: string[], summary: RunSummary): void {
  if (summary.mostFailed.length === 0) return;
  out.push('## Criteria that cost the most', '');
  const rows = summary.mostFailed.slice(0, 15).map((row) => [
    // A step criterion is folded from per-step verdicts: its rule says how.
    row.stepRule !== undefined ? `${markdownCell(row.text, 90)} (per step, ${markdownCell(row.stepRule)})` : markdownCell(row.text, 110),
    points(row.points),
    `${integer(row.failed)} / ${integer(row.evaluated)}`,
    `${((row.failed / Math.max(1, row.evaluated)) * 100).toFixed(1)}%`,
    row.source,
  ]);
  out.push(table(['criterion', 'points', 'cost points / graded', 'rate', 'source'], rows, new Set([1, 2, 3])));
  out.push('');
}

function pushSourcePassRates(out: string[], summary: RunSummary): void {
  const sources = (['judge', 'check'] as const).filter((source) => summary.bySource[source].criteria > 0);
  if (sources.length === 0) return;
  out.push('## Pass rate by criterion source', '');
  const rows = sources.map((source) => {
    const rate = summary.bySource[source];
    return [source, integer(rate.evaluated), integer(rate.passed), `${((rate.passed / Math.max(1, rate.evaluated)) * 100).toFixed(1)}%`, integer(rate.errors), integer(rate.skipped)];
  });
  out.push(table(['source', 'graded', 'passed', 'pass rate', 'errors', 'skipped'], rows, new Set([1, 2, 3, 4, 5])));
  out.push('');
}

/** With a baseline: the paired differences overall and by tag, the items that changed most, and the criterion verdict flips. */
function pushBaselineComparison(out: string[], comparison: NonNullable<ResultsReportPayload['comparison']>, baseline: RunSummary): void {
  out.push(`## Compared with \`${markdownCell(comparison.baselineLabel, 120)}\``, '');
  out.push(`Δ = run − baseline over ${integer(comparison.matched)} items matched by id (${integer(comparison.onlyInRun)} only in the run, ${integer(comparison.onlyInBaseline)} only in the baseline); paired bootstrap, ${comparison.bootstrap.samples} resamples, seed ${comparison.bootstrap.seed}.`, '');
  out.push(`- Baseline: ${headline(baseline)}`);
  if (comparison.overall) {
    const overall = comparison.overall;
    out.push(`- **Δ overall: ${signed(overall.difference)}** (95% CI ${interval(overall.ci95, (value) => signed(value))}, n = ${integer(overall.n)} paired items)`);
  }
  out.push('');
  const tagDifferences = sortedTags(comparison.byTag);
  if (tagDifferences.length > 0) {
    const rows = tagDifferences
      .slice(0, tagRowLimit)
      .map(([tag, value]) => [markdownCell(tag, 80), fixed(value.baseline), fixed(value.run), signed(value.difference), interval(value.ci95, (entry) => signed(entry)), integer(value.n)]);
    out.push(table(['tag', 'baseline', 'run', 'Δ', '95% CI of Δ', 'n'], rows, new Set([1, 2, 3, 5])));
    out.push('');
  }
  if (comparison.changedItems.length > 0) {
    out.push('### Items that changed most', '');
    const rows = comparison.changedItems.slice(0, 15).map((item) => [`\`${markdownCell(item.id, 60)}\``, fixed(item.baselineScore), fixed(item.runScore), signed(item.delta)]);
    out.push(table(['item', 'baseline', 'run', 'Δ'], rows, new Set([1, 2, 3])));
    out.push('');
  }
  const flips = comparison.flips;
  out.push('### Criterion verdict flips', '');
  out.push(`${integer(flips.metToNotMet)} met → not met, ${integer(flips.notMetToMet)} not met → met, of ${integer(flips.compared)} criteria graded in both runs.`, '');
  if (flips.criteria.length > 0) {
    const rows = flips.criteria.slice(0, 15).map((row) => [markdownCell(row.text, 100), points(row.points), integer(row.compared), integer(row.metToNotMet), integer(row.notMetToMet)]);
    out.push(table(['criterion', 'points', 'both graded', 'met → not met', 'not met → met'], rows, new Set([1, 2, 3, 4])));
    out.push('');
  }
}

export function renderMetaMarkdown(payload: MetaReportPayload): string {
  const report = payload.report;
  const out: string[] = [`# ${markdownCell(payload.title, 200)}`, ''];
  const madeUp = madeUpBy(report);
  if (madeUp !== undefined) out.push(madeUpBannerMarkdown(madeUp), '');
  if (report.kind === 'binary') {
    const overall = report.overall;
    out.push(`**Balanced F1 (HealthBench): ${fixed(overall.balancedF1)}** · accuracy ${fixed(overall.accuracy)} · macro F1 ${fixed(overall.macroF1)} · Cohen's κ ${fixed(overall.cohenKappa)} (${integer(overall.records)} records, ${integer(overall.pairs)} pairs)`);
  } else {
    const overall = report.overall;
    out.push(`**Accuracy: ${fixed(overall.accuracy.original)} original order, ${fixed(overall.accuracy.swapped)} swapped** · positional agreement ${fixed(overall.positionalAgreement)} · JudgeBench score ${fixed(overall.judgeBench.score)} (${integer(overall.pairs)} pairs)`);
  }
  out.push('', '```', formatMetaTable(report).trimEnd(), '```', '');
  return out.join('\n');
}

function percent(value: number | null | undefined): string {
  return typeof value === 'number' && Number.isFinite(value) ? `${(value * 100).toFixed(1)}%` : '—';
}

function shareInterval(share: ShareWithInterval): string {
  return share.ci95 ? interval(share.ci95, percent) : '—';
}

const markdownRowLimit = 50;

export function renderCompareMarkdown(payload: CompareReportPayload): string {
  const summary = payload.summary;
  const agreement = summary.figures.agreement?.overall;
  const out: string[] = [`# ${markdownCell(payload.title, 200)}`, ''];
  if (summary.madeUpBy !== undefined) out.push(madeUpBannerMarkdown(summary.madeUpBy), '');
  pushCompareHeadline(out, summary);
  if (agreement) pushGoldAgreement(out, agreement);
  pushCriterionOutcomes(out, summary);
  pushSourceOutcomes(out, summary);
  return `${out.join('\n').trimEnd()}\n`;
}

type CompareSummary = CompareReportPayload['summary'];

/** The win rate of A, then the compare file's counts, outcomes, orders, judge, usage and any mismatch with its summary file. */
function pushCompareHeadline(out: string[], summary: CompareSummary): void {
  const figures = summary.figures;
  const overall = figures.overall;
  const judged = overall.win + overall.tie + overall.loss + overall.inconsistent;
  out.push(
    `**Win rate of A: ${percent(overall.win_rate.value)}** (95% CI ${shareInterval(overall.win_rate)}, ${integer(judged)} pairs with a verdict; a tie or an order-inconsistent verdict counts as half a win) · tie rate ${percent(overall.tie_rate.value)} · position consistency ${percent(overall.position_consistency.value)} (95% CI ${shareInterval(overall.position_consistency)})`,
    '',
  );
  out.push(`- Compare file: \`${markdownCell(summary.label, 120)}\` — ${integer(figures.n)} pairs · ${integer(figures.n_ok)} ok · ${integer(figures.n_error)} error · ${integer(figures.n_invalid)} invalid`);
  out.push(`- Outcomes: A better ${integer(overall.win)} · tie ${integer(overall.tie)} · B better ${integer(overall.loss)} · order-inconsistent ${integer(overall.inconsistent)}`);
  out.push(`- Orders: ${integer(summary.swappedPairs)} pairs judged in both orders · ${integer(summary.labelledPairs)} with a gold label`);
  const judges = summary.judges;
  out.push(
    `- Judge: ${judges.length === 0 ? 'not recorded' : judges.map((judge) => `\`${markdownCell(judge.id, 80)}\` (model ${markdownCell(judge.model, 60)}, template ${markdownCell(judge.template_version, 40)}, ${markdownCell(judge.mode, 40)})`).join('; ')}`,
  );
  const usage = figures.usage;
  out.push(
    `- Usage: ${integer(usage.calls)} judge calls, ${integer(usage.cache_hits)} cache hits, ${integer(usage.retries)} retries, ${integer(usage.prompt_tokens)} input tokens (${integer(usage.cached_prompt_tokens)} cached), ${integer(usage.completion_tokens)} output tokens, ${summary.costUsd === null ? 'cost unknown' : `$${summary.costUsd.toFixed(4)}`}`,
  );
  if (summary.invalidLineCount > 0) out.push(`- **${integer(summary.invalidLineCount)} unreadable line${summary.invalidLineCount === 1 ? '' : 's'} counted as invalid pairs** (first: ${markdownCell(summary.invalidLines[0]?.message ?? '', 160)})`);
  if (summary.summaryFile && summary.summaryFile.differences.length > 0) {
    out.push(`- **\`${markdownCell(summary.summaryFile.label, 120)}\` does not match the records** (figures here are recomputed from the records): ${summary.summaryFile.differences.map((difference) => markdownCell(difference, 120)).join('; ')}`);
  }
  out.push('');
}

function pushGoldAgreement(out: string[], agreement: NonNullable<NonNullable<CompareSummary['figures']['agreement']>['overall']>): void {
  out.push('## Against gold labels', '');
  const ci = (value: { lower: number; upper: number } | null) => (value ? `${fixed(value.lower)} – ${fixed(value.upper)}` : '—');
  out.push(
    table(
      ['figure', 'value', '95% CI'],
      [
        ['accuracy · original order', fixed(agreement.accuracy.original), ci(agreement.intervals.accuracyOriginal)],
        ['accuracy · swapped order', fixed(agreement.accuracy.swapped), '—'],
        ['accuracy · average', fixed(agreement.accuracy.average), ci(agreement.intervals.accuracyAverage)],
        ['positional agreement', fixed(agreement.positionalAgreement), ci(agreement.intervals.positionalAgreement)],
        ['right in both orders', fixed(agreement.accuracy.both), '—'],
      ],
      new Set([1]),
    ),
    '',
    `${integer(agreement.pairs)} labelled pairs; LLMBar's definitions (a missing verdict is never right).`,
    '',
  );
}

function pushCriterionOutcomes(out: string[], summary: CompareSummary): void {
  if (summary.criteria.length === 0) return;
  out.push('## By rubric criterion', '');
  const rows = summary.criteria.slice(0, markdownRowLimit).map((row) => [
    markdownCell(row.text, 100),
    `\`${markdownCell(row.id, 40)}\``,
    integer(row.win + row.tie + row.loss + row.inconsistent + row.errors),
    integer(row.win),
    integer(row.tie),
    integer(row.loss),
    integer(row.inconsistent),
    integer(row.errors),
    row.bothOrders > 0 ? percent(row.consistentPairs / row.bothOrders) : '—',
  ]);
  out.push(table(['criterion', 'id', 'compared', 'A better', 'tie', 'B better', 'inconsistent', 'error', 'consistency'], rows, new Set([2, 3, 4, 5, 6, 7, 8])));
  const more = summary.criteria.length - rows.length + summary.criteriaOmitted;
  if (more > 0) out.push('', `… ${integer(more)} more criteria in the HTML report.`);
  out.push('');
}

/** Outcomes per source, with the gold-label figures when the pairs have labels. */
function pushSourceOutcomes(out: string[], summary: CompareSummary): void {
  if (summary.sources.length === 0) return;
  const agreement = summary.figures.agreement?.overall;
  out.push('## By source', '');
  const sourceAgreement = summary.figures.agreement?.bySource ?? {};
  const header = ['source', 'pairs', 'A better', 'tie', 'B better', 'inconsistent', 'error', 'win rate', '95% CI', 'consistency'];
  if (agreement) header.push('accuracy (avg)', 'agreement');
  const rows = summary.sources.slice(0, markdownRowLimit).map((row) => {
    const cells = [
      row.source === null ? '(no source)' : markdownCell(row.source, 80),
      integer(row.n),
      integer(row.win),
      integer(row.tie),
      integer(row.loss),
      integer(row.inconsistent),
      integer(row.n_error + row.n_invalid),
      percent(row.win_rate.value),
      shareInterval(row.win_rate),
      percent(row.position_consistency.value),
    ];
    if (agreement) {
      const gold = row.source === null ? undefined : sourceAgreement[row.source];
      cells.push(fixed(gold?.accuracy.average), fixed(gold?.positionalAgreement));
    }
    return cells;
  });
  out.push(table(header, rows, new Set(header.map((_, index) => index).filter((index) => index > 0))));
  const more = summary.sources.length - rows.length + summary.sourcesOmitted;
  if (more > 0) out.push('', `… ${integer(more)} more sources in the HTML report.`);
  out.push('');
}
