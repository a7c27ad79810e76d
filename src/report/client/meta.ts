/**
 * Meta-evaluation views: how far a judge agrees with trusted labels. Binary reports show the
 * confusion matrix and per-group accuracy / F1 / κ with intervals; pairwise reports show
 * accuracy per presentation order and positional agreement.
 */
import { madeUpBy } from '../../util/made-up.js';
import { COLORS, card, type StatRow, chartBox, ciTrack, formatInteger, formatInterval, formatPercent, formatScore, formatSigned, h, isNumber, plural, replaceChart, sectionHead, statList, tabs, truncate } from './common.js';
import { pageFooter, pageFrame } from './frame.js';
import type { ConfidenceInterval } from '../../statistics/bootstrap.js';
import type { BiasIndexReport, BinaryMetaReport, BinaryMetrics, ConfusionCounts } from '../../meta/binary-metrics.js';
import type { PairwiseMetaReport, PairwiseMetrics, VerdictCounts } from '../../scoring/pairwise-metrics.js';
import type { MetaReportPayload } from '../types.js';
import type { Interval } from './chart.js';

/** A pairwise report of published judge outputs says where they came from. */
type PairwiseReportShown = PairwiseMetaReport & { published?: { format: string; file: string; judge: string | null; strategy: string | null; invalidRows: number } };

interface GroupEntry<M> {
  name: string;
  metrics: M;
  countLabel: string;
}

interface GroupMetric<M> {
  label: string;
  value(metrics: M): number | null;
  interval?(metrics: M): ConfidenceInterval | null;
  min?: number;
}

function intervalPair(interval: ConfidenceInterval | null | undefined): Interval { return interval ? [interval.lower, interval.upper] : null; }

export function metricCard(label: string, value: number | null, interval: ConfidenceInterval | null, note?: string | null, testid?: string): HTMLElement {
  return h('section', { className: 'card metric-card', data: { testid: testid || 'metric' } }, [
    h('h3', { text: label }),
    h('div', { className: 'metric-value num', text: formatScore(value) }),
    h('div', { className: 'metric-ci num', text: interval ? Math.round(interval.confidence * 100) + '% CI ' + formatScore(interval.lower) + ' – ' + formatScore(interval.upper) : (note || 'no interval') }),
    isNumber(value) && value >= 0 && value <= 1 ? ciTrack(value, intervalPair(interval), 0, 1) : null
  ]);
}

/** Horizontal bars of one metric per group value, largest groups first (at most 40). */
function groupMetricChart<M>(holder: HTMLElement, entries: Array<GroupEntry<M>>, metric: GroupMetric<M>): void {
  const shown = entries.slice(0, 40);
  replaceChart(holder, Math.max(160, 56 + shown.length * 26), {
    type: 'bar',
    data: { labels: shown.map(function (entry) { return truncate(entry.name, 44); }), datasets: [{
      label: metric.label,
      data: shown.map(function (entry) { return metric.value(entry.metrics); }),
      intervals: shown.map(function (entry) { return intervalPair(metric.interval ? metric.interval(entry.metrics) : null); }),
      backgroundColor: COLORS.accentSoft, borderRadius: 4, barPercentage: 0.75
    }] },
    options: {
      indexAxis: 'y',
      scales: { x: { suggestedMin: metric.min === undefined ? 0 : metric.min, suggestedMax: 1 }, y: { grid: { display: false }, ticks: { autoSkip: false } } },
      plugins: { legend: { display: false }, tooltip: { callbacks: {
        title: function (items) { return shown[items[0].dataIndex].name; },
        label: function (item) {
          const entry = shown[item.dataIndex];
          const interval = metric.interval ? metric.interval(entry.metrics) : null;
          return metric.label + ': ' + formatScore(item.raw) + (interval ? '  (CI ' + formatScore(interval.lower) + ' – ' + formatScore(interval.upper) + ')' : '') + ' · ' + entry.countLabel;
        }
      } } }
    }
  }, metric.label + ' by group');
  if (entries.length > shown.length) holder.appendChild(h('div', { className: 'chart-note', text: 'Showing the ' + shown.length + ' largest of ' + entries.length + ' groups.' }));
}

