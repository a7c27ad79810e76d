/**
 * The results view's overview: the banner when items failed (how much of the run the score
 * covers, the errors by code, how to finish the run), the headline score with its interval (and
 * the baseline's, and the paired difference, when comparing), the item counts, the judge, and
 * cost and tokens of each run; and the callout listing the inputs' problems.
 */
import { COLORS, card, ciTrack, formatCompact, formatCost, formatInteger, formatInterval, formatScore, formatSigned, formatSignedInterval, h, invalidLinesNote, isNumber, plural, problemsCallout, sectionHead, statList, truncate, type StatRow } from '../common.js';
import type { RunData } from '../../types.js';
import type { ResultsContext } from './common.js';

/**
 * Leads the page when items errored or were invalid: the score covers only part of the run, so
 * this is said before the score is read. One per run that has failures.
 */
export function failureBanner(context: ResultsContext): HTMLElement | null {
  const runs = context.payload.runs.filter(function (each) { return each.summary.coverage !== null; });
  if (runs.length === 0) return null;
  return h('section', { className: 'failure-banner', data: { testid: 'failure-banner' } }, runs.map(function (each) { return runFailures(each, context.payload.runs.length > 1); }));
}

function runFailures(run: RunData, named: boolean): HTMLElement {
  const summary = run.summary;
  const table = h('table', { className: 'data errors-table', data: { testid: 'errors-by-code' } }, [
    h('thead', null, [h('tr', null, [h('th', { text: 'error code' }), h('th', { className: 'num', text: 'count' }), h('th', { text: 'example' })])]),
    h('tbody', null, summary.errors.map(function (entry) {
      return h('tr', { data: { code: entry.code } }, [h('td', { className: 'mono', text: entry.code }), h('td', { className: 'num', text: formatInteger(entry.count) }), h('td', { className: 'clamp', text: entry.example, title: entry.example })]);
    }))
  ]);
  return h('div', { className: 'failure-run' }, [
    h('div', { className: 'failure-headline', data: { testid: 'coverage' } }, [named ? h('span', { className: 'mono', text: summary.label + ': ' }) : null, summary.coverage || '']),
    h('div', { className: 'failure-note', text: 'Items in error or invalid have no score and are left out of every figure below; the errors by code (criteria in error, or the item\'s own error):' }),
    table,
    summary.errorCodesOmitted > 0 ? h('div', { className: 'faint', text: '… ' + plural(summary.errorCodesOmitted, 'more code') }) : null,
    h('ul', { className: 'failure-advice', data: { testid: 'advice' } }, summary.advice.map(function (advice) { return h('li', { text: 'To finish: ' + advice }); }))
  ]);
}

export function overviewSection(context: ResultsContext): HTMLElement {
  const section = h('section', { className: 'section hero', attrs: { id: 'overview' }, style: { 'margin-top': '0' } });
  section.appendChild(headlineCard(context));
  section.appendChild(itemsCard(context));
  section.appendChild(judgeCard(context));
  section.appendChild(costCard(context));
  return section;
}

/**
 * The overview in blind review: the items, the judge and the cost, but no score (the run's score
 * is made of the verdicts not yet reviewed); the charts, criteria figures and comparison are
 * placeholders too (`blindPlaceholder`).
 */
export function blindOverviewSection(context: ResultsContext): HTMLElement {
  const section = h('section', { className: 'section hero', attrs: { id: 'overview' }, style: { 'margin-top': '0' }, data: { testid: 'blind-overview' } });
  section.appendChild(card('Score', [
    h('div', { className: 'big-number', text: 'hidden' }),
    h('div', { className: 'muted', text: "blind review: the run's score, pass rates and charts show when you turn blind off; an item's score shows once you have reviewed all its criteria" })
  ]));
  section.appendChild(card('Items', [h('div', { className: 'big-number num', text: formatInteger(context.summary.metrics.n), data: { testid: 'item-count' } })]));
  section.appendChild(judgeCard(context));
  section.appendChild(costCard(context));
  return section;
}

/** A section whose figures blind review hides: its place in the page, its title, and why it is empty. */
export function blindPlaceholder(id: string, title: string): HTMLElement {
  return h('section', { className: 'section', attrs: { id: id }, data: { testid: 'blind-placeholder' } }, [
    sectionHead(title),
    h('div', { className: 'callout info', text: 'Hidden in blind review: these figures are made of verdicts you have not reviewed yet. Turn blind off to see them.' })
  ]);
}

