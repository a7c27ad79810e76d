/**
 * The results view's charts: score by tag (per tag group, with the baseline's when comparing),
 * the item score histogram, pass rates by criterion source, and the criteria that cost the
 * most points.
 */
import { COLORS, chartBox, formatInteger, formatInterval, formatPercent, formatPoints, formatScore, h, isNumber, plural, replaceChart, sectionHead, tabs, tagNameOf, truncate, wrapLines } from '../common.js';
import type { ReportDataset } from '../chart.js';
import type { RunData } from '../../types.js';
import { tagGroups, type ResultsContext } from './common.js';

export function chartsSection(context: ResultsContext, filterByCriterion: (text: string) => void): HTMLElement {
  const section = h('section', { className: 'section', attrs: { id: 'charts' } }, [sectionHead('Where the points went', 'bars show means with 95% bootstrap intervals')]);
  const grid = h('div', { className: 'grid-2' });
  section.appendChild(grid);
  grid.appendChild(tagChartCard(context));
  grid.appendChild(histogramCard(context));
  grid.appendChild(sourceCard(context));
  grid.appendChild(mostFailedCard(context, filterByCriterion));
  return section;
}

function tagChartCard(context: ResultsContext): HTMLElement {
  const summary = context.summary, metrics = summary.metrics, baseline = context.baseline;
  const container = h('section', { className: 'card span-2', data: { testid: 'tag-chart' } });
  const groups = tagGroups(metrics.by_tag);
  const holder = h('div');
  const head = h('div', { className: 'card-head' }, [h('h3', { text: 'Score by tag' })]);
  container.appendChild(head);
  if (groups.names.length === 0) {
    container.appendChild(h('div', { className: 'callout info', text: 'No tags in these results.' }));
    return container;
  }
  head.appendChild(tabs(groups.names.map(function (name) { return { value: name, label: name + ' (' + groups.members[name].length + ')' }; }), groups.names[0], draw));
  container.appendChild(holder);
  draw(groups.names[0]);
  return container;

  function draw(group: string): void {
    const tags = groups.members[group].slice().sort(function (left, right) { return metrics.by_tag[right].score - metrics.by_tag[left].score; });
    const labels = tags.map(function (tag) { return truncate(tagNameOf(tag), 42); });
    const datasets: ReportDataset[] = [{
      label: summary.label,
      data: tags.map(function (tag) { return metrics.by_tag[tag].score; }),
      intervals: tags.map(function (tag) { return metrics.by_tag[tag].ci95; }),
      samples: tags.map(function (tag) { return metrics.by_tag[tag].n_samples; }),
      backgroundColor: COLORS.accentSoft, borderRadius: 4, barPercentage: 0.8, categoryPercentage: baseline ? 0.8 : 0.7
    }];
    if (baseline) {
      const baselineTags = baseline.summary.metrics.by_tag;
      datasets.push({
        label: baseline.summary.label,
        data: tags.map(function (tag) { return baselineTags[tag] ? baselineTags[tag].score : null; }),
        intervals: tags.map(function (tag) { return baselineTags[tag] ? baselineTags[tag].ci95 : null; }),
        samples: tags.map(function (tag) { return baselineTags[tag] ? baselineTags[tag].n_samples : 0; }),
        backgroundColor: COLORS.baselineSoft, borderRadius: 4, barPercentage: 0.8, categoryPercentage: 0.8
      });
    }
    const rowHeight = baseline ? 34 : 26;
    replaceChart(holder, Math.max(160, 56 + tags.length * rowHeight), {
      type: 'bar',
      data: { labels: labels, datasets: datasets },
      options: {
        indexAxis: 'y',
        scales: { x: { suggestedMin: 0, suggestedMax: 1, grid: { color: COLORS.grid } }, y: { grid: { display: false } } },
        plugins: {
          legend: { display: Boolean(baseline), position: 'bottom' },
          tooltip: { callbacks: {
            title: function (items) { return tags[items[0].dataIndex]; },
            label: function (item) {
              const dataset = item.dataset;
              return dataset.label + ': ' + formatScore(item.raw) + '  (95% CI ' + formatInterval(dataset.intervals?.[item.dataIndex]) + ', n = ' + formatInteger(dataset.samples?.[item.dataIndex]) + ')';
            }
          } }
        }
      }
    }, 'score by tag');
  }
}

