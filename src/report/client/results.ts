/**
 * The results view: headline, provenance, charts, the comparison with a baseline run, and
 * the item explorer (virtualised table + item drawer). Every string from the results is
 * inserted as text.
 */
import { ITEM_STATUS_NAMES, rubricateCriterionMet, rubricateDecodeItem, rubricateTags } from './decode.js';
import { COLORS, errorMessage, card, chartBox, ciTrack, createDrawerShell, createVirtualTable, drawerActions, formatCompact, formatCost, formatInteger, formatInterval, formatPercent, formatPoints, formatScore, formatSigned, formatSignedInterval, h, icon, isNumber, nextSort, plural, replaceChart, sectionHead, sortByNumber, sortByText, statList, tabs, tagGroupOf, tagNameOf, truncate, wrapLines } from './common.js';
import { pageFooter, pageFrame } from './frame.js';
import type { PairedDifference, ResultsReportPayload, RunData, RunTexts } from '../types.js';
import type { ReportDataset } from './chart.js';
import type { DecodedCriterion, DecodedItem, ItemStatusName } from './decode.js';
import type { TableColumn, StatRow, DrawerShell } from './common.js';
import type { TextStore } from './text-store.js';
import { textWithImages, trajectoryView, type TrajectoryView } from './media.js';

interface Outcome {
  className: 'problem' | 'skipped' | 'fail' | 'pass';
  label: string;
  key: string;
}

/** The item explorer: a filtered, sorted virtual table the drawer steps through. */
interface ItemExplorer {
  element: HTMLElement;
  mount(): void;
  order(): Int32Array;
  select(index: number): void;
  setQuery(query: string): void;
  filterByCriterion(text: string, flipped?: boolean): void;
  onOpen: ((index: number) => void) | null;
}

function criterionOutcome(criterion: DecodedCriterion): Outcome {
  if (criterion.status === 'error') return { className: 'problem', label: 'Error', key: 'error' };
  if (criterion.status === 'skipped') return { className: 'skipped', label: 'Skipped', key: 'skipped' };
  if (criterion.met === null) return { className: 'skipped', label: 'No verdict', key: 'none' };
  const failed = criterion.points < 0 ? criterion.met : !criterion.met;
  return { className: failed ? 'fail' : 'pass', label: criterion.met ? 'Met' : 'Not met', key: criterion.met ? 'met' : 'not-met' };
}

/** Per item: criteria that earned, cost points, errored, were skipped (for the table column and sorting). */
function criterionCounts(run: RunData): { passed: Int32Array; failed: Int32Array; errors: Int32Array; total: Int32Array } {
  const count = run.items.ids.length;
  const counts = { passed: new Int32Array(count), failed: new Int32Array(count), errors: new Int32Array(count), total: new Int32Array(count) };
  const offsets = run.items.criteriaOffsets, flags = run.criteria.flags, points = run.criteria.points;
  for (let item = 0; item < count; item += 1) {
    for (let position = offsets[item]; position < offsets[item + 1]; position += 1) {
      const flag = flags[position];
      counts.total[item] += 1;
      const status = flag & 3;
      if (status === 1) { counts.errors[item] += 1; continue; }
      if (status === 2) continue;
      const met = rubricateCriterionMet(flag);
      if (met === null) continue;
      const failed = points[position] < 0 ? met : !met;
      if (failed) counts.failed[item] += 1; else counts.passed[item] += 1;
    }
  }
  return counts;
}