export function renderBinaryMetaView(root: HTMLElement, payload: MetaReportPayload): void {
  const report = payload.report as BinaryMetaReport;
  const overall = report.overall;
  const page = pageFrame(root, payload, {
    sections: [{ id: 'overview', label: 'Overview' }, { id: 'groups', label: 'Groups' }],
    subtitle: [h('span', { className: 'pill accent', text: 'binary meta-evaluation' }), h('span', { className: 'mono', text: payload.label }), h('span', { className: 'num muted', text: plural(overall.records, 'record') + ' · ' + plural(overall.pairs, 'judge–label pair') })],
    madeUpBy: madeUpBy(payload.report) || null
  });
  const hero = h('section', { className: 'section grid-3', attrs: { id: 'overview' }, style: { 'margin-top': '0', 'grid-template-columns': 'repeat(auto-fit, minmax(220px, 1fr))' } }, [
    metricCard('Balanced F1 (HealthBench)', overall.balancedF1, overall.intervals.balancedF1, 'undefined: a class is missing', 'balanced-f1'),
    metricCard('Accuracy', overall.accuracy, overall.intervals.accuracy, null, 'accuracy'),
    metricCard('Macro F1', overall.macroF1, overall.intervals.macroF1, null, 'macro-f1'),
    metricCard("Cohen's κ", overall.cohenKappa, overall.intervals.cohenKappa, null, 'kappa')
  ]);
  page.appendChild(hero);

  const grid = h('div', { className: 'grid-2', style: { 'margin-top': '16px' } });
  page.appendChild(grid);
  grid.appendChild(confusionCard(overall.confusion));
  grid.appendChild(card('Per class', [classTable(overall), agreementRows()]));

  if (report.biasIndex) page.appendChild(biasSection(report.biasIndex));
  page.appendChild(binaryGroupSection(report, 'accuracy, F1 and κ per group value, with 95% bootstrap intervals'));
  page.appendChild(pageFooter(payload, ['bootstrap: ' + report.bootstrap.resamples + ' resamples over records, seed ' + report.bootstrap.seed]));

  function classTable(metrics: BinaryMetrics): HTMLElement {
    function row(name: string, values: BinaryMetrics['positive']): HTMLElement {
      return h('tr', null, [h('td', { text: name }), h('td', { className: 'num', text: formatScore(values.precision) }), h('td', { className: 'num', text: formatScore(values.recall) }), h('td', { className: 'num', text: formatScore(values.f1) }), h('td', { className: 'num', text: formatInteger(values.predicted) }), h('td', { className: 'num', text: formatInteger(values.support) })]);
    }
    return h('table', { className: 'data' }, [
      h('thead', null, [h('tr', null, ['class', 'precision', 'recall', 'F1', 'predicted', 'labelled'].map(function (label, index) { return h('th', { className: index ? 'num' : '', text: label }); }))]),
      h('tbody', null, [row('met', metrics.positive), row('not met', metrics.negative),
        h('tr', null, [h('td', { text: 'balanced' }), h('td', { className: 'num', text: formatScore(metrics.balancedPrecision) }), h('td', { className: 'num', text: formatScore(metrics.balancedRecall) }), h('td', { className: 'num', text: formatScore(metrics.balancedF1) }), h('td'), h('td')])])
    ]);
  }

  function agreementRows() {
    const agreement = report.agreement;
    const rows: StatRow[] = [];
    if (agreement.recordsWithSeveralLabels > 0) rows.push(["Fleiss' κ among humans", formatScore(agreement.humanFleissKappa) + ' (' + plural(agreement.recordsWithSeveralLabels, 'record') + ')']);
    if (agreement.recordsWithJury > 0) rows.push(["Fleiss' κ among jurors", formatScore(agreement.juryFleissKappa) + ' (' + plural(agreement.recordsWithJury, 'record') + ')']);
    // The human ceiling beside the judge (reports written before it existed have none).
    const baseline = report.humanBaseline;
    if (baseline) {
      // Reports written before `pooled` existed carry the pooled figure at the top level.
      const how = baseline.aggregation === 'unnamed-raters' ? 'raters not named: one anonymous rater per ' + baseline.categoryKey : baseline.aggregation ? 'weighted average of raters over (rater, ' + baseline.categoryKey + ') cells, as HealthBench publishes it' : 'pooled over rater pairs';
      const pooled = baseline.pooled ? '; pooled over all pairs: balanced F1 ' + formatScore(baseline.pooled.balancedF1) : '';
      rows.push(['Human ceiling: raters against one another (HealthBench physician baseline)', 'balanced F1 ' + formatScore(baseline.balancedF1) + ' · κ ' + formatScore(baseline.cohenKappa) + ' · accuracy ' + formatScore(baseline.accuracy) + ' · ' + plural(baseline.pairs, 'rater pair'), 'num', how + pooled]);
      const weighted = baseline.judge ? 'weighted as the raters, one cell per ' + baseline.categoryKey + ': balanced F1 ' + formatScore(baseline.judge.balancedF1) + ' · κ ' + formatScore(baseline.judge.cohenKappa) : undefined;
      rows.push(['Judge against the same labels', 'balanced F1 ' + formatScore(overall.balancedF1) + ' · κ ' + formatScore(overall.cohenKappa) + ' · accuracy ' + formatScore(overall.accuracy) + ' · ' + plural(overall.pairs, 'pair'), 'num', weighted]);
    }
    if (rows.length === 0) return null;
    return h('div', { style: { 'margin-top': '14px' } }, [statList(rows)]);
  }

  function biasSection(bias: BiasIndexReport): HTMLElement {
    const sources = Object.keys(bias.bySource);
    const section = h('section', { className: 'section' }, [sectionHead('Bias by response source', 'mean of (verdict − label), met = 1: above 0 the judge is lenient with that source, below 0 severe')]);
    const container = card(null, [
      statList([
        ['Bias index (max − min)', formatScore(bias.biasIndex) + (bias.intervals.biasIndex ? '  (CI ' + formatScore(bias.intervals.biasIndex.lower) + ' – ' + formatScore(bias.intervals.biasIndex.upper) + ')' : '')],
        ['Macro F1 − bias index', formatScore(bias.mf1MinusBiasIndex) + (bias.intervals.mf1MinusBiasIndex ? '  (CI ' + formatScore(bias.intervals.mf1MinusBiasIndex.lower) + ' – ' + formatScore(bias.intervals.mf1MinusBiasIndex.upper) + ')' : '')]
      ])
    ]);
    let extent = 0.05;
    sources.forEach(function (source) { extent = Math.max(extent, Math.abs(bias.bySource[source].meanError)); });
    container.appendChild(chartBox(Math.max(140, 50 + sources.length * 28), {
      type: 'bar',
      data: { labels: sources.map(function (source) { return truncate(source, 40); }), datasets: [{ label: 'mean error', data: sources.map(function (source) { return bias.bySource[source].meanError; }), backgroundColor: sources.map(function (source) { return bias.bySource[source].meanError >= 0 ? 'rgba(245, 158, 11, 0.8)' : 'rgba(79, 70, 229, 0.75)'; }), borderRadius: 4 }] },
      options: { indexAxis: 'y', scales: { x: { min: -extent * 1.15, max: extent * 1.15 }, y: { grid: { display: false } } }, plugins: { legend: { display: false }, tooltip: { callbacks: { label: function (item) { return 'mean error ' + formatSigned(item.raw) + ' over ' + plural(bias.bySource[sources[item.dataIndex]].pairs, 'pair'); } } } } }
    }, 'mean error by source').element);
    section.appendChild(container);
    return section;
  }

}