function histogramCard(context: ResultsContext): HTMLElement {
  const summary = context.summary, baseline = context.baseline;
  const container = h('section', { className: 'card', data: { testid: 'histogram' } }, [h('div', { className: 'card-head' }, [h('h3', { text: 'Item score distribution' })])]);
  const histogram = summary.histogram;
  const labels = histogram.counts.map(function (_, index) { return formatScore(histogram.edges[index], 2); });
  const datasets: ReportDataset[] = [{ label: summary.label, data: histogram.counts, backgroundColor: COLORS.accentSoft, borderRadius: 3, barPercentage: 1, categoryPercentage: baseline ? 0.9 : 0.96 }];
  if (baseline) datasets.push({ label: baseline.summary.label, data: baseline.summary.histogram.counts, backgroundColor: COLORS.baselineSoft, borderRadius: 3, barPercentage: 1, categoryPercentage: 0.9 });
  container.appendChild(chartBox(260, {
    type: 'bar',
    data: { labels: labels, datasets: datasets },
    options: {
      scales: { x: { grid: { display: false }, ticks: { maxRotation: 0, autoSkip: true, maxTicksLimit: 11 } }, y: { beginAtZero: true, ticks: { precision: 0 } } },
      plugins: {
        legend: { display: Boolean(baseline), position: 'bottom' },
        tooltip: { callbacks: {
          title: function (items) { const index = items[0].dataIndex; return 'score ' + formatScore(histogram.edges[index], 2) + ' – ' + formatScore(histogram.edges[index + 1], 2); },
          label: function (item) { return item.dataset.label + ': ' + plural(item.raw, 'item'); }
        } }
      }
    }
  }, 'histogram of item scores').element);
  const scores = context.run.items.scores.filter(isNumber).sort(function (a, b) { return a - b; });
  if (scores.length) {
    const median = scores[Math.floor((scores.length - 1) / 2)];
    container.appendChild(h('div', { className: 'chart-note num', text: 'median ' + formatScore(median) + ' · min ' + formatScore(scores[0]) + ' · max ' + formatScore(scores[scores.length - 1]) + ' · ' + plural(scores.length, 'scored item') }));
  }
  return container;
}

function sourceCard(context: ResultsContext): HTMLElement {
  const summary = context.summary, baseline = context.baseline;
  const container = h('section', { className: 'card', data: { testid: 'source-chart' } }, [h('div', { className: 'card-head' }, [h('h3', { text: 'Pass rate by criterion source' })])]);
  const sources = (['judge', 'check'] as const).filter(function (name) { return summary.bySource[name].criteria > 0; });
  if (sources.length === 0) { container.appendChild(h('div', { className: 'callout info', text: 'No criteria in these results.' })); return container; }
  const segments: Array<{ key: 'passed' | 'failed' | 'errors' | 'skipped'; label: string; color: string }> = [
    { key: 'passed', label: 'passed', color: COLORS.good },
    { key: 'failed', label: 'cost points', color: COLORS.bad },
    { key: 'errors', label: 'error', color: COLORS.warn },
    { key: 'skipped', label: 'skipped', color: COLORS.neutral }
  ];
  const runs = baseline ? [context.run, baseline] : [context.run];
  const labels: string[] = [];
  const rows: Array<RunData['summary']['bySource']['judge']> = [];
  runs.forEach(function (each) {
    sources.forEach(function (source) {
      const rate = each.summary.bySource[source];
      if (rate.criteria === 0) return;
      labels.push(source === 'judge' ? 'LLM judge' + (baseline ? ' · ' + truncate(each.summary.label, 18) : '') : 'deterministic check' + (baseline ? ' · ' + truncate(each.summary.label, 18) : ''));
      rows.push(rate);
    });
  });
  container.appendChild(chartBox(Math.max(140, 50 + rows.length * 40), {
    type: 'bar',
    data: { labels: labels, datasets: segments.map(function (segment) {
      return { label: segment.label, data: rows.map(function (rate) { return rate[segment.key] / Math.max(1, rate.criteria); }), counts: rows.map(function (rate) { return rate[segment.key]; }), backgroundColor: segment.color, barPercentage: 0.7, borderSkipped: false };
    }) },
    options: {
      indexAxis: 'y',
      scales: { x: { stacked: true, min: 0, max: 1, ticks: { callback: function (value) { return Math.round(value * 100) + '%'; } } }, y: { stacked: true, grid: { display: false } } },
      plugins: { legend: { position: 'bottom' }, tooltip: { callbacks: { label: function (item) { return item.dataset.label + ': ' + formatInteger(item.dataset.counts?.[item.dataIndex]) + ' (' + formatPercent(item.raw) + ')'; } } } }
    }
  }, 'criteria outcome by source').element);
  container.appendChild(h('div', { className: 'chart-note' }, [sources.map(function (source) {
    const rate = summary.bySource[source];
    return h('div', { className: 'num', text: (source === 'judge' ? 'LLM judge' : 'Checks') + ': ' + formatPercent(rate.passed / Math.max(1, rate.evaluated)) + ' pass rate over ' + plural(rate.evaluated, 'graded criterion', 'graded criteria') + (rate.errors ? ', ' + formatInteger(rate.errors) + ' errors' : '') });
  })]));
  return container;
}

