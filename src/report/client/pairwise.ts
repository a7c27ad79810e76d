/**
 * The pairwise compare view (`rubricate compare` results): win rate of A with its interval,
 * outcome counts, position consistency, accuracy against gold labels, per-criterion and
 * per-source breakdowns, and a pair explorer whose drawer shows the conversation, both
 * responses side by side and each presentation order's verdict and explanation. Every
 * string from the data is inserted as text.
 */
import { ITEM_STATUS_NAMES } from './decode.js';
import { COLORS, errorMessage, card, chartBox, ciTrack, createDrawerShell, createVirtualTable, drawerActions, formatCompact, formatCost, formatInteger, formatPercent, formatScore, h, icon, isNumber, nextSort, plural, sectionHead, sortByNumber, sortByText, statList, tabs, truncate, wrapLines } from './common.js';
import { pageFooter, pageFrame } from './frame.js';
import { metricCard } from './meta.js';
import { PAIR_VERDICT_NAMES, rubricateDecodePair, rubricatePairVerdict, type DecodedComparison, type PairVerdictName } from './pairwise-decode.js';
import type { CompareReportPayload, PairTexts, ShareWithInterval, SourceComparisonTally } from '../types.js';
import type { ItemStatusName } from './decode.js';
import type { DrawerShell, StatRow, TableColumn } from './common.js';
import type { TextStore } from './text-store.js';

/** The pair explorer: a filtered, sorted virtual table the drawer steps through. */
interface PairExplorer {
  element: HTMLElement;
  mount(): void;
  order(): Int32Array;
  select(index: number): void;
  filterBySource(source: string | null): void;
  onOpen: ((index: number) => void) | null;
}

type OutcomeKey = 'win' | 'tie' | 'loss' | 'inconsistent';

const PAIR_OUTCOMES: Array<{ key: OutcomeKey; verdict: PairVerdictName; label: string; color: string }> = [
  { key: 'win', verdict: 'A', label: 'A better', color: '#4f46e5' },
  { key: 'tie', verdict: 'tie', label: 'tie', color: '#cbd5e1' },
  { key: 'loss', verdict: 'B', label: 'B better', color: '#0d9488' },
  { key: 'inconsistent', verdict: 'inconsistent', label: 'order-inconsistent', color: '#f59e0b' }
];
const PAIR_ERROR_COLOR = '#ef4444';
const PAIR_INVALID_COLOR = '#991b1b';

/** Label and style of a verdict (A, B, tie, inconsistent, null = no verdict, undefined = not judged). */
function pairVerdictLook(verdict: PairVerdictName | null | undefined): { key: string; label: string; className: string } {
  if (verdict === 'A') return { key: 'A', label: 'A better', className: 'pair-a' };
  if (verdict === 'B') return { key: 'B', label: 'B better', className: 'pair-b' };
  if (verdict === 'tie') return { key: 'tie', label: 'Tie', className: 'pair-tie' };
  if (verdict === 'inconsistent') return { key: 'inconsistent', label: 'Inconsistent', className: 'pair-inconsistent' };
  if (verdict === null) return { key: 'none', label: 'No verdict', className: 'pair-none' };
  return { key: 'absent', label: 'Not judged', className: 'pair-absent' };
}

function pairVerdictPill(verdict: PairVerdictName | null | undefined, testid?: string, extraTitle?: string): HTMLElement {
  const look = pairVerdictLook(verdict);
  return h('span', { className: 'verdict ' + look.className, text: look.label, title: extraTitle || undefined, data: testid ? { testid: testid, verdict: look.key } : { verdict: look.key } });
}

function shareText(share: ShareWithInterval | null | undefined): string {
  if (!share || !isNumber(share.value)) return '—';
  return formatPercent(share.value) + (share.ci95 && isNumber(share.ci95[0]) ? '  (95% CI ' + formatPercent(share.ci95[0]) + ' – ' + formatPercent(share.ci95[1]) + ')' : '');
}