function headlineCard(context: ResultsContext): HTMLElement {
  const summary = context.summary, metrics = summary.metrics, baseline = context.baseline, comparison = context.comparison;
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
  return scoreCard;
}

function itemsCard(context: ResultsContext): HTMLElement {
  const summary = context.summary, metrics = summary.metrics;
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
  return card('Items', [
    h('div', { className: 'big-number num', text: formatInteger(metrics.n), data: { testid: 'item-count' } }),
    bar,
    h('div', { className: 'legend' }, parts.map(function (part) { return h('span', null, [h('i', { style: { background: part.color } }), part.label + ' ' + formatInteger(part.value)]); })),
    h('div', { style: { height: '12px' } }),
    statList([
      ['Criteria graded', formatInteger(summary.criteria.evaluated) + ' of ' + formatInteger(summary.criteria.total)],
      ['Rubrics', plural(summary.rubricHashes, 'distinct hash', 'distinct hashes')],
      ['rubricate', summary.versions.join(', ') || '—']
    ])
  ]);
}

function judgeCard(context: ResultsContext): HTMLElement {
  const rows = judgeRowsOf(context.summary.judges);
  if (!context.baseline) return card('Judge', [statList(rows)]);
  // Comparing: each run's judge, so a change of judge between the runs is visible.
  return card('Judges', [
    h('div', { className: 'run-caption mono', text: context.summary.label }), statList(rows),
    h('div', { className: 'run-caption mono', text: context.baseline.summary.label }), statList(judgeRowsOf(context.baseline.summary.judges))
  ]);
}

function judgeRowsOf(judges: RunData['summary']['judges']): StatRow[] {
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
  return judgeRows;
}

function costCard(context: ResultsContext): HTMLElement {
  if (!context.baseline) return card('Cost & tokens', costParts(context.summary));
  return card('Cost & tokens', [
    h('div', { className: 'run-caption mono', text: context.summary.label }), ...costParts(context.summary),
    h('div', { className: 'run-caption mono', text: context.baseline.summary.label }), ...costParts(context.baseline.summary)
  ]);
}

function costParts(summary: RunData['summary']): HTMLElement[] {
  const usage = summary.usage;
  return [
    h('div', { className: 'big-number num', text: formatCost(summary.costUsd), title: summary.costUsd === null ? 'the judge model is not in the price table' : 'at list prices', data: { testid: 'cost' } }),
    h('div', { style: { height: '10px' } }),
    statList([
      ['Judge calls', formatInteger(usage.calls)],
      ['Cache hits', formatInteger(usage.cache_hits)],
      ['Retries', formatInteger(usage.retries)],
      ['Input tokens', formatCompact(usage.prompt_tokens) + (usage.cached_prompt_tokens ? ' (' + formatCompact(usage.cached_prompt_tokens) + ' cached)' : '')],
      ['Output tokens', formatCompact(usage.completion_tokens)]
    ])
  ];
}

/** Lines that could not be read, repeated ids, items only in one run; null when there are none. */
export function resultsProblems(context: ResultsContext): HTMLElement | null {
  const comparison = context.comparison;
  const notes: HTMLElement[] = [];
  context.payload.runs.forEach(function (each) {
    const runSummary = each.summary;
    if (runSummary.invalidLineCount > 0) notes.push(invalidLinesNote(plural(runSummary.invalidLineCount, 'line') + ' of ' + runSummary.label + ' could not be read and were skipped', runSummary.invalidLines));
    if (runSummary.duplicateIds > 0) notes.push(h('div', { text: plural(runSummary.duplicateIds, 'item') + ' of ' + runSummary.label + ' repeat an earlier id; comparisons use the first.' }));
  });
  if (comparison && (comparison.onlyInRun > 0 || comparison.onlyInBaseline > 0)) {
    notes.push(h('div', { text: formatInteger(comparison.matched) + ' items matched by id; ' + formatInteger(comparison.onlyInRun) + ' only in ' + comparison.runLabel + ', ' + formatInteger(comparison.onlyInBaseline) + ' only in ' + comparison.baselineLabel + '.' }));
  }
  return problemsCallout(notes);
}