/** The 2×2 table of judge verdicts against human labels. */
export function confusionCard(confusion: ConfusionCounts): HTMLElement {
  const total = confusion.truePositive + confusion.falsePositive + confusion.falseNegative + confusion.trueNegative;
  function cell(count: number, correct: boolean, label: string): HTMLElement {
    const share = total ? count / total : 0;
    const alpha = 0.12 + 0.75 * share;
    return h('div', { className: 'cell', title: label, data: { testid: 'confusion-' + label.replace(/ /g, '-') }, style: { background: correct ? 'rgba(16, 185, 129, ' + alpha + ')' : 'rgba(239, 68, 68, ' + alpha + ')', color: share > 0.45 ? '#fff' : COLORS.text } }, [
      h('div', { className: 'count num', text: formatInteger(count) }),
      h('div', { className: 'share num', text: formatPercent(share) + ' · ' + label })
    ]);
  }
  return card('Confusion matrix', [
    h('div', { className: 'matrix', data: { testid: 'confusion' } }, [
      h('div'), h('div', { className: 'axis', text: 'label: met' }), h('div', { className: 'axis', text: 'label: not met' }),
      h('div', { className: 'axis', text: 'judge: met' }), cell(confusion.truePositive, true, 'true positive'), cell(confusion.falsePositive, false, 'false positive'),
      h('div', { className: 'axis', text: 'judge: not met' }), cell(confusion.falseNegative, false, 'false negative'), cell(confusion.trueNegative, true, 'true negative')
    ]),
    h('div', { className: 'chart-note', text: 'Counts are over (judge verdict, human label) pairs; a record with several labels counts once per label.' })
  ]);
}