export function renderPairwiseCompareView(root: HTMLElement, payload: CompareReportPayload, textStore: TextStore<PairTexts>): void {
  const summary = payload.summary;
  const figures = summary.figures;
  const overall = figures.overall;
  const agreement = figures.agreement || null;
  const pairs = payload.pairs;
  const count = pairs.ids.length;
  const chunkListeners: Array<(chunk: PairTexts) => void> = [];
  const hasLabels = summary.labelledPairs > 0;
  const hasSources = summary.sources.length > 0;

  const sections = [{ id: 'overview', label: 'Overview' }];
  if (agreement) sections.push({ id: 'agreement', label: 'Gold labels' });
  if (summary.criteria.length) sections.push({ id: 'criteria', label: 'Criteria' });
  if (hasSources) sections.push({ id: 'sources', label: 'Sources' });
  sections.push({ id: 'pairs', label: 'Pairs' });
  const page = pageFrame(root, payload, {
    sections: sections,
    subtitle: [
      h('span', { className: 'pill accent', text: 'pairwise compare' }),
      h('span', { className: 'mono', text: summary.label }),
      h('span', { className: 'num muted', text: plural(figures.n, 'pair') + ' · ' + (summary.swappedPairs > 0 ? formatInteger(summary.swappedPairs) + ' judged in both orders' : 'original order only') })
    ]
  });

  page.appendChild(overviewSection());
  const problems = problemsCallout();
  if (problems) page.appendChild(problems);
  if (agreement) page.appendChild(agreementSection());
  if (summary.criteria.length) page.appendChild(criteriaSection());
  if (hasSources) page.appendChild(sourcesSection());
  const explorer = createPairExplorer();
  page.appendChild(explorer.element);
  page.appendChild(pageFooter(payload, [
    'win rate: A better = 1, tie and order-inconsistent = ½, B better = 0, over pairs with a verdict',
    'intervals: seeded percentile bootstrap over pairs, 1000 resamples, as rubricate compare computes them',
    'data: ' + summary.label
  ]));
  explorer.mount();
  const drawer = createPairDrawer(explorer);
  explorer.onOpen = drawer.open;
  window.addEventListener('hashchange', openFromHash);
  openFromHash();
  setTimeout(loadAllTexts, 0);

  function loadAllTexts() {
    textStore.loadAll(function (runIndex, chunk) {
      if (chunk) chunkListeners.forEach(function (listener) { listener(chunk); });
    }).then(function () {
      document.documentElement.setAttribute('data-texts-ready', '1');
    }, function (error: unknown) {
      document.documentElement.setAttribute('data-report-error', 'texts: ' + errorMessage(error));
    });
  }

  function openFromHash() {
    const match = /^#pair=(.*)$/.exec(location.hash);
    if (!match) return;
    const index = pairs.ids.indexOf(decodeURIComponent(match[1]));
    if (index >= 0 && drawer.current() !== index) drawer.open(index);
  }

  // ---------------------------------------------------------------- overview
  function overviewSection() {
    const section = h('section', { className: 'section hero', attrs: { id: 'overview' }, style: { 'margin-top': '0' } });
    const winRate = overall.win_rate;
    const judged = overall.win + overall.tie + overall.loss + overall.inconsistent;
    const headline = h('section', { className: 'card hero-score', data: { testid: 'headline' } }, [
      h('div', { className: 'score-label' }, [h('span', { text: 'Win rate of A' }), h('span', { className: 'pill neutral', text: 'A vs B' })]),
      h('div', { className: 'score-value num', text: formatPercent(winRate.value), data: { testid: 'win-rate' } }),
      h('div', { className: 'score-ci num', text: winRate.ci95 ? '95% CI ' + formatPercent(winRate.ci95[0]) + ' – ' + formatPercent(winRate.ci95[1]) : 'no pair has a verdict', data: { testid: 'win-rate-ci' } }),
      h('div', { className: 'score-ci num faint', text: 'over ' + plural(judged, 'pair') + ' with a verdict; a tie or an order-inconsistent verdict counts as half a win' })
    ]);
    if (isNumber(winRate.value)) headline.appendChild(ciTrack(winRate.value, winRate.ci95, 0, 1));
    headline.appendChild(h('div', { className: 'score-ci num', style: { 'margin-top': '6px' }, text: 'tie rate ' + shareText(overall.tie_rate), data: { testid: 'tie-rate' } }));
    section.appendChild(headline);

    const parts: Array<{ key: string; label: string; value: number; color: string }> = [
      ...PAIR_OUTCOMES.map(function (outcome) { return { key: outcome.key, label: outcome.label, value: overall[outcome.key], color: outcome.color }; }),
      { key: 'error', label: 'error', value: figures.n_error, color: PAIR_ERROR_COLOR }, { key: 'invalid', label: 'invalid', value: figures.n_invalid, color: PAIR_INVALID_COLOR }
    ];
    const bar = h('div', { className: 'stack-bar', data: { testid: 'outcome-bar' } }, parts.filter(function (part) { return part.value > 0; }).map(function (part) {
      return h('span', { title: part.label + ': ' + formatInteger(part.value), data: { outcome: part.key }, style: { width: (part.value / Math.max(1, figures.n)) * 100 + '%', background: part.color } });
    }));
    section.appendChild(card('Pairs', [
      h('div', { className: 'big-number num', text: formatInteger(figures.n), data: { testid: 'pair-count' } }),
      bar,
      h('div', { className: 'legend', data: { testid: 'outcomes' } }, parts.map(function (part) {
        return h('span', null, [h('i', { style: { background: part.color } }), part.label + ' ', h('b', { className: 'num', text: formatInteger(part.value), data: { testid: 'count-' + part.key } })]);
      })),
      h('div', { style: { height: '12px' } }),
      statList([
        ['With a gold label', formatInteger(summary.labelledPairs)],
        ['Judged in both orders', formatInteger(summary.swappedPairs)],
        ['rubricate', summary.versions.join(', ') || '—']
      ])
    ]));

    const consistency = overall.position_consistency;
    let both = 0, same = 0;
    for (let index = 0; index < count; index += 1) {
      // The pairs the summary counts: status ok, a verdict, and a verdict in each order.
      if (pairs.status[index] !== 0 || pairs.winners[index] < 0 || pairs.consistent[index] < 0) continue;
      both += 1;
      if (pairs.consistent[index] === 1) same += 1;
    }
    const consistencyCard = h('section', { className: 'card', data: { testid: 'position-consistency' } }, [
      h('h3', { text: 'Position consistency' }),
      h('div', { className: 'big-number num', text: formatPercent(consistency.value), data: { testid: 'consistency-value' } }),
      h('div', { className: 'score-ci num', text: consistency.ci95 ? '95% CI ' + formatPercent(consistency.ci95[0]) + ' – ' + formatPercent(consistency.ci95[1]) : (summary.swappedPairs ? 'no pair has a verdict in both orders' : 'not measured: pairs were judged in one order only') }),
      isNumber(consistency.value) ? ciTrack(consistency.value, consistency.ci95, 0, 1) : null,
      h('div', { className: 'chart-note num', text: formatInteger(same) + ' of ' + plural(both, 'pair') + ' judged in both orders got the same verdict; the others count as order-inconsistent.', data: { testid: 'consistency-note' } })
    ]);
    section.appendChild(consistencyCard);

    const judges = summary.judges;
    let rows: StatRow[];
    if (judges.length === 0) rows = [['Judge', 'not recorded', '']];
    else if (judges.length > 1) rows = [['Judges', judges.length + ' configurations', ''], ['Models', judges.map(function (judge) { return judge.model; }).join(', '), '']];
    else {
      const judge = judges[0];
      rows = [
        ['Model', judge.model, 'mono'],
        ['Spec', judge.id, 'mono'],
        ['Template', judge.template_version, 'mono'],
        ['Mode', judge.mode, ''],
        ['Sampling', 'T = ' + (isNumber(judge.temperature) ? judge.temperature : '—') + (isNumber(judge.max_tokens) ? ' · max ' + judge.max_tokens + ' tokens' : ''), 'num']
      ];
    }
    const usage = figures.usage;
    rows = rows.concat([
      ['Judge calls', formatInteger(usage.calls) + (usage.cache_hits ? ' (+' + formatInteger(usage.cache_hits) + ' cached)' : '')],
      ['Tokens in / out', formatCompact(usage.prompt_tokens) + ' / ' + formatCompact(usage.completion_tokens)],
      ['Cost', formatCost(summary.costUsd), '', summary.costUsd === null ? 'the judge model is not in the price table' : 'at list prices']
    ]);
    section.appendChild(card('Judge & cost', [statList(rows)]));
    return section;
  }

  function problemsCallout() {
    const notes = [];
    if (summary.invalidLineCount > 0) {
      const details = h('details', null, [h('summary', { text: plural(summary.invalidLineCount, 'line') + ' of ' + summary.label + ' could not be read and count as invalid pairs' })]);
      details.appendChild(h('ul', null, summary.invalidLines.map(function (line) { return h('li', { className: 'mono', text: line.message }); })));
      notes.push(details);
    }
    if (summary.duplicateIds > 0) notes.push(h('div', { text: plural(summary.duplicateIds, 'pair') + ' repeat an earlier id; every copy is counted.' }));
    if (summary.summaryFile && summary.summaryFile.differences.length) {
      notes.push(h('div', null, [
        h('div', { text: summary.summaryFile.label + ' does not match the records; this report shows the figures recomputed from the records.' }),
        h('ul', null, summary.summaryFile.differences.map(function (difference) { return h('li', { className: 'mono', text: difference }); }))
      ]));
    }
    if (notes.length === 0) return null;
    return h('div', { className: 'callout error', style: { 'margin-top': '16px' }, data: { testid: 'problems' } }, notes);
  }

  // ---------------------------------------------------------------- gold labels
  function agreementSection(): HTMLElement {
    // Drawn only when the pairs carry gold labels.
    const gold = agreement!;
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
    for (let index = 0; index < count; index += 1) {
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
  function criteriaSection() {
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

  function sourcesSection() {
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
      body.appendChild(h('tr', { className: 'clickable', data: { source: sourceName(row) }, on: { click: function () { explorer.filterBySource(row.source); } } }, cells));
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

  // ---------------------------------------------------------------- pair table
  function createPairExplorer() {
    const state = { query: '', status: 'all' as ItemStatusName | 'all', verdict: 'all' as PairVerdictName | 'all', source: '', wrongOnly: false, sortKey: '', sortDirection: 1 };
    const explorer = { onOpen: null } as PairExplorer;
    let idHaystack: string[] | null = null;
    const textHaystack = new Array<string | undefined>(count);

    const columns: TableColumn[] = [
      { key: 'id', label: 'Pair', width: 'minmax(150px, 2fr)' },
      { key: 'winner', label: 'Verdict', width: '130px' },
      { key: 'original', label: 'A shown first', width: '120px' }
    ];
    const hasSwapped = summary.swappedPairs > 0;
    if (hasSwapped) columns.push({ key: 'swapped', label: 'B shown first', width: '120px' });
    if (hasLabels) columns.push({ key: 'label', label: 'Gold', width: '96px' });
    if (hasSources) columns.push({ key: 'source', label: 'Source', width: 'minmax(100px, 1.3fr)', narrowHidden: true });
    columns.push({ key: 'status', label: 'Status', width: '76px' });

    const searchInput = h('input', { attrs: { type: 'search', placeholder: 'Search ids, sources, prompts and responses', 'aria-label': 'Search pairs' } });
    const toolbar = h('div', { className: 'explorer-toolbar' }, [
      h('div', { className: 'search' }, [icon('search'), searchInput]),
      tabs([{ value: 'all', label: 'All' }, { value: 'ok', label: 'OK' }, { value: 'error', label: 'Errors' }, { value: 'invalid', label: 'Invalid' }], 'all', function (value) { state.status = value; refresh(true); }),
      tabs([{ value: 'all', label: 'Any verdict' }, { value: 'A', label: 'A better' }, { value: 'B', label: 'B better' }, { value: 'tie', label: 'Tie' }, { value: 'inconsistent', label: 'Inconsistent' }], 'all', function (value) { state.verdict = value; refresh(true); })
    ]);
    let sourceSelect: HTMLSelectElement | null = null;
    if (hasSources) {
      const select = (sourceSelect = h('select', { className: 'select', attrs: { 'aria-label': 'Filter by source' } }, [h('option', { text: 'All sources', attrs: { value: '' } })]));
      const sourceRefs: Record<number, boolean> = {};
      pairs.sources.forEach(function (reference) { sourceRefs[reference] = true; });
      Object.keys(sourceRefs).map(Number).sort(function (a, b) { return a < 0 ? 1 : b < 0 ? -1 : payload.strings[a] < payload.strings[b] ? -1 : 1; }).forEach(function (reference) {
        select.appendChild(h('option', { text: reference < 0 ? '(no source)' : payload.strings[reference], attrs: { value: 's' + reference } }));
      });
      select.addEventListener('change', function () { state.source = select.value; refresh(true); });
      toolbar.appendChild(select);
    }
    if (hasLabels) {
      const wrongBox = h('input', { attrs: { type: 'checkbox' } });
      wrongBox.addEventListener('change', function () { state.wrongOnly = wrongBox.checked; refresh(true); });
      toolbar.appendChild(h('label', { className: 'toggle' }, [wrongBox, 'wrong vs gold only']));
    }
    const countLabel = h('div', { className: 'result-count num', data: { testid: 'result-count' } });
    toolbar.appendChild(countLabel);

    const table = createVirtualTable({
      columns: columns,
      label: 'pairs',
      emptyText: 'No pair matches these filters.',
      rowData: function (index) { return { index: index, pairId: pairs.ids[index] }; },
      fillRow: fillRow,
      onSort: sortBy,
      onOpen: function (index) { if (explorer.onOpen) explorer.onOpen(index); }
    });
    const section = h('section', { className: 'section', attrs: { id: 'pairs' } }, [sectionHead('Pairs', 'click a pair to see the conversation, both responses and each order\'s verdict'), toolbar, table.element]);

    let searchTimer: ReturnType<typeof setTimeout> | undefined;
    searchInput.addEventListener('input', function () {
      clearTimeout(searchTimer);
      searchTimer = setTimeout(function () { state.query = searchInput.value.trim().toLowerCase(); refresh(true); }, 120);
    });
    chunkListeners.push(function (chunk) {
      for (let local = 0; local < chunk.responsesA.length; local += 1) {
        const parts: string[] = [];
        if (chunk.responsesA[local] >= 0) parts.push(chunk.strings[chunk.responsesA[local]]);
        if (chunk.responsesB[local] >= 0) parts.push(chunk.strings[chunk.responsesB[local]]);
        const prompt = chunk.prompts[local] || [];
        for (let turn = 1; turn < prompt.length; turn += 2) parts.push(chunk.strings[prompt[turn]]);
        textHaystack[chunk.firstPair + local] = parts.join('\n').toLowerCase();
      }
      if (state.query) refresh(false);
    });

    explorer.element = section;
    explorer.mount = function () { refresh(true); };
    explorer.order = table.order;
    explorer.select = table.select;
    explorer.filterBySource = function (source: string | null) {
      if (!sourceSelect) return;
      const reference = source === null ? -1 : payload.strings.indexOf(source);
      sourceSelect.value = 's' + reference;
      state.source = sourceSelect.value;
      refresh(true);
      section.scrollIntoView({ behavior: 'smooth', block: 'start' });
    };
    return explorer;

    function matchesQuery(index: number, query: string): boolean {
      if (!idHaystack) {
        const haystack = (idHaystack = new Array<string>(count));
        for (let each = 0; each < count; each += 1) haystack[each] = (pairs.ids[each] + ' ' + (pairs.sources[each] >= 0 ? payload.strings[pairs.sources[each]] : '')).toLowerCase();
      }
      return idHaystack[index].indexOf(query) >= 0 || (textHaystack[index] ?? '').indexOf(query) >= 0 && textHaystack[index] !== undefined;
    }

    function refresh(resetScroll: boolean): void {
      const statusCode = state.status === 'all' ? -1 : ITEM_STATUS_NAMES.indexOf(state.status);
      const verdictCode = state.verdict === 'all' ? -9 : PAIR_VERDICT_NAMES.indexOf(state.verdict);
      const sourceReference = state.source ? Number(state.source.slice(1)) : null;
      const kept = new Int32Array(count);
      let length = 0;
      for (let index = 0; index < count; index += 1) {
        if (statusCode >= 0 && pairs.status[index] !== statusCode) continue;
        if (verdictCode !== -9 && pairs.winners[index] !== verdictCode) continue;
        if (sourceReference !== null && pairs.sources[index] !== sourceReference) continue;
        if (state.wrongOnly && !(pairs.labels[index] >= 0 && pairs.correct[index] === 0)) continue;
        if (state.query && !matchesQuery(index, state.query)) continue;
        kept[length++] = index;
      }
      const order = sortOrder(kept.slice(0, length));
      countLabel.textContent = 'Showing ' + formatInteger(order.length) + ' of ' + formatInteger(count) + ' pairs' + (state.query && !textStore.complete() ? ' (texts still loading)' : '');
      document.documentElement.setAttribute('data-filtered', String(order.length));
      table.show(order, resetScroll);
    }

    function sortValue(key: string): (index: number) => number | null {
      if (key === 'winner') return function (index) { return pairs.winners[index]; };
      if (key === 'original') return function (index) { return pairs.originalOrder[index]; };
      if (key === 'swapped') return function (index) { return pairs.swappedOrder[index]; };
      if (key === 'label') return function (index) { return pairs.labels[index] < 0 ? NaN : pairs.correct[index] * 10 + pairs.labels[index]; };
      if (key === 'status') return function (index) { return pairs.status[index]; };
      return function () { return null; };
    }

    function sortOrder(order: Int32Array): Int32Array {
      if (!state.sortKey) return order;
      if (state.sortKey === 'id') return sortByText(order, function (index) { return pairs.ids[index]; }, state.sortDirection);
      if (state.sortKey === 'source') return sortByText(order, function (index) { return pairs.sources[index] >= 0 ? payload.strings[pairs.sources[index]] : ''; }, state.sortDirection);
      return sortByNumber(order, sortValue(state.sortKey), state.sortDirection);
    }

    function sortBy(key: string): void {
      nextSort(state, key, 1);
      table.showSort(state.sortKey, state.sortDirection);
      refresh(true);
    }

    function fillRow(index: number, element: HTMLElement): void {
      element.appendChild(h('div', { className: 'mono', text: pairs.ids[index], title: pairs.ids[index] }));
      element.appendChild(h('div', null, [pairVerdictPill(rubricatePairVerdict(pairs.winners[index]), 'row-winner')]));
      element.appendChild(h('div', null, [pairVerdictPill(rubricatePairVerdict(pairs.originalOrder[index]))]));
      if (hasSwapped) element.appendChild(h('div', null, [pairVerdictPill(rubricatePairVerdict(pairs.swappedOrder[index]))]));
      if (hasLabels) {
        const label = pairs.labels[index];
        element.appendChild(h('div', { className: 'num' }, label < 0 ? [h('span', { className: 'faint', text: '—' })] : [
          h('span', { text: PAIR_VERDICT_NAMES[label] + ' ' }),
          pairs.correct[index] === 1 ? h('span', { className: 'up', text: '✓', title: 'the verdict matches the label' }) : pairs.correct[index] === 0 ? h('span', { className: 'down', text: '✗', title: 'the verdict differs from the label' }) : h('span', { className: 'faint', text: '?' })
        ]));
      }
      if (hasSources) element.appendChild(h('div', { className: 'hide-narrow muted', text: pairs.sources[index] >= 0 ? payload.strings[pairs.sources[index]] : '', title: pairs.sources[index] >= 0 ? payload.strings[pairs.sources[index]] : undefined }));
      const status = ITEM_STATUS_NAMES[pairs.status[index]];
      element.appendChild(h('div', null, [h('span', { className: 'pill ' + status, text: status })]));
    }
  }

  // ---------------------------------------------------------------- pair drawer
  function createPairDrawer(explorer: PairExplorer): DrawerShell {
    const shell = createDrawerShell({
      explorer: explorer,
      noun: 'pair',
      testid: 'pair-drawer',
      hashKey: 'pair',
      idOf: function (index) { return pairs.ids[index]; },
      render: render,
      load: function (index, done) { if (!textStore.chunkFor(0, index)) textStore.loadFor(0, index).then(done); }
    });
    return shell;

    function render(index: number, panel: HTMLElement): void {
      const chunk = textStore.chunkFor(0, index);
      const pair = rubricateDecodePair(payload, chunk, index);
      panel.setAttribute('data-pair-id', pair.id);
      panel.setAttribute('data-texts', chunk ? 'loaded' : 'loading');
      const order = explorer.order();
      const position = Array.prototype.indexOf.call(order, index);

      const title = h('div', { className: 'drawer-title' }, [
        h('h2', { text: pair.id, data: { testid: 'drawer-id' } }),
        h('div', { className: 'meta' }, [
          h('span', { className: 'pill ' + pair.status, text: pair.status }),
          h('span', { className: 'num', text: 'line ' + pair.line }),
          pair.source !== undefined ? h('span', null, ['source ', h('span', { className: 'mono', text: pair.source })]) : null,
          pair.label !== undefined ? h('span', { data: { testid: 'drawer-label' } }, ['gold ', h('b', { text: pair.label }), pair.correct === true ? h('span', { className: 'up', text: ' ✓ matches' }) : pair.correct === false ? h('span', { className: 'down', text: ' ✗ differs' }) : null]) : null,
          position >= 0 ? h('span', { className: 'num faint', text: (position + 1) + ' of ' + formatInteger(order.length) }) : null
        ])
      ]);
      const verdictBlock = h('div', { className: 'drawer-score' }, [
        h('div', { className: 'faint', text: 'verdict' }),
        h('div', null, [pairVerdictPill(pair.winner, 'drawer-winner')]),
        h('div', { className: 'muted', text: pair.consistent === true ? 'same in both orders' : pair.consistent === false ? 'the orders disagree' : pair.orders.ba === undefined ? 'one order judged' : '' })
      ]);
      panel.appendChild(h('div', { className: 'drawer-header' }, [title, verdictBlock, drawerActions(shell, 'pair')]));

      const body = h('div', { className: 'pair-drawer-body' });
      panel.appendChild(body);
      if (pair.error) body.appendChild(h('div', { className: 'callout error' }, [h('b', { text: pair.error.code + ': ' }), pair.error.message]));

      if (!chunk) {
        body.appendChild(h('div', { className: 'loading', style: { 'min-height': '120px' } }, [h('div', { className: 'spinner' }), h('div', { text: 'Loading texts…' })]));
      } else {
        body.appendChild(h('div', { className: 'block-title', text: 'Conversation' }));
        const prompt = pair.prompt ?? [];
        if (prompt.length === 0) body.appendChild(h('div', { className: 'callout info', text: 'The prompt was not stored (compared with --no-text).' }));
        prompt.forEach(function (message) {
          body.appendChild(h('div', { className: 'message ' + (['user', 'assistant', 'system'].indexOf(message.role) >= 0 ? message.role : 'user') }, [
            h('div', { className: 'message-role', text: message.role }),
            h('div', { className: 'text-body', text: message.content })
          ]));
        });
        body.appendChild(h('div', { className: 'block-title', text: 'Responses' }));
        body.appendChild(h('div', { className: 'pair-responses' }, [responseBox('A', pair.response_a ?? null, pair.winner), responseBox('B', pair.response_b ?? null, pair.winner)]));
      }

      // Verdicts after the texts they judge; responses are height-capped so the verdicts stay close.
      body.appendChild(h('div', { className: 'block-title', text: 'Verdicts' }));
      const list = h('div', { data: { testid: 'comparisons' } });
      const all: DecodedComparison[] = [...(pair.overall ? [pair.overall] : []), ...pair.criteria];
      all.forEach(function (comparison) { list.appendChild(comparisonCard(comparison, comparison === pair.overall, Boolean(chunk))); });
      if (all.length === 0) list.appendChild(h('div', { className: 'callout info', text: 'No comparison: the pair could not be read.' }));
      body.appendChild(list);
    }

    function responseBox(name: 'A' | 'B', text: string | null, winner: PairVerdictName | null): HTMLElement {
      const box = h('div', { className: 'response-box pair-response' + (winner === name ? ' preferred' : '') }, [
        h('div', { className: 'pair-response-head' }, [h('b', { text: 'Response ' + name }), winner === name ? h('span', { className: 'verdict ' + (name === 'A' ? 'pair-a' : 'pair-b'), text: 'preferred' }) : null])
      ]);
      if (text === null) box.appendChild(h('div', { className: 'callout info', text: 'Not stored (compared with --no-text).' }));
      else box.appendChild(h('div', { className: 'text-body pair-response-text', text: text, data: { testid: 'response-' + name.toLowerCase() } }));
      return box;
    }

    function comparisonCard(comparison: DecodedComparison, isOverall: boolean, textsLoaded: boolean): HTMLElement {
      const element = h('div', { className: 'pair-comparison', data: { testid: 'comparison', comparisonId: comparison.id, winner: pairVerdictLook(comparison.winner).key } }, [
        h('div', { className: 'pair-comparison-head' }, [
          h('div', { className: 'pair-comparison-title' }, [
            h('div', { className: 'faint', text: isOverall ? 'Overall' : 'Criterion ' + comparison.id }),
            h('div', { className: 'criterion-text', text: comparison.text, data: { testid: 'comparison-text' } })
          ]),
          pairVerdictPill(comparison.winner, 'comparison-verdict')
        ])
      ]);
      ([{ key: 'ab', label: 'Original order', note: 'A shown first (as response 1)' }, { key: 'ba', label: 'Swapped order', note: 'B shown first (as response 1)' }] as const).forEach(function (order) {
        const verdict = comparison.orders[order.key];
        // An order that was never judged (--no-swap) has nothing to show.
        if (verdict === undefined) return;
        const explanation = comparison.explanations ? comparison.explanations[order.key] : undefined;
        const row = h('div', { className: 'order-row', data: { order: order.key } }, [
          h('div', { className: 'order-label' }, [h('b', { text: order.label }), h('span', { className: 'faint', text: order.note })]),
          pairVerdictPill(verdict, 'order-verdict')
        ]);
        if (explanation !== undefined) row.appendChild(h('div', { className: 'explanation', text: explanation, data: { testid: 'order-explanation' } }));
        else if (!textsLoaded && verdict) row.appendChild(h('div', { className: 'explanation faint', text: 'loading explanation…' }));
        element.appendChild(row);
      });
      if (comparison.error) element.appendChild(h('div', { className: 'callout error' }, [h('b', { text: comparison.error.code + ': ' }), comparison.error.message]));
      return element;
    }
  }
}