/** The criteria that cost the most points; a click on a bar lists the items it cost. */
function mostFailedCard(context: ResultsContext, filterByCriterion: (text: string) => void): HTMLElement {
  const summary = context.summary;
  const container = h('section', { className: 'card span-2', data: { testid: 'most-failed' } }, [h('div', { className: 'card-head' }, [h('h3', { text: 'Criteria that cost the most' }), h('span', { className: 'hint faint', text: 'click a bar to list the items · every criterion is in the Criteria table below' })])]);
  const rows = summary.mostFailed.slice(0, 14);
  if (rows.length === 0) { container.appendChild(h('div', { className: 'callout info', text: 'No criterion cost any points.' })); return container; }
  container.appendChild(chartBox(Math.max(160, 50 + rows.length * 28), {
    type: 'bar',
    data: { labels: distinctLabels(rows.map(function (row) { return row.text; }), 70), datasets: [{
      label: 'times it cost points',
      data: rows.map(function (row) { return row.failed; }),
      backgroundColor: rows.map(function (row) { return row.points < 0 ? 'rgba(239, 68, 68, 0.85)' : 'rgba(239, 68, 68, 0.55)'; }),
      borderRadius: 4, barPercentage: 0.75
    }] },
    options: {
      indexAxis: 'y',
      onClick: function (_, elements) { if (elements.length) filterByCriterion(rows[elements[0].index].text); },
      onHover: function (event, elements) { if (event.native) event.native.target.style.cursor = elements.length ? 'pointer' : 'default'; },
      scales: { x: { beginAtZero: true, ticks: { precision: 0 } }, y: { grid: { display: false }, ticks: { autoSkip: false } } },
      plugins: { legend: { display: false }, tooltip: { callbacks: {
        title: function (items) { return wrapLines(rows[items[0].dataIndex].text, 64); },
        label: function (item) {
          const row = rows[item.dataIndex];
          const lines = [
            (row.points < 0 ? 'penalty applied ' : 'not met ') + formatInteger(row.failed) + ' of ' + formatInteger(row.evaluated) + ' times (' + formatPercent(row.failed / Math.max(1, row.evaluated)) + ')',
            formatPoints(row.points) + ' points · ' + formatInteger(row.pointsLost) + ' points lost · ' + row.source
          ];
          if (row.stepRule !== undefined) lines.push('judged per step, folded by ' + row.stepRule);
          return lines;
        }
      } } }
    }
  }, 'criteria that cost the most points').element);
  return container;
}

/**
 * Bar labels of at most `length` characters that stay distinct: texts that share a long opening
 * (HealthBench's "Advises the user to…") keep their ends, with the cut in the middle.
 */
export function distinctLabels(texts: readonly string[], length: number): string[] {
  const labels = texts.map(function (text) { return truncate(text, length); });
  const seen: Record<string, number> = {};
  labels.forEach(function (label) { seen[label] = (seen[label] || 0) + 1; });
  return labels.map(function (label, index) {
    const text = texts[index];
    if (seen[label] === 1 || text.length <= length) return label;
    const head = Math.ceil((length - 1) / 2), tail = length - 1 - head;
    return text.slice(0, head) + '…' + text.slice(text.length - tail);
  });
}
