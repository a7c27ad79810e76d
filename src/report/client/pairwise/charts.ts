/**
 * The compare view's breakdowns: accuracy against gold labels, outcomes per rubric criterion,
 * and win rates by source.
 */
import { COLORS, card, chartBox, formatInteger, formatPercent, formatScore, h, isNumber, plural, sectionHead, statList, truncate, wrapLines } from '../common.js';
import { metricCard } from '../meta.js';
import type { CompareReportPayload, SourceComparisonTally } from '../../types.js';
import { PAIR_ERROR_COLOR, PAIR_OUTCOMES, shareText, type OutcomeKey } from './common.js';

type GoldAgreement = NonNullable<CompareReportPayload['summary']['figures']['agreement']>;

/** Accuracy against the gold labels, per presentation order and combined. */
export function agreementSection(payload: CompareReportPayload, gold: GoldAgreement): HTMLElement {
  const pairs = payload.pairs;
  const metrics = gold.overall;
  const section = h('section', { className: 'section', attrs: { id: 'agreement' } }, [sectionHead('Against gold labels', plural(metrics.pairs, 'labelled pair') + ' · LLMBar\'s definitions: a missing verdict is never right · intervals: ' + gold.bootstrap.resamples + ' bootstrap resamples over pairs, seed ' + gold.bootstrap.seed)]);
  section.appendChild(h('div', { className: 'grid-3', style: { 'grid-template-columns': 'repeat(auto-fit, minmax(200px, 1fr))' } }, [
    metricCard('Accuracy · original order', metrics.accuracy.original, metrics.intervals.accuracyOriginal, null, 'accuracy-original'),
    metricCard('Accuracy · swapped order', metrics.accuracy.swapped, null, metrics.swappedPairs ? 'no interval' : 'not judged in the swapped order', 'accuracy-swapped'),
    metricCard('Accuracy · average', metrics.accuracy.average, metrics.intervals.accuracyAverage, null, 'accuracy-average'),
    metricCard('Positional agreement', metrics.positionalAgreement, metrics.intervals.positionalAgreement, null, 'positional-agreement'),
    metricCard('Right in both orders', metrics.accuracy.both, null, 'no interval', 'accuracy-both')
  ]));
  let right = 0, wrong = 0, undecided = 0;
  for (let index = 0; index < pairs.ids.length; index += 1) {
    if (pairs.labels[index] < 0) continue;
    if (pairs.correct[index] === 1) right += 1; else if (pairs.correct[index] === 0) wrong += 1; else undecided += 1;
  }
  const grid = h('div', { className: 'grid-2', style: { 'margin-top': '16px' } });
  const orders: Array<{ key: 'original' | 'swapped'; label: string }> = [{ key: 'original', label: 'original order' }];
  if (metrics.swappedPairs) orders.push({ key: 'swapped', label: 'swapped order' });
  const names = ['A', 'B', 'tie', 'invalid'] as const;
  const colors = ['#4f46e5', '#0d9488', '#cbd5e1', PAIR_ERROR_COLOR];
  grid.appendChild(card('Verdicts by presentation order', [chartBox(60 + orders.length * 46, {
    type: 'bar',
    data: { labels: orders.map(function (order) { return order.label; }), datasets: names.map(function (name, index) {
      return { label: name === 'A' || name === 'B' ? name + ' better' : name === 'invalid' ? 'no verdict' : name, data: orders.map(function (order) { return metrics.verdicts[order.key][name]; }), backgroundColor: colors[index], barPercentage: 0.6 };
    }) },
    options: { indexAxis: 'y', scales: { x: { stacked: true, beginAtZero: true, ticks: { precision: 0 } }, y: { stacked: true, grid: { display: false } } }, plugins: { legend: { position: 'bottom' } } }
  }, 'verdict counts by presentation order').element, h('div', { className: 'chart-note', text: 'Labelled pairs only; swapped-order verdicts are mapped back to A / B, so a judge without position bias draws the same bar twice.' })]));
  grid.appendChild(card('Combined verdict vs gold', [statList([
    ['Right (both orders agree with gold)', formatInteger(right), 'num'],
    ['Wrong (includes order-inconsistent)', formatInteger(wrong), 'num'],
    ['No verdict', formatInteger(undecided), 'num'],
    ['Same verdict in both orders', formatInteger(metrics.counts.equal) + ' (' + formatPercent(metrics.positionalAgreement) + ')', 'num'],
    ["Cohen's κ vs gold · original / swapped", formatScore(metrics.kappa.original) + ' / ' + formatScore(metrics.kappa.swapped), 'num'],
    ['JudgeBench score', formatScore(metrics.judgeBench.score) + (metrics.intervals.judgeBenchScore ? '  (CI ' + formatScore(metrics.intervals.judgeBenchScore.lower) + ' – ' + formatScore(metrics.intervals.judgeBenchScore.upper) + ')' : ''), 'num']
  ]), h('div', { className: 'chart-note', text: 'The per-order accuracies above score each order on its own; "right" here is the record\'s correct field: the combined verdict equals the label.' })]));
  section.appendChild(grid);
  return section;
}