/**
 * Accuracy, F1 and κ per group value of a binary report, as a chart and a table; `nameOf` says
 * what a group value stands for (a criterion id's text).
 */
export function binaryGroupSection(report: Pick<BinaryMetaReport, 'groups'>, hint: string, nameOf?: (key: string, value: string) => string): HTMLElement {
  const section = h('section', { className: 'section', attrs: { id: 'groups' } }, [sectionHead('By group', hint)]);
  const keys = Object.keys(report.groups);
  if (keys.length === 0) { section.appendChild(card(null, [h('div', { className: 'callout info', text: 'The records carry no groups.' })])); return section; }
  const metricOptions: Array<GroupMetric<BinaryMetrics> & { key: string }> = [
    { key: 'accuracy', label: 'Accuracy', value: function (m) { return m.accuracy; }, interval: function (m) { return m.intervals.accuracy; } },
    { key: 'balancedF1', label: 'Balanced F1', value: function (m) { return m.balancedF1; }, interval: function (m) { return m.intervals.balancedF1; } },
    { key: 'macroF1', label: 'Macro F1', value: function (m) { return m.macroF1; }, interval: function (m) { return m.intervals.macroF1; } },
    { key: 'cohenKappa', label: "Cohen's κ", value: function (m) { return m.cohenKappa; }, interval: function (m) { return m.intervals.cohenKappa; }, min: -0.2 }
  ];
  const current = { key: keys[0], metric: metricOptions[0] };
  const holder = h('div');
  const tableHolder = h('div', { className: 'table-scroll', style: { 'margin-top': '14px' } });
  const head = h('div', { className: 'card-head' }, [
    tabs(keys.map(function (key) { return { value: key, label: key + ' (' + Object.keys(report.groups[key]).length + ')' }; }), current.key, function (key) { current.key = key; draw(); }),
    tabs(metricOptions.map(function (option) { return { value: option.key, label: option.label }; }), current.metric.key, function (value) { current.metric = metricOptions.filter(function (option) { return option.key === value; })[0]; draw(); })
  ]);
  section.appendChild(h('section', { className: 'card', data: { testid: 'group-chart' } }, [head, holder, tableHolder]));
  draw();
  return section;

  function draw() {
    const groups = report.groups[current.key];
    const entries: Array<GroupEntry<BinaryMetrics>> = Object.keys(groups).map(function (name) { return { name: nameOf ? nameOf(current.key, name) : name, metrics: groups[name], countLabel: plural(groups[name].pairs, 'pair') }; })
      .sort(function (left, right) { return right.metrics.pairs - left.metrics.pairs || (left.name < right.name ? -1 : 1); });
    groupMetricChart(holder, entries, current.metric);
    tableHolder.textContent = '';
    const body = h('tbody');
    entries.slice(0, 200).forEach(function (entry) {
      const m = entry.metrics;
      body.appendChild(h('tr', null, [h('td', { text: entry.name }), h('td', { className: 'num', text: formatInteger(m.pairs) }), h('td', { className: 'num', text: formatScore(m.accuracy) }), h('td', { className: 'num', text: formatScore(m.balancedF1) }), h('td', { className: 'num', text: formatScore(m.macroF1) }), h('td', { className: 'num', text: formatScore(m.cohenKappa) })]));
    });
    tableHolder.appendChild(h('table', { className: 'data' }, [h('thead', null, [h('tr', null, [current.key, 'pairs', 'accuracy', 'balanced F1', 'macro F1', 'κ'].map(function (label, index) { return h('th', { className: index ? 'num' : '', text: label }); }))]), body]));
  }
}