export function renderResultsView(root: HTMLElement, payload: ResultsReportPayload, textStore: TextStore<RunTexts>): void {
  const run = payload.runs[0];
  const baseline = payload.runs.length > 1 ? payload.runs[1] : null;
  const comparison = payload.comparison;
  const summary = run.summary;
  const metrics = summary.metrics;
  const chunkListeners: Array<(runIndex: number, chunk: RunTexts | null) => void> = [];

  function loadAllTexts() {
    textStore.loadAll(function (runIndex, chunk) {
      chunkListeners.forEach(function (listener) { listener(runIndex, chunk); });
    }).then(function () {
      document.documentElement.setAttribute('data-texts-ready', '1');
    }, function (error: unknown) {
      document.documentElement.setAttribute('data-report-error', 'texts: ' + errorMessage(error));
    });
  }

  const sections = [{ id: 'overview', label: 'Overview' }, { id: 'charts', label: 'Charts' }];
  if (comparison) sections.push({ id: 'comparison', label: 'Comparison' });
  sections.push({ id: 'items', label: 'Items' });
  const subtitle = [h('span', { className: 'mono', text: summary.label })];
  if (baseline) subtitle.push(h('span', { className: 'muted', text: 'compared with' }), h('span', { className: 'mono', text: baseline.summary.label }));
  subtitle.push(h('span', { className: 'pill accent', text: summary.scoring }));
  const page = pageFrame(root, payload, { sections: sections, subtitle: subtitle });

  page.appendChild(overviewSection());
  const problems = problemsCallout();
  if (problems) page.appendChild(problems);
  page.appendChild(chartsSection());
  if (comparison) page.appendChild(comparisonSection());
  const explorer = createExplorer();
  page.appendChild(explorer.element);
  page.appendChild(pageFooter(payload, [
    'scoring ' + summary.scoring,
    'intervals: seeded percentile bootstrap over items, as rubricate score computes them' + (comparison ? '; paired: ' + comparison.bootstrap.samples + ' resamples, seed ' + comparison.bootstrap.seed : ''),
    'data: ' + summary.label + (baseline ? ' vs ' + baseline.summary.label : '')
  ]));
  explorer.mount();
  const drawer = createDrawer(explorer);
  explorer.onOpen = drawer.open;
  window.addEventListener('hashchange', openFromHash);
  openFromHash();
  setTimeout(loadAllTexts, 0);

  function openFromHash() {
    const match = /^#item=(.*)$/.exec(location.hash);
    if (!match) return;
    const id = decodeURIComponent(match[1]);
    const index = run.items.ids.indexOf(id);
    if (index >= 0 && drawer.current() !== index) drawer.open(index);
  }

  // ---------------------------------------------------------------- overview
  function overviewSection() {
    const section = h('section', { className: 'section hero', attrs: { id: 'overview' }, style: { 'margin-top': '0' } });
    const overall = metrics.overall;
    const baselineOverall = baseline ? baseline.summary.metrics.overall : null;
    const scoreCard = h('section', { className: 'card hero-score', data: { testid: 'headline' } });
    scoreCard.appendChild(h('div', { className: 'score-label' }, [h('span', { text: 'Overall score' }), h('span', { className: 'pill neutral', text: summary.scoring })]));
    scoreCard.appendChild(h('div', { className: 'score-value num', text: overall ? formatScore(overall.score) : '—', data: { testid: 'score' } }));
    if (overall) {
      scoreCard.appendChild(h('div', { className: 'score-ci num', text: '95% CI ' + formatInterval(overall.ci95) }));
      scoreCard.appendChild(h('div', { className: 'score-ci num faint', text: 'bootstrap std ' + formatScore(overall.bootstrap_std, 4) + ' · n = ' + formatInteger(overall.n_samples) + ' scored items' }));
      const low = Math.min(0, overall.ci95[0], baselineOverall ? baselineOverall.score : 0);
      const high = Math.max(1, overall.ci95[1], baselineOverall ? baselineOverall.score : 1);
      scoreCard.appendChild(ciTrack(overall.score, overall.ci95, Math.floor(low * 10) / 10, Math.ceil(high * 10) / 10, baselineOverall ? baselineOverall.score : null));
    } else {
      scoreCard.appendChild(h('div', { className: 'score-ci', text: 'No item could be scored.' }));
    }
    if (baselineOverall) {
      scoreCard.appendChild(h('div', { className: 'score-ci num', style: { 'margin-top': '6px' } }, [
        h('span', { className: 'legend', style: { display: 'inline-flex' } }, [h('i', { style: { background: COLORS.baseline } })]),
        'baseline ' + formatScore(baselineOverall.score) + ' (95% CI ' + formatInterval(baselineOverall.ci95) + ')'
      ]));
    }
    if (comparison && comparison.overall) {
      const difference = comparison.overall;
      const direction = difference.ci95[0] > 0 ? 'up' : difference.ci95[1] < 0 ? 'down' : 'flat';
      scoreCard.appendChild(h('div', { style: { 'margin-top': '12px', display: 'flex', 'flex-wrap': 'wrap', gap: '8px', 'align-items': 'center' } }, [
        h('span', { className: 'delta-chip ' + direction, text: formatSigned(difference.difference) + ' vs baseline', data: { testid: 'delta' } }),
        h('span', { className: 'muted num', text: '95% CI ' + formatSignedInterval(difference.ci95) + ' · ' + plural(difference.n, 'paired item') })
      ]));
    }
    section.appendChild(scoreCard);

    const scored = metrics.n_ok - metrics.n_unscorable;
    const parts = [
      { label: 'scored', value: scored, color: COLORS.accent },
      { label: 'unscorable', value: metrics.n_unscorable, color: COLORS.neutral },
      { label: 'error', value: metrics.n_error, color: COLORS.warn },
      { label: 'invalid', value: metrics.n_invalid, color: COLORS.bad }
    ];
    const bar = h('div', { className: 'stack-bar' }, parts.filter(function (part) { return part.value > 0; }).map(function (part) {
      return h('span', { title: part.label + ': ' + formatInteger(part.value), style: { width: (part.value / Math.max(1, metrics.n)) * 100 + '%', background: part.color } });
    }));
    section.appendChild(card('Items', [
      h('div', { className: 'big-number num', text: formatInteger(metrics.n), data: { testid: 'item-count' } }),
      bar,
      h('div', { className: 'legend' }, parts.map(function (part) { return h('span', null, [h('i', { style: { background: part.color } }), part.label + ' ' + formatInteger(part.value)]); })),
      h('div', { style: { height: '12px' } }),
      statList([
        ['Criteria graded', formatInteger(summary.criteria.evaluated) + ' of ' + formatInteger(summary.criteria.total)],
        ['Rubrics', plural(summary.rubricHashes, 'distinct hash', 'distinct hashes')],
        ['rubricate', summary.versions.join(', ') || '—']
      ])
    ]));

    const judges = summary.judges;
    let judgeRows: StatRow[];
    if (judges.length === 0) judgeRows = [['Judge', 'none (checks only)', '']];
    else if (judges.length > 1) judgeRows = [['Judges', judges.length + ' configurations', ''], ['Models', judges.map(function (judge) { return judge.model; }).join(', '), '']];
    else {
      const judge = judges[0];
      judgeRows = [
        ['Model', judge.model, 'mono'],
        ['Spec', judge.id, 'mono'],
        judge.base_url ? ['Endpoint', truncate(judge.base_url, 42), 'mono', judge.base_url] : null,
        ['Template', judge.template_version, 'mono'],
        ['Mode', judge.mode + (judge.verdict ? ' · ' + judge.verdict : ''), ''],
        ['Sampling', 'T = ' + (isNumber(judge.temperature) ? judge.temperature : '—') + (isNumber(judge.max_tokens) ? ' · max ' + judge.max_tokens + ' tokens' : ''), 'num']
      ];
    }
    section.appendChild(card('Judge', [statList(judgeRows)]));

    const usage = summary.usage;
    section.appendChild(card('Cost & tokens', [
      h('div', { className: 'big-number num', text: formatCost(summary.costUsd), title: summary.costUsd === null ? 'the judge model is not in the price table' : 'at list prices' }),
      h('div', { style: { height: '10px' } }),
      statList([
        ['Judge calls', formatInteger(usage.calls)],
        ['Cache hits', formatInteger(usage.cache_hits)],
        ['Retries', formatInteger(usage.retries)],
        ['Input tokens', formatCompact(usage.prompt_tokens) + (usage.cached_prompt_tokens ? ' (' + formatCompact(usage.cached_prompt_tokens) + ' cached)' : '')],
        ['Output tokens', formatCompact(usage.completion_tokens)]
      ])
    ]));
    return section;
  }

  function problemsCallout() {
    const notes = [];
    payload.runs.forEach(function (each) {
      const runSummary = each.summary;
      if (runSummary.invalidLineCount > 0) {
        const details = h('details', null, [h('summary', { text: plural(runSummary.invalidLineCount, 'line') + ' of ' + runSummary.label + ' could not be read and were skipped' })]);
        details.appendChild(h('ul', null, runSummary.invalidLines.map(function (line) { return h('li', { className: 'mono', text: line.message }); })));
        notes.push(details);
      }
      if (runSummary.duplicateIds > 0) notes.push(h('div', { text: plural(runSummary.duplicateIds, 'item') + ' of ' + runSummary.label + ' repeat an earlier id; comparisons use the first.' }));
    });
    if (comparison && (comparison.onlyInRun > 0 || comparison.onlyInBaseline > 0)) {
      notes.push(h('div', { text: formatInteger(comparison.matched) + ' items matched by id; ' + formatInteger(comparison.onlyInRun) + ' only in ' + comparison.runLabel + ', ' + formatInteger(comparison.onlyInBaseline) + ' only in ' + comparison.baselineLabel + '.' }));
    }
    if (notes.length === 0) return null;
    return h('div', { className: 'callout error', style: { 'margin-top': '16px' }, data: { testid: 'problems' } }, notes);
  }

  // ---------------------------------------------------------------- charts
  function tagGroups(byTag: Record<string, unknown>): { names: string[]; members: Record<string, string[]> } {
    const groups: Record<string, string[]> = {};
    Object.keys(byTag).forEach(function (tag) {
      const group = tagGroupOf(tag);
      (groups[group] = groups[group] || []).push(tag);
    });
    const preferred = ['axis', 'theme', 'tags', 'cluster', 'level', 'physician_agreed_category'];
    const names = Object.keys(groups).sort(function (left, right) {
      let a = preferred.indexOf(left), b = preferred.indexOf(right);
      if (a < 0) a = 99; if (b < 0) b = 99;
      return a - b || (left < right ? -1 : 1);
    });
    return { names: names, members: groups };
  }

  function chartsSection() {
    const section = h('section', { className: 'section', attrs: { id: 'charts' } }, [sectionHead('Where the points went', 'bars show means with 95% bootstrap intervals')]);
    const grid = h('div', { className: 'grid-2' });
    section.appendChild(grid);
    grid.appendChild(tagChartCard());
    grid.appendChild(histogramCard());
    grid.appendChild(sourceCard());
    grid.appendChild(mostFailedCard());
    return section;
  }

  function tagChartCard() {
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

  function histogramCard() {
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
    const scores = run.items.scores.filter(isNumber).sort(function (a, b) { return a - b; });
    if (scores.length) {
      const median = scores[Math.floor((scores.length - 1) / 2)];
      container.appendChild(h('div', { className: 'chart-note num', text: 'median ' + formatScore(median) + ' · min ' + formatScore(scores[0]) + ' · max ' + formatScore(scores[scores.length - 1]) + ' · ' + plural(scores.length, 'scored item') }));
    }
    return container;
  }

  function sourceCard() {
    const container = h('section', { className: 'card', data: { testid: 'source-chart' } }, [h('div', { className: 'card-head' }, [h('h3', { text: 'Pass rate by criterion source' })])]);
    const sources = (['judge', 'check'] as const).filter(function (name) { return summary.bySource[name].criteria > 0; });
    if (sources.length === 0) { container.appendChild(h('div', { className: 'callout info', text: 'No criteria in these results.' })); return container; }
    const segments: Array<{ key: 'passed' | 'failed' | 'errors' | 'skipped'; label: string; color: string }> = [
      { key: 'passed', label: 'passed', color: COLORS.good },
      { key: 'failed', label: 'cost points', color: COLORS.bad },
      { key: 'errors', label: 'error', color: COLORS.warn },
      { key: 'skipped', label: 'skipped', color: COLORS.neutral }
    ];
    const runs = baseline ? [run, baseline] : [run];
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

  function mostFailedCard() {
    const container = h('section', { className: 'card span-2', data: { testid: 'most-failed' } }, [h('div', { className: 'card-head' }, [h('h3', { text: 'Criteria that cost the most' }), h('span', { className: 'hint faint', text: 'click a bar to list the items' })])]);
    const rows = summary.mostFailed.slice(0, 14);
    if (rows.length === 0) { container.appendChild(h('div', { className: 'callout info', text: 'No criterion cost any points.' })); return container; }
    container.appendChild(chartBox(Math.max(160, 50 + rows.length * 28), {
      type: 'bar',
      data: { labels: rows.map(function (row) { return truncate(row.text, 70); }), datasets: [{
        label: 'times it cost points',
        data: rows.map(function (row) { return row.failed; }),
        backgroundColor: rows.map(function (row) { return row.points < 0 ? 'rgba(239, 68, 68, 0.85)' : 'rgba(239, 68, 68, 0.55)'; }),
        borderRadius: 4, barPercentage: 0.75
      }] },
      options: {
        indexAxis: 'y',
        onClick: function (_, elements) { if (elements.length) explorer.filterByCriterion(rows[elements[0].index].text); },
        onHover: function (event, elements) { if (event.native) event.native.target.style.cursor = elements.length ? 'pointer' : 'default'; },
        scales: { x: { beginAtZero: true, ticks: { precision: 0 } }, y: { grid: { display: false }, ticks: { autoSkip: false } } },
        plugins: { legend: { display: false }, tooltip: { callbacks: {
          title: function (items) { return wrapLines(rows[items[0].dataIndex].text, 64); },
          label: function (item) {
            const row = rows[item.dataIndex];
            return [
              (row.points < 0 ? 'penalty applied ' : 'not met ') + formatInteger(row.failed) + ' of ' + formatInteger(row.evaluated) + ' times (' + formatPercent(row.failed / Math.max(1, row.evaluated)) + ')',
              formatPoints(row.points) + ' points · ' + formatInteger(row.pointsLost) + ' points lost · ' + row.source
            ];
          }
        } } }
      }
    }, 'criteria that cost the most points').element);
    return container;
  }

  // ---------------------------------------------------------------- comparison
  function comparisonSection(): HTMLElement {
    // Drawn only when the report compares two runs.
    const comparison = payload.comparison!;
    const section = h('section', { className: 'section', attrs: { id: 'comparison' } }, [sectionHead('Compared with ' + comparison.baselineLabel, 'Δ = ' + comparison.runLabel + ' − ' + comparison.baselineLabel + ' over items matched by id · paired bootstrap, ' + comparison.bootstrap.samples + ' resamples, seed ' + comparison.bootstrap.seed)]);
    section.appendChild(forestCard());
    const grid = h('div', { className: 'grid-2', style: { 'margin-top': '16px' } });
    grid.appendChild(changedCard());
    grid.appendChild(flipsCard());
    section.appendChild(grid);
    return section;
  }

  function forestCard(): HTMLElement {
    // Drawn only when the report compares two runs.
    const comparison = payload.comparison!;
    const container = h('section', { className: 'card', data: { testid: 'paired-differences' } });
    const head = h('div', { className: 'card-head' }, [h('h3', { text: 'Paired difference by tag' })]);
    container.appendChild(head);
    const holder = h('div', { className: 'forest' });
    container.appendChild(holder);
    const groups = tagGroups(comparison.byTag);
    const options = [{ value: '', label: 'overall' }].concat(groups.names.map(function (name) { return { value: name, label: name + ' (' + groups.members[name].length + ')' }; }));
    head.appendChild(tabs(options, '', draw));
    draw('');
    return container;

    function draw(group: string): void {
      holder.textContent = '';
      const rows: Array<{ label: string; title?: string; value: PairedDifference }> = [];
      if (comparison.overall) rows.push({ label: 'overall', value: comparison.overall });
      if (group) {
        groups.members[group].slice().sort(function (left, right) { return comparison.byTag[right].difference - comparison.byTag[left].difference; })
          .forEach(function (tag) { rows.push({ label: tagNameOf(tag), title: tag, value: comparison.byTag[tag] }); });
      }
      let extent = 0.05;
      rows.forEach(function (row) { extent = Math.max(extent, Math.abs(row.value.ci95[0]) || 0, Math.abs(row.value.ci95[1]) || 0, Math.abs(row.value.difference)); });
      extent *= 1.1;
      function position(value: number): number { return ((value + extent) / (2 * extent)) * 100; }
      holder.appendChild(h('div', { className: 'forest-row head' }, [h('div', { text: 'tag' }), h('div', { className: 'right', text: 'n' }), h('div', { className: 'right', text: 'Δ' }), h('div', { text: '95% CI (−' + formatScore(extent, 2) + ' … +' + formatScore(extent, 2) + ')' }), h('div', { className: 'right hide-narrow', text: 'baseline → run' })]));
      rows.forEach(function (row) {
        const value = row.value;
        const direction = value.ci95[0] > 0 ? 'up' : value.ci95[1] < 0 ? 'down' : 'flat';
        const color = direction === 'up' ? COLORS.good : direction === 'down' ? COLORS.bad : COLORS.baseline;
        const plot = h('div', { className: 'forest-plot', title: '95% CI ' + formatSignedInterval(value.ci95) }, [
          h('div', { className: 'forest-axis' }),
          h('div', { className: 'forest-zero', style: { left: position(0) + '%' } }),
          isNumber(value.ci95[0]) ? h('div', { className: 'forest-ci', style: { left: position(value.ci95[0]) + '%', width: Math.max(0.5, position(value.ci95[1]) - position(value.ci95[0])) + '%', background: color, opacity: '0.45' } }) : null,
          h('div', { className: 'forest-dot', style: { left: position(value.difference) + '%', background: color } })
        ]);
        holder.appendChild(h('div', { className: 'forest-row', data: { tag: row.title || row.label } }, [
          h('div', { className: 'forest-label', text: row.label, title: row.title || row.label }),
          h('div', { className: 'right num muted', text: formatInteger(value.n) }),
          h('div', { className: 'right num ' + (direction === 'flat' ? '' : direction), text: formatSigned(value.difference), style: { 'font-weight': '650' } }),
          plot,
          h('div', { className: 'right num muted hide-narrow', text: formatScore(value.baseline) + ' → ' + formatScore(value.run) })
        ]));
      });
      if (group === '' && groups.names.length) holder.appendChild(h('div', { className: 'chart-note', text: 'Pick a tag group above to see its tags.' }));
    }
  }

  function changedCard(): HTMLElement {
    // Drawn only when the report compares two runs.
    const comparison = payload.comparison!;
    const container = h('section', { className: 'card', data: { testid: 'changed-items' } }, [h('div', { className: 'card-head' }, [h('h3', { text: 'Items that changed most' })])]);
    if (comparison.changedItems.length === 0) { container.appendChild(h('div', { className: 'callout info', text: 'No matched item changed score.' })); return container; }
    const body = h('tbody');
    comparison.changedItems.forEach(function (item) {
      body.appendChild(h('tr', { className: 'clickable', on: { click: function () { drawer.open(item.runIndex); } } }, [
        h('td', { className: 'mono', text: truncate(item.id, 36), title: item.id }),
        h('td', { className: 'num', text: formatScore(item.baselineScore) }),
        h('td', { className: 'num', text: formatScore(item.runScore) }),
        h('td', { className: 'num ' + (item.delta > 0 ? 'up' : 'down'), text: formatSigned(item.delta), style: { 'font-weight': '650' } })
      ]));
    });
    container.appendChild(h('div', { className: 'table-scroll' }, [h('table', { className: 'data' }, [
      h('thead', null, [h('tr', null, [h('th', { text: 'item' }), h('th', { className: 'num', text: 'baseline' }), h('th', { className: 'num', text: 'run' }), h('th', { className: 'num', text: 'Δ' })])]),
      body
    ])]));
    return container;
  }

  function flipsCard(): HTMLElement {
    // Drawn only when the report compares two runs.
    const comparison = payload.comparison!;
    const flips = comparison.flips;
    const container = h('section', { className: 'card', data: { testid: 'flips' } }, [h('div', { className: 'card-head' }, [h('h3', { text: 'Criterion verdict flips' }), h('span', { className: 'hint faint num', text: formatInteger(flips.metToNotMet) + ' met → not met · ' + formatInteger(flips.notMetToMet) + ' not met → met · of ' + formatInteger(flips.compared) })])]);
    if (flips.criteria.length === 0) { container.appendChild(h('div', { className: 'callout info', text: 'No verdict flipped between the runs.' })); return container; }
    const body = h('tbody');
    flips.criteria.forEach(function (row) {
      body.appendChild(h('tr', { className: 'clickable', on: { click: function () { explorer.filterByCriterion(row.text, true); } } }, [
        h('td', null, [h('div', { className: 'clamp', text: row.text, title: row.text })]),
        h('td', { className: 'num ' + (row.points < 0 ? 'down' : ''), text: formatPoints(row.points) }),
        h('td', { className: 'num', text: formatInteger(row.compared) }),
        h('td', { className: 'num', text: formatInteger(row.metToNotMet) }),
        h('td', { className: 'num', text: formatInteger(row.notMetToMet) })
      ]));
    });
    container.appendChild(h('div', { className: 'table-scroll' }, [h('table', { className: 'data' }, [
      h('thead', null, [h('tr', null, [h('th', { text: 'criterion' }), h('th', { className: 'num', text: 'points' }), h('th', { className: 'num', text: 'both graded' }), h('th', { className: 'num', text: 'met → not' }), h('th', { className: 'num', text: 'not → met' })])]),
      body
    ])]));
    if (flips.omitted > 0) container.appendChild(h('div', { className: 'chart-note', text: formatInteger(flips.omitted) + ' more criteria flipped (not listed).' }));
    return container;
  }

  // ---------------------------------------------------------------- explorer
  function createExplorer() {
    const items = run.items;
    const count = items.ids.length;
    const counts = criterionCounts(run);
    const matchIndex = comparison ? comparison.matchIndex : null;
    const state = { query: '', status: 'all' as ItemStatusName | 'all', tag: '', criterionRef: -1, criterionLabel: '', criterionFlipped: false, changedOnly: false, sortKey: '', sortDirection: 1 };
    const explorer = { onOpen: null } as ItemExplorer;
    let metaHaystack: string[] | null = null;
    const textHaystack = new Array<string | undefined>(count);

    const columns: TableColumn[] = [
      { key: 'id', label: 'Item', width: 'minmax(150px, 2fr)' },
      { key: 'score', label: 'Score', width: '120px', right: true }
    ];
    if (comparison) columns.push({ key: 'baseline', label: 'Baseline', width: '76px', right: true }, { key: 'delta', label: 'Δ', width: '72px', right: true });
    columns.push({ key: 'passed', label: 'Criteria passed', width: '130px' }, { key: 'status', label: 'Status', width: '76px' }, { key: 'tags', label: 'Tags', width: 'minmax(100px, 2fr)', noSort: true, narrowHidden: true });

    const searchInput = h('input', { attrs: { type: 'search', placeholder: 'Search ids, tags, prompts and responses', 'aria-label': 'Search items' } });
    const statusTabs = tabs([{ value: 'all', label: 'All' }, { value: 'ok', label: 'OK' }, { value: 'error', label: 'Errors' }, { value: 'invalid', label: 'Invalid' }], 'all', function (value) { state.status = value; refresh(true); });
    const tagSelect = buildTagSelect();
    const chipHolder = h('div');
    const countLabel = h('div', { className: 'result-count num', data: { testid: 'result-count' } });
    const toolbar = h('div', { className: 'explorer-toolbar' }, [h('div', { className: 'search' }, [icon('search'), searchInput]), statusTabs, tagSelect, chipHolder]);
    if (comparison) {
      const changedBox = h('input', { attrs: { type: 'checkbox' } });
      changedBox.addEventListener('change', function () { state.changedOnly = changedBox.checked; refresh(true); });
      toolbar.appendChild(h('label', { className: 'toggle' }, [changedBox, 'changed score only']));
    }
    toolbar.appendChild(countLabel);

    const table = createVirtualTable({
      columns: columns,
      label: 'items',
      emptyText: 'No item matches these filters.',
      rowData: function (index) { return { index: index, itemId: items.ids[index] }; },
      fillRow: fillRow,
      onSort: sortBy,
      onOpen: function (index) { if (explorer.onOpen) explorer.onOpen(index); }
    });
    const section = h('section', { className: 'section', attrs: { id: 'items' } }, [sectionHead('Items', 'click an item to see the conversation and every verdict'), toolbar, table.element]);

    let searchTimer: ReturnType<typeof setTimeout> | undefined;
    searchInput.addEventListener('input', function () {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(function () { state.query = searchInput.value.trim().toLowerCase(); refresh(true); }, 120);
    });
    // Texts join the search index chunk by chunk as they are decoded, while the reader looks at the overview.
    chunkListeners.push(function (runIndex, chunk) {
      if (runIndex !== 0) return;
      if (chunk) addToTextHaystack(chunk);
      if (state.query) refresh(false);
    });

    explorer.element = section;
    explorer.mount = function () { refresh(true); };
    explorer.order = table.order;
    explorer.select = table.select;
    explorer.setQuery = function (query: string) { searchInput.value = query; state.query = query.trim().toLowerCase(); refresh(true); };
    explorer.filterByCriterion = function (text: string, flipped?: boolean) {
      state.criterionRef = run.strings.indexOf(text);
      state.criterionLabel = text;
      state.criterionFlipped = Boolean(flipped);
      renderChip();
      refresh(true);
      section.scrollIntoView({ behavior: 'smooth', block: 'start' });
    };
    return explorer;

    function buildTagSelect() {
      const itemTags = new Set<number>(), criterionTags = new Set<number>();
      items.tagSets.forEach(function (set) { if (set >= 0) run.tagSets[set].forEach(function (reference) { itemTags.add(reference); }); });
      const usedCriterionSets = new Set(run.criteria.tagSets);
      usedCriterionSets.forEach(function (set) { if (set >= 0) run.tagSets[set].forEach(function (reference) { criterionTags.add(reference); }); });
      const select = h('select', { className: 'select', attrs: { 'aria-label': 'Filter by tag' } }, [h('option', { text: 'All tags', attrs: { value: '' } })]);
      function group(label: string, prefix: string, references: Set<number>): void {
        if (references.size === 0) return;
        const sorted = Array.from(references).sort(function (a, b) { return run.strings[a] < run.strings[b] ? -1 : 1; });
        select.appendChild(h('optgroup', { attrs: { label: label } }, sorted.map(function (reference) { return h('option', { text: run.strings[reference], attrs: { value: prefix + reference } }); })));
      }
      group('Item tags', 'i', itemTags);
      group('Criterion tags', 'c', criterionTags);
      select.addEventListener('change', function () { state.tag = select.value; refresh(true); });
      if (itemTags.size === 0 && criterionTags.size === 0) select.style.display = 'none';
      return select;
    }

    function renderChip() {
      chipHolder.textContent = '';
      if (state.criterionRef < 0 && !state.criterionLabel) return;
      chipHolder.appendChild(h('div', { className: 'filter-chip', title: state.criterionLabel }, [
        h('span', { text: (state.criterionFlipped ? 'flipped: ' : 'cost points: ') + truncate(state.criterionLabel, 60) }),
        h('button', { text: '×', attrs: { type: 'button', 'aria-label': 'clear criterion filter' }, on: { click: function () { state.criterionRef = -1; state.criterionLabel = ''; renderChip(); refresh(true); } } })
      ]));
    }

    function buildMetaHaystack() {
      const haystack = (metaHaystack = new Array<string>(count));
      for (let index = 0; index < count; index += 1) {
        const parts = [items.ids[index]];
        if (items.tagSets[index] >= 0) parts.push(rubricateTags(run, items.tagSets[index]).join(' '));
        if (items.rubricIds[index] >= 0) parts.push(run.strings[items.rubricIds[index]]);
        haystack[index] = parts.join(' ').toLowerCase();
      }
    }

    function addToTextHaystack(chunk: RunTexts): void {
      for (let local = 0; local < chunk.responses.length; local += 1) {
        const parts: string[] = [];
        if (chunk.responses[local] >= 0) parts.push(chunk.strings[chunk.responses[local]]);
        const prompt = chunk.prompts[local] || [];
        for (let turn = 1; turn < prompt.length; turn += 2) parts.push(chunk.strings[prompt[turn]]);
        textHaystack[chunk.firstItem + local] = parts.join('\n').toLowerCase();
      }
    }

    function tagMatcher(): ((index: number) => boolean) | null {
      if (!state.tag) return null;
      const kind = state.tag.charAt(0), reference = Number(state.tag.slice(1));
      const setHas = run.tagSets.map(function (set) { return set.indexOf(reference) >= 0; });
      if (kind === 'i') return function (index: number) { return items.tagSets[index] >= 0 && setHas[items.tagSets[index]]; };
      return function (index: number) {
        for (let position = items.criteriaOffsets[index]; position < items.criteriaOffsets[index + 1]; position += 1) {
          const set = run.criteria.tagSets[position];
          if (set >= 0 && setHas[set]) return true;
        }
        return false;
      };
    }

    function criterionMatcher(): ((index: number) => boolean) | null {
      if (state.criterionRef < 0) return state.criterionLabel ? function () { return false; } : null;
      const reference = state.criterionRef;
      return function (index: number) {
        for (let position = items.criteriaOffsets[index]; position < items.criteriaOffsets[index + 1]; position += 1) {
          if (run.criteria.texts[position] !== reference) continue;
          const flags = run.criteria.flags[position];
          if ((flags & 3) !== 0) continue;
          const met = rubricateCriterionMet(flags);
          if (met === null) continue;
          if (state.criterionFlipped) return flippedAt(index, position, met);
          if (run.criteria.points[position] < 0 ? met : !met) return true;
        }
        return false;
      };
    }

    function flippedAt(index: number, position: number, met: boolean): boolean {
      if (!matchIndex || matchIndex[index] < 0 || !baseline) return false;
      const other = matchIndex[index];
      const id = run.strings[run.criteria.ids[position]];
      for (let otherPosition = baseline.items.criteriaOffsets[other]; otherPosition < baseline.items.criteriaOffsets[other + 1]; otherPosition += 1) {
        if (baseline.strings[baseline.criteria.ids[otherPosition]] !== id) continue;
        const otherFlags = baseline.criteria.flags[otherPosition];
        if ((otherFlags & 3) !== 0) return false;
        const otherMet = rubricateCriterionMet(otherFlags);
        return otherMet !== null && otherMet !== met;
      }
      return false;
    }

    function baselineScore(index: number): number | null {
      if (!matchIndex || matchIndex[index] < 0 || !baseline) return null;
      return baseline.items.scores[matchIndex[index]];
    }
    function deltaOf(index: number): number | null {
      const before = baselineScore(index), after = items.scores[index];
      return isNumber(before) && isNumber(after) ? after - before : null;
    }

    function refresh(resetScroll: boolean): void {
      const statusCode = state.status === 'all' ? -1 : ITEM_STATUS_NAMES.indexOf(state.status);
      const query = state.query;
      if (query && !metaHaystack) buildMetaHaystack();
      const matchesTag = tagMatcher();
      const matchesCriterion = criterionMatcher();
      const kept = new Int32Array(count);
      let length = 0;
      for (let index = 0; index < count; index += 1) {
        if (statusCode >= 0 && items.status[index] !== statusCode) continue;
        if (query && metaHaystack![index].indexOf(query) < 0 && !((textHaystack[index] ?? '').indexOf(query) >= 0 && textHaystack[index] !== undefined)) continue;
        if (matchesTag && !matchesTag(index)) continue;
        if (matchesCriterion && !matchesCriterion(index)) continue;
        if (state.changedOnly) { const delta = deltaOf(index); if (delta === null || delta === 0) continue; }
        kept[length++] = index;
      }
      const order = sortOrder(kept.slice(0, length));
      countLabel.textContent = 'Showing ' + formatInteger(order.length) + ' of ' + formatInteger(count) + ' items' + (query && !textStore.complete() ? ' (texts still loading)' : '');
      document.documentElement.setAttribute('data-filtered', String(order.length));
      table.show(order, resetScroll);
    }

    function sortValue(key: string): (index: number) => number | null {
      if (key === 'score') return function (index) { return items.scores[index]; };
      if (key === 'baseline') return baselineScore;
      if (key === 'delta') return deltaOf;
      if (key === 'passed') return function (index) { const graded = counts.passed[index] + counts.failed[index]; return graded ? counts.passed[index] / graded : null; };
      if (key === 'status') return function (index) { return items.status[index]; };
      return function () { return null; };
    }

    function sortOrder(order: Int32Array): Int32Array {
      if (!state.sortKey) return order;
      if (state.sortKey === 'id') return sortByText(order, function (index) { return items.ids[index]; }, state.sortDirection);
      return sortByNumber(order, sortValue(state.sortKey), state.sortDirection);
    }

    // Identifiers sort A→Z first; numbers highest first, where the interesting items are.
    function sortBy(key: string): void {
      nextSort(state, key, key === 'id' ? 1 : -1);
      table.showSort(state.sortKey, state.sortDirection);
      refresh(true);
    }

    function fillRow(index: number, element: HTMLElement): void {
      const score = items.scores[index];
      element.appendChild(h('div', { className: 'mono', text: items.ids[index], title: items.ids[index] }));
      const width = isNumber(score) ? Math.max(0, Math.min(1, score)) * 100 : 0;
      element.appendChild(h('div', { className: 'score-cell num' }, [h('span', { text: formatScore(score) }), h('div', { className: 'score-bar' }, [h('span', { style: { width: width + '%', background: isNumber(score) && score < 0 ? COLORS.bad : COLORS.accent } })])]));
      if (comparison) {
        const before = baselineScore(index), delta = deltaOf(index);
        element.appendChild(h('div', { className: 'right num muted', text: matchIndex && matchIndex[index] < 0 ? 'absent' : formatScore(before) }));
        element.appendChild(h('div', { className: 'right num ' + (delta !== null && delta > 0 ? 'up' : delta !== null && delta < 0 ? 'down' : 'faint'), text: delta === null ? '—' : formatSigned(delta) }));
      }
      const passed = counts.passed[index], failed = counts.failed[index], errors = counts.errors[index], total = counts.total[index];
      element.appendChild(h('div', { className: 'met-cell num' }, [
        h('div', { className: 'met-bar' }, [
          h('span', { style: { width: (passed / Math.max(1, total)) * 100 + '%', background: COLORS.good } }),
          h('span', { style: { width: (failed / Math.max(1, total)) * 100 + '%', background: COLORS.bad } }),
          h('span', { style: { width: (errors / Math.max(1, total)) * 100 + '%', background: COLORS.warn } })
        ]),
        h('span', { text: passed + '/' + total })
      ]));
      const status = ITEM_STATUS_NAMES[items.status[index]];
      element.appendChild(h('div', null, [h('span', { className: 'pill ' + status, text: status })]));
      const tagCell = h('div', { className: 'hide-narrow' });
      const tags = rubricateTags(run, items.tagSets[index]);
      tags.slice(0, 3).forEach(function (tag) { tagCell.appendChild(h('span', { className: 'chip', text: tag, title: tag })); tagCell.appendChild(document.createTextNode(' ')); });
      if (tags.length > 3) tagCell.appendChild(h('span', { className: 'faint', text: '+' + (tags.length - 3) }));
      element.appendChild(tagCell);
    }
  }

  // ---------------------------------------------------------------- drawer
  function createDrawer(explorer: ItemExplorer): DrawerShell {
    const shell = createDrawerShell({
      explorer: explorer,
      noun: 'item',
      testid: 'drawer',
      hashKey: 'item',
      idOf: function (index) { return run.items.ids[index]; },
      render: render,
      load: function (index, done) {
        const otherIndex = comparison ? comparison.matchIndex[index] : -1;
        const pending: Array<Promise<unknown>> = [];
        if (!textStore.chunkFor(0, index)) pending.push(textStore.loadFor(0, index));
        if (otherIndex >= 0 && !textStore.chunkFor(1, otherIndex)) pending.push(textStore.loadFor(1, otherIndex));
        if (pending.length) Promise.all(pending).then(done);
      }
    });
    return shell;

    function render(index: number, panel: HTMLElement): void {
      const chunk = textStore.chunkFor(0, index);
      const item = rubricateDecodeItem(run, chunk, index);
      const otherIndex = comparison ? comparison.matchIndex[index] : -1;
      const other = otherIndex >= 0 && baseline ? rubricateDecodeItem(baseline, textStore.chunkFor(1, otherIndex), otherIndex) : null;
      panel.setAttribute('data-item-id', item.id);
      const order = explorer.order();
      const position = Array.prototype.indexOf.call(order, index);

      const title = h('div', { className: 'drawer-title' }, [
        h('h2', { text: item.id, data: { testid: 'drawer-id' } }),
        h('div', { className: 'meta' }, [
          h('span', { className: 'pill ' + item.status, text: item.status }),
          item.gated ? h('span', { className: 'pill invalid', text: 'gated by a hard rule' }) : null,
          h('span', { className: 'num', text: 'line ' + item.line }),
          item.rubric_id ? h('span', null, ['rubric ', h('span', { className: 'mono', text: item.rubric_id })]) : null,
          position >= 0 ? h('span', { className: 'num faint', text: (position + 1) + ' of ' + formatInteger(order.length) }) : null
        ].concat(item.tags.map(function (tag) { return h('span', { className: 'chip', text: tag, title: tag }); })))
      ]);
      const scoreBlock = h('div', { className: 'drawer-score' }, [
        h('div', { className: 'faint', text: 'score' }),
        h('div', { className: 'value num', text: formatScore(item.score), data: { testid: 'drawer-score' } })
      ]);
      if (other) {
        const delta = isNumber(item.score) && isNumber(other.score) ? item.score - other.score : null;
        scoreBlock.appendChild(h('div', { className: 'num muted', text: 'baseline ' + formatScore(other.score) }));
        if (delta !== null) scoreBlock.appendChild(h('div', { className: 'num ' + (delta > 0 ? 'up' : delta < 0 ? 'down' : 'faint'), text: formatSigned(delta), style: { 'font-weight': '650' } }));
      }
      panel.appendChild(h('div', { className: 'drawer-header' }, [title, scoreBlock, drawerActions(shell, 'item')]));

      const left = h('div', { className: 'drawer-column' });
      const right = h('div', { className: 'drawer-column' });
      panel.appendChild(h('div', { className: 'drawer-body' }, [left, right]));

      if (item.error) left.appendChild(h('div', { className: 'callout error' }, [h('b', { text: item.error.code + ': ' }), item.error.message || '']));
      let trajectory: TrajectoryView | null = null;
      if (!chunk) {
        left.appendChild(h('div', { className: 'loading', style: { 'min-height': '200px' } }, [h('div', { className: 'spinner' }), h('div', { text: 'Loading texts…' })]));
      } else {
        left.appendChild(h('div', { className: 'block-title', text: 'Conversation' }));
        const prompt = item.prompt ?? [];
        if (prompt.length === 0) left.appendChild(h('div', { className: 'callout info', text: 'The prompt was not stored in the results (graded with --no-text).' }));
        prompt.forEach(function (message) {
          left.appendChild(h('div', { className: 'message ' + (['user', 'assistant', 'system'].indexOf(message.role) >= 0 ? message.role : 'user') }, [
            h('div', { className: 'message-role', text: message.role }),
            textWithImages(message.content, item.images)
          ]));
        });
        left.appendChild(h('div', { className: 'block-title', text: item.trajectory ? 'Trajectory graded' : 'Response graded' }));
        if (item.response === null || item.response === undefined) left.appendChild(h('div', { className: 'callout info', text: 'The response was not stored in the results (graded with --no-text).' }));
        else if (item.trajectory) {
          const cited: Record<number, string[]> = {};
          item.criteria.forEach(function (criterion) { (criterion.steps || []).forEach(function (step) { (cited[step] = cited[step] || []).push(criterion.id); }); });
          trajectory = trajectoryView(item.trajectory, item.images, cited);
          left.appendChild(trajectory.element);
        } else left.appendChild(h('div', { className: 'response-box' }, [textWithImages(item.response, item.images, { testid: 'response' })]));
        if (item.reference !== null && item.reference !== undefined) {
          left.appendChild(h('div', { className: 'block-title', text: 'Reference' }));
          left.appendChild(h('div', { className: 'message' }, [textWithImages(item.reference, item.images)]));
        }
        if (item.metadata !== null) {
          left.appendChild(h('div', { className: 'block-title', text: 'Metadata' }));
          left.appendChild(h('pre', { className: 'message mono text-body', text: item.metadata }));
        }
      }

      renderCriteria(right, item, other, Boolean(chunk), trajectory);
    }

    function renderCriteria(container: HTMLElement, item: DecodedItem, other: DecodedItem | null, textsLoaded: boolean, trajectory: TrajectoryView | null): void {
      const otherById: Record<string, DecodedCriterion> = {};
      if (other) other.criteria.forEach(function (criterion) { if (!(criterion.id in otherById)) otherById[criterion.id] = criterion; });
      let achieved = 0, positive = 0, passed = 0, graded = 0;
      item.criteria.forEach(function (criterion) {
        if (criterion.points > 0) positive += criterion.points;
        if (criterion.status !== 'ok' || criterion.met === null) return;
        graded += 1;
        const fraction = isNumber(criterion.value) ? criterion.value : criterion.met ? 1 : 0;
        achieved += criterion.points * fraction;
        if (criterionOutcome(criterion).className === 'pass') passed += 1;
      });
      container.appendChild(h('div', { className: 'block-title', text: 'Criteria' }));
      container.appendChild(h('div', { className: 'criteria-summary' }, [
        h('span', { className: 'num', text: passed + ' of ' + graded + ' graded criteria earned their points' }),
        h('span', { className: 'num muted', text: 'points ' + formatScore(achieved, Number.isInteger(achieved) ? 0 : 2) + ' of ' + formatScore(positive, Number.isInteger(positive) ? 0 : 2) })
      ]));
      const list = h('div', { data: { testid: 'criteria' } });
      item.criteria.forEach(function (criterion) {
        const outcome = criterionOutcome(criterion);
        const previous = otherById[criterion.id];
        const previousOutcome = previous ? criterionOutcome(previous) : null;
        const flipped = previous && previous.status === 'ok' && criterion.status === 'ok' && previous.met !== null && criterion.met !== null && previous.met !== criterion.met;
        const verdicts = h('div', { className: 'verdicts' }, [h('span', { className: 'verdict ' + outcome.className, text: outcome.label, data: { testid: 'verdict' } })]);
        if (previousOutcome) verdicts.appendChild(h('span', { className: 'verdict ghost', text: 'was ' + previousOutcome.label.toLowerCase(), title: 'verdict in ' + (baseline ? baseline.summary.label : 'the baseline') }));
        const metaParts = [h('span', { className: 'chip', text: criterion.source === 'check' ? 'check' : 'judge' })];
        if (criterion.kind === 'hard_rule') metaParts.push(h('span', { className: 'chip', text: 'hard rule' }));
        criterion.tags.forEach(function (tag) { metaParts.push(h('span', { className: 'chip', text: tag, title: tag })); });
        metaParts.push(h('span', { className: 'mono', text: criterion.id }));
        if (criterion.label !== undefined) metaParts.push(h('span', { text: 'label: ' + criterion.label }));
        if (isNumber(criterion.value)) metaParts.push(h('span', { className: 'num', text: 'value ' + formatScore(criterion.value, 2) }));
        if (isNumber(criterion.probability)) metaParts.push(h('span', { className: 'num', text: 'p(met) ' + formatScore(criterion.probability, 3) }));
        const element = h('div', {
          className: 'criterion ' + outcome.className + (flipped ? ' flipped' : ''),
          data: { criterionId: criterion.id, verdict: outcome.key, points: criterion.points }
        }, [
          verdicts,
          h('div', { className: 'criterion-text', text: criterion.text }),
          h('div', { className: 'points num ' + (criterion.points < 0 ? 'negative' : 'positive'), text: formatPoints(criterion.points), data: { testid: 'points' } }),
          h('div', { className: 'criterion-meta' }, metaParts)
        ]);
        if (criterion.explanation) element.appendChild(h('div', { className: 'explanation', data: { testid: 'explanation' } }, [h('b', { text: criterion.source === 'check' ? 'Check: ' : 'Judge: ' }), criterion.explanation]));
        else if (!textsLoaded && criterion.source === 'judge' && criterion.status === 'ok') element.appendChild(h('div', { className: 'explanation faint', text: 'loading explanation…' }));
        if (criterion.error) element.appendChild(h('div', { className: 'explanation' }, [h('b', { text: criterion.error.code + ': ' }), criterion.error.message]));
        if (criterion.skip_reason) element.appendChild(h('div', { className: 'explanation', text: 'Skipped: ' + criterion.skip_reason }));
        if (criterion.steps && criterion.steps.length > 0) {
          element.appendChild(h('div', { className: 'cited-steps', data: { testid: 'cited-steps' } }, [h('span', { text: 'cites' })].concat(criterion.steps.map(function (step) {
            return h('button', { text: 'step ' + step, attrs: { type: 'button', disabled: trajectory ? null : 'disabled', title: trajectory ? 'show step ' + step : 'the trajectory is not loaded' }, data: { testid: 'cited-step', step: step }, on: { click: function () { if (trajectory) trajectory.reveal(step); } } });
          }))));
        }
        if (flipped && previous.explanation) element.appendChild(h('div', { className: 'explanation' }, [h('b', { text: 'Baseline ' + (previous.source === 'check' ? 'check' : 'judge') + ': ' }), previous.explanation]));
        list.appendChild(element);
      });
      if (item.criteria.length === 0) list.appendChild(h('div', { className: 'callout info', text: 'No criteria (the item could not be read).' }));
      container.appendChild(list);
    }
  }
}