// ---------------------------------------------------------------- criteria
/** Outcomes per rubric criterion: a chart of the most compared, a table of up to 200. */
export function criteriaSection(payload: CompareReportPayload): HTMLElement {
  const summary = payload.summary;
  const rows = summary.criteria;
  const section = h('section', { className: 'section', attrs: { id: 'criteria' } }, [sectionHead('By rubric criterion', 'each criterion compared in both orders; win = A better on that criterion')]);
  const shown = rows.slice(0, 30);
  const container = h('section', { className: 'card', data: { testid: 'criteria-chart' } }, [h('div', { className: 'card-head' }, [h('h3', { text: 'Outcome per criterion' }), h('span', { className: 'hint faint', text: rows.length > shown.length ? 'the ' + shown.length + ' most compared of ' + rows.length : plural(rows.length, 'criterion', 'criteria') })])]);
  const segments: Array<{ key: OutcomeKey | 'errors'; label: string; color: string }> = [...PAIR_OUTCOMES, { key: 'errors', label: 'error', color: PAIR_ERROR_COLOR }];
  container.appendChild(chartBox(Math.max(160, 70 + shown.length * 28), {
    type: 'bar',
    data: { labels: shown.map(function (row) { return truncate(row.text, 60); }), datasets: segments.map(function (segment) {
      return { label: segment.label, data: shown.map(function (row) { return row[segment.key]; }), backgroundColor: segment.color, barPercentage: 0.7 };
    }) },
    options: {
      indexAxis: 'y',
      scales: { x: { stacked: true, beginAtZero: true, ticks: { precision: 0 } }, y: { stacked: true, grid: { display: false }, ticks: { autoSkip: false } } },
      plugins: { legend: { position: 'bottom' }, tooltip: { callbacks: { title: function (items) { return wrapLines(shown[items[0].dataIndex].text, 64); } } } }
    }
  }, 'outcomes per criterion').element);
  const body = h('tbody');
  rows.slice(0, 200).forEach(function (row) {
    const total = row.win + row.tie + row.loss + row.inconsistent + row.errors;
    body.appendChild(h('tr', { data: { criterionId: row.id } }, [
      h('td', null, [h('div', { className: 'clamp', text: row.text, title: row.text }), h('div', { className: 'mono faint', text: row.id })]),
      h('td', { className: 'num', text: formatInteger(total) }),
      h('td', { className: 'num', text: formatInteger(row.win) }),
      h('td', { className: 'num', text: formatInteger(row.tie) }),
      h('td', { className: 'num', text: formatInteger(row.loss) }),
      h('td', { className: 'num', text: formatInteger(row.inconsistent) }),
      h('td', { className: 'num', text: formatInteger(row.errors) }),
      h('td', { className: 'num', text: row.bothOrders ? formatPercent(row.consistentPairs / row.bothOrders) : '—', title: formatInteger(row.consistentPairs) + ' of ' + formatInteger(row.bothOrders) })
    ]));
  });
  container.appendChild(h('div', { className: 'table-scroll', style: { 'margin-top': '14px' } }, [h('table', { className: 'data', data: { testid: 'criteria-table' } }, [
    h('thead', null, [h('tr', null, ['criterion', 'compared', 'A better', 'tie', 'B better', 'inconsistent', 'error', 'consistency'].map(function (label, index) { return h('th', { className: index ? 'num' : '', text: label }); }))]),
    body
  ])]));
  if (rows.length > 200 || summary.criteriaOmitted > 0) container.appendChild(h('div', { className: 'chart-note', text: formatInteger(rows.length - Math.min(rows.length, 200) + summary.criteriaOmitted) + ' less-compared criteria are not listed.' }));
  section.appendChild(container);
  return section;
}