export function renderPairwiseMetaView(root: HTMLElement, payload: MetaReportPayload): void {
  const report = payload.report as PairwiseReportShown;
  const overall = report.overall;
  const published = report.published || null;
  const subtitle = [h('span', { className: 'pill accent', text: 'pairwise meta-evaluation' }), h('span', { className: 'mono', text: payload.label }), h('span', { className: 'num muted', text: plural(overall.pairs, 'pair') + ' · ' + formatInteger(overall.swappedPairs) + ' with a swapped-order verdict' })];
  if (published) subtitle.push(h('span', { className: 'muted', text: published.format + (published.judge ? ' · ' + published.judge : '') + (published.strategy ? ' / ' + published.strategy : '') }));
  const page = pageFrame(root, payload, { sections: [{ id: 'overview', label: 'Overview' }, { id: 'groups', label: 'Groups' }], subtitle: subtitle, madeUpBy: madeUpBy(payload.report) || null });
  page.appendChild(h('section', { className: 'section grid-3', attrs: { id: 'overview' }, style: { 'margin-top': '0', 'grid-template-columns': 'repeat(auto-fit, minmax(200px, 1fr))' } }, [
    metricCard('Accuracy · original order', overall.accuracy.original, overall.intervals.accuracyOriginal, null, 'accuracy-original'),
    metricCard('Accuracy · swapped order', overall.accuracy.swapped, null, overall.swappedPairs ? 'no interval' : 'no swapped verdicts', 'accuracy-swapped'),
    metricCard('Accuracy · average', overall.accuracy.average, overall.intervals.accuracyAverage, null, 'accuracy-average'),
    metricCard('Positional agreement', overall.positionalAgreement, overall.intervals.positionalAgreement, null, 'positional-agreement'),
    metricCard('JudgeBench score', overall.judgeBench.score, overall.intervals.judgeBenchScore, null, 'judgebench')
  ]));

  const grid = h('div', { className: 'grid-2', style: { 'margin-top': '16px' } });
  page.appendChild(grid);
  const verdictNames: Array<keyof VerdictCounts> = ['A', 'B', 'tie', 'invalid'];
  const verdictColors = [COLORS.accent, '#0ea5e9', COLORS.neutral, COLORS.bad];
  const orders: Array<{ key: 'original' | 'swapped'; label: string }> = [{ key: 'original', label: 'original order' }];
  if (overall.swappedPairs) orders.push({ key: 'swapped', label: 'swapped order' });
  const verdictCard = card('Verdicts by presentation order', [chartBox(60 + orders.length * 46, {
    type: 'bar',
    data: { labels: orders.map(function (order) { return order.label; }), datasets: verdictNames.map(function (name, index) {
      return { label: name === 'A' || name === 'B' ? 'prefers ' + name : name, data: orders.map(function (order) { return overall.verdicts[order.key][name]; }), backgroundColor: verdictColors[index], barPercentage: 0.6 };
    }) },
    options: { indexAxis: 'y', scales: { x: { stacked: true, beginAtZero: true, ticks: { precision: 0 } }, y: { stacked: true, grid: { display: false } } }, plugins: { legend: { position: 'bottom' } } }
  }, 'verdict counts by order').element, h('div', { className: 'chart-note', text: 'Swapped-order verdicts are mapped back to the original labelling, so a judge without position bias gives the same bars twice.' })]);
  grid.appendChild(verdictCard);
  const judgeBench = overall.judgeBench;
  grid.appendChild(card('Consistency across orders', [statList([
    ['Right in both orders', formatInteger(overall.counts.correctBoth) + ' (' + formatPercent(overall.accuracy.both) + ')'],
    ['Same verdict in both orders', formatInteger(overall.counts.equal) + ' (' + formatPercent(overall.positionalAgreement) + ')'],
    ["Cohen's κ vs gold · original", formatScore(overall.kappa.original)],
    ["Cohen's κ vs gold · swapped", formatScore(overall.kappa.swapped)],
    ['JudgeBench: correct / incorrect / tie', formatInteger(judgeBench.correct) + ' / ' + formatInteger(judgeBench.incorrect) + ' / ' + formatInteger(judgeBench.tie)],
    ['JudgeBench: inconsistent games', formatInteger(judgeBench.inconsistent)],
    overall.llmbarKappa ? ['LLMBar κ (average / agreement)', formatScore(overall.llmbarKappa.average) + ' / ' + formatScore(overall.llmbarKappa.agreement)] : null
  ])]));

  const holder = h('div');
  const tableHolder = h('div', { className: 'table-scroll', style: { 'margin-top': '14px' } });
  const section = h('section', { className: 'section', attrs: { id: 'groups' } }, [sectionHead('By source and category', 'accuracy in each presentation order and positional agreement, with 95% bootstrap intervals where computed')]);
  const breakdowns = ([{ value: 'bySource', label: 'source' }, { value: 'byCategory', label: 'category' }] as Array<{ value: 'bySource' | 'byCategory'; label: string }>).filter(function (option) { return Object.keys(report[option.value] || {}).length > 0; });
  if (breakdowns.length === 0) section.appendChild(card(null, [h('div', { className: 'callout info', text: 'The pairs carry no source or category.' })]));
  else {
    section.appendChild(h('section', { className: 'card', data: { testid: 'group-chart' } }, [h('div', { className: 'card-head' }, [tabs(breakdowns.map(function (option) { return { value: option.value, label: option.label + ' (' + Object.keys(report[option.value]).length + ')' }; }), breakdowns[0].value, draw)]), holder, tableHolder]));
    draw(breakdowns[0].value);
  }
  page.appendChild(section);
  if (published && published.invalidRows > 0) page.appendChild(h('div', { className: 'callout error', text: plural(published.invalidRows, 'row') + ' of ' + published.file + ' could not be read and are left out of every figure.' }));
  page.appendChild(pageFooter(payload, ['bootstrap: ' + report.bootstrap.resamples + ' resamples over pairs, seed ' + report.bootstrap.seed]));

  function draw(key: 'bySource' | 'byCategory'): void {
    const groups = report[key];
    const names = Object.keys(groups).sort(function (left, right) { return groups[right].pairs - groups[left].pairs || (left < right ? -1 : 1); }).slice(0, 40);
    let series: Array<{ label: string; value(m: PairwiseMetrics): number | null; interval(m: PairwiseMetrics): Interval; color: string }> = [
      { label: 'accuracy · original', value: function (m) { return m.accuracy.original; }, interval: function (m) { return intervalPair(m.intervals.accuracyOriginal); }, color: COLORS.accentSoft },
      { label: 'accuracy · swapped', value: function (m) { return m.accuracy.swapped; }, interval: function () { return null; }, color: 'rgba(14, 165, 233, 0.75)' },
      { label: 'positional agreement', value: function (m) { return m.positionalAgreement; }, interval: function (m) { return intervalPair(m.intervals.positionalAgreement); }, color: 'rgba(148, 163, 184, 0.85)' }
    ];
    if (!overall.swappedPairs) series = series.slice(0, 1);
    replaceChart(holder, Math.max(180, 70 + names.length * series.length * 14), {
      type: 'bar',
      data: { labels: names.map(function (name) { return truncate(name, 40); }), datasets: series.map(function (each) {
        return { label: each.label, data: names.map(function (name) { return each.value(groups[name]); }), intervals: names.map(function (name) { return each.interval(groups[name]); }), backgroundColor: each.color, borderRadius: 3, barPercentage: 0.85, categoryPercentage: 0.8 };
      }) },
      options: { indexAxis: 'y', scales: { x: { min: 0, max: 1 }, y: { grid: { display: false }, ticks: { autoSkip: false } } }, plugins: { legend: { position: 'bottom' }, tooltip: { callbacks: { title: function (items) { return names[items[0].dataIndex]; }, label: function (item) { const interval = item.dataset.intervals?.[item.dataIndex]; return item.dataset.label + ': ' + formatScore(item.raw) + (interval ? '  (CI ' + formatInterval(interval) + ')' : '') + ' · ' + plural(groups[names[item.dataIndex]].pairs, 'pair'); } } } } }
    }, 'accuracy by group');
    tableHolder.textContent = '';
    const body = h('tbody');
    Object.keys(groups).sort(function (left, right) { return groups[right].pairs - groups[left].pairs; }).slice(0, 200).forEach(function (name) {
      const m = groups[name];
      body.appendChild(h('tr', null, [h('td', { text: name }), h('td', { className: 'num', text: formatInteger(m.pairs) }), h('td', { className: 'num', text: formatScore(m.accuracy.original) }), h('td', { className: 'num', text: formatScore(m.accuracy.swapped) }), h('td', { className: 'num', text: formatScore(m.accuracy.average) }), h('td', { className: 'num', text: formatScore(m.positionalAgreement) }), h('td', { className: 'num', text: formatScore(m.judgeBench.score) })]));
    });
    tableHolder.appendChild(h('table', { className: 'data' }, [h('thead', null, [h('tr', null, [key === 'bySource' ? 'source' : 'category', 'pairs', 'original', 'swapped', 'average', 'agreement', 'JudgeBench'].map(function (label, index) { return h('th', { className: index ? 'num' : '', text: label }); }))]), body]));
  }
}
