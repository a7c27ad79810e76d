/**
 * The compare view's overview: the win rate of A with its interval and the tie rate, the
 * outcome counts, position consistency, the judge and cost; and the callout listing the
 * input's problems.
 */
import { card, ciTrack, formatCompact, formatCost, formatInteger, formatPercent, h, invalidLinesNote, isNumber, plural, problemsCallout, statList, type StatRow } from '../common.js';
import type { CompareReportPayload } from '../../types.js';
import { PAIR_ERROR_COLOR, PAIR_INVALID_COLOR, PAIR_OUTCOMES, shareText } from './common.js';

export function overviewSection(payload: CompareReportPayload): HTMLElement {
  const section = h('section', { className: 'section hero', attrs: { id: 'overview' }, style: { 'margin-top': '0' } });
  section.appendChild(headlineCard(payload));
  section.appendChild(pairsCard(payload));
  section.appendChild(consistencyCard(payload));
  section.appendChild(judgeCard(payload));
  return section;
}

function headlineCard(payload: CompareReportPayload): HTMLElement {
  const overall = payload.summary.figures.overall;
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
  return headline;
}

function pairsCard(payload: CompareReportPayload): HTMLElement {
  const summary = payload.summary, figures = summary.figures, overall = figures.overall;
  const parts: Array<{ key: string; label: string; value: number; color: string }> = [
    ...PAIR_OUTCOMES.map(function (outcome) { return { key: outcome.key, label: outcome.label, value: overall[outcome.key], color: outcome.color }; }),
    { key: 'error', label: 'error', value: figures.n_error, color: PAIR_ERROR_COLOR }, { key: 'invalid', label: 'invalid', value: figures.n_invalid, color: PAIR_INVALID_COLOR }
  ];
  const bar = h('div', { className: 'stack-bar', data: { testid: 'outcome-bar' } }, parts.filter(function (part) { return part.value > 0; }).map(function (part) {
    return h('span', { title: part.label + ': ' + formatInteger(part.value), data: { outcome: part.key }, style: { width: (part.value / Math.max(1, figures.n)) * 100 + '%', background: part.color } });
  }));
  return card('Pairs', [
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
  ]);
}

function consistencyCard(payload: CompareReportPayload): HTMLElement {
  const summary = payload.summary, overall = summary.figures.overall, pairs = payload.pairs;
  const consistency = overall.position_consistency;
  let both = 0, same = 0;
  for (let index = 0; index < pairs.ids.length; index += 1) {
    // The pairs the summary counts: status ok, a verdict, and a verdict in each order.
    if (pairs.status[index] !== 0 || pairs.winners[index] < 0 || pairs.consistent[index] < 0) continue;
    both += 1;
    if (pairs.consistent[index] === 1) same += 1;
  }
  return h('section', { className: 'card', data: { testid: 'position-consistency' } }, [
    h('h3', { text: 'Position consistency' }),
    h('div', { className: 'big-number num', text: formatPercent(consistency.value), data: { testid: 'consistency-value' } }),
    h('div', { className: 'score-ci num', text: consistency.ci95 ? '95% CI ' + formatPercent(consistency.ci95[0]) + ' – ' + formatPercent(consistency.ci95[1]) : (summary.swappedPairs ? 'no pair has a verdict in both orders' : 'not measured: pairs were judged in one order only') }),
    isNumber(consistency.value) ? ciTrack(consistency.value, consistency.ci95, 0, 1) : null,
    h('div', { className: 'chart-note num', text: formatInteger(same) + ' of ' + plural(both, 'pair') + ' judged in both orders got the same verdict; the others count as order-inconsistent.', data: { testid: 'consistency-note' } })
  ]);
}

function judgeCard(payload: CompareReportPayload): HTMLElement {
  const summary = payload.summary, figures = summary.figures;
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
  return card('Judge & cost', [statList(rows)]);
}

/** Lines that could not be read, repeated ids, a summary file that disagrees; null when there are none. */
export function compareProblems(payload: CompareReportPayload): HTMLElement | null {
  const summary = payload.summary;
  const notes: HTMLElement[] = [];
  if (summary.invalidLineCount > 0) notes.push(invalidLinesNote(plural(summary.invalidLineCount, 'line') + ' of ' + summary.label + ' could not be read and count as invalid pairs', summary.invalidLines));
  if (summary.duplicateIds > 0) notes.push(h('div', { text: plural(summary.duplicateIds, 'pair') + ' repeat an earlier id; every copy is counted.' }));
  if (summary.summaryFile && summary.summaryFile.differences.length) {
    notes.push(h('div', null, [
      h('div', { text: summary.summaryFile.label + ' does not match the records; this report shows the figures recomputed from the records.' }),
      h('ul', null, summary.summaryFile.differences.map(function (difference) { return h('li', { className: 'mono', text: difference }); }))
    ]));
  }
  return problemsCallout(notes);
}