// ---------------------------------------------------------------- sources
function sourceName(row: SourceComparisonTally): string { return row.source === null ? '(no source)' : row.source; }

/** Win rate of A by source (and accuracy per source with gold labels); a click on a source lists its pairs. */
export function sourcesSection(payload: CompareReportPayload, filterBySource: (source: string | null) => void): HTMLElement {
  const summary = payload.summary, agreement = summary.figures.agreement || null;
  const rows = summary.sources;
  const section = h('section', { className: 'section', attrs: { id: 'sources' } }, [sectionHead('By source', 'win rate of A with 95% bootstrap intervals' + (agreement ? '; accuracy against gold labels per source' : ''))]);
  const container = h('section', { className: 'card', data: { testid: 'sources' } });
  const shown = rows.filter(function (row) { return isNumber(row.win_rate.value); }).slice(0, 40);
  if (shown.length) {
    container.appendChild(chartBox(Math.max(150, 56 + shown.length * 26), {
      type: 'bar',
      data: { labels: shown.map(function (row) { return truncate(sourceName(row), 40); }), datasets: [{
        label: 'win rate of A',
        data: shown.map(function (row) { return row.win_rate.value; }),
        intervals: shown.map(function (row) { return row.win_rate.ci95; }),
        backgroundColor: COLORS.accentSoft, borderRadius: 4, barPercentage: 0.75
      }] },
      options: {
        indexAxis: 'y',
        scales: { x: { min: 0, max: 1, ticks: { callback: function (value) { return Math.round(value * 100) + '%'; } } }, y: { grid: { display: false }, ticks: { autoSkip: false } } },
        plugins: { legend: { display: false }, tooltip: { callbacks: {
          title: function (items) { return sourceName(shown[items[0].dataIndex]); },
          label: function (item) { const row = shown[item.dataIndex]; return 'win rate of A ' + shareText(row.win_rate) + ' · ' + plural(row.n, 'pair'); }
        } } }
      }
    }, 'win rate of A by source').element);
  }
  const body = h('tbody');
  rows.slice(0, 200).forEach(function (row) {
    const gold = agreement && row.source !== null ? agreement.bySource[row.source] : null;
    const cells = [
      h('td', { className: row.source === null ? 'faint' : '', text: sourceName(row) }),
      h('td', { className: 'num', text: formatInteger(row.n) }),
      h('td', { className: 'num', text: formatInteger(row.win) }),
      h('td', { className: 'num', text: formatInteger(row.tie) }),
      h('td', { className: 'num', text: formatInteger(row.loss) }),
      h('td', { className: 'num', text: formatInteger(row.inconsistent) }),
      h('td', { className: 'num', text: formatInteger(row.n_error + row.n_invalid) }),
      h('td', { className: 'num', text: formatPercent(row.win_rate.value), title: shareText(row.win_rate) }),
      h('td', { className: 'num', text: formatPercent(row.position_consistency.value), title: shareText(row.position_consistency) })
    ];
    if (agreement) {
      cells.push(h('td', { className: 'num', text: gold ? formatScore(gold.accuracy.average) : '—' }));
      cells.push(h('td', { className: 'num', text: gold ? formatScore(gold.positionalAgreement) : '—' }));
    }
    body.appendChild(h('tr', { className: 'clickable', data: { source: sourceName(row) }, on: { click: function () { filterBySource(row.source); } } }, cells));
  });
  const header = ['source', 'pairs', 'A better', 'tie', 'B better', 'inconsistent', 'error', 'win rate', 'consistency'].concat(agreement ? ['accuracy (avg)', 'agreement'] : []);
  container.appendChild(h('div', { className: 'table-scroll', style: { 'margin-top': '14px' } }, [h('table', { className: 'data', data: { testid: 'sources-table' } }, [
    h('thead', null, [h('tr', null, header.map(function (label, index) { return h('th', { className: index ? 'num' : '', text: label }); }))]),
    body
  ])]));
  container.appendChild(h('div', { className: 'chart-note', text: 'Click a source to list its pairs.' + (summary.sourcesOmitted ? ' ' + formatInteger(summary.sourcesOmitted) + ' smaller sources are not listed.' : '') }));
  section.appendChild(container);
  return section;
}
