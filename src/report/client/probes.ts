/**
 * The probe view (`rubricate probe` reports): what can fool this judge. One row per probe (and
 * per injection kind) with its score drift and interval, verdict flips, the assessment and
 * whether it flags a weakness; a drift chart with intervals; and per probe the criteria that
 * flipped most and the items that moved most.
 */
import { madeUpBy } from '../../util/made-up.js';
import { COLORS, card, chartBox, formatCompact, formatInteger, formatScore, formatSigned, h, isNumber, plural, sectionHead, statList, tabs, truncate } from './common.js';
import { pageFooter, pageFrame } from './frame.js';
import type { Interval } from './chart.js';
import type { ProbeResult, ProbeSummary, Rate } from '../../meta/probes/analysis.js';
import type { ProbeReportPayload } from '../types.js';

function intervalOf(value: { lower: number; upper: number } | null | undefined): Interval { return value ? [value.lower, value.upper] : null; }

function rateText(rate: Rate | undefined): string {
  if (!rate || rate.rate === null) return '—';
  return formatScore(rate.rate) + ' (' + formatInteger(rate.count) + '/' + formatInteger(rate.of) + ')';
}

/** The rate each kind of probe is about: targeted flips (deletion), flips to met (injection), any flip (spurious). */
function keyRate(kind: ProbeResult['kind'], summary: ProbeSummary): Rate | undefined {
  if (kind === 'causal') return summary.target;
  if (kind === 'injection') return summary.flips.notMetToMet;
  return summary.flips.any;
}

type ProbeReport = ProbeReportPayload['report'];

export function renderProbeView(root: HTMLElement, payload: ProbeReportPayload): void {
  const report = payload.report;
  const page = pageFrame(root, payload, {
    sections: [{ id: 'overview', label: 'Overview' }, { id: 'probes', label: 'Probes' }, { id: 'detail', label: 'Detail' }],
    subtitle: [h('span', { className: 'pill accent', text: 'robustness probes' }), h('span', { className: 'mono', text: payload.label }), h('span', { className: 'muted', text: 'scoring ' + report.scoring + ' · ' + report.textVersion })],
    madeUpBy: madeUpBy(report) || null
  });
  page.appendChild(probeOverview(report));
  page.appendChild(probesSection(report));
  page.appendChild(probeDetailSection(report));
  page.appendChild(pageFooter(payload, ['probes ' + report.textVersion, 'seed ' + report.seed]));
}

/** The verdict (weaknesses found), the items probed and the judge. */
function probeOverview(report: ProbeReport): HTMLElement {
  const judge = report.judge;
  const flagged = report.probes.filter(function (result) { return result.flagged; });
  return h('section', { className: 'section grid-3', attrs: { id: 'overview' }, style: { 'margin-top': '0' } }, [
    card('Verdict', [
      h('div', { className: 'big-number ' + (flagged.length ? 'down' : 'up'), text: flagged.length ? plural(flagged.length, 'weakness', 'weaknesses') : 'no weakness found', data: { testid: 'probe-verdict' } }),
      h('div', { className: 'chart-note', text: flagged.length ? 'flagged: ' + flagged.map(function (result) { return result.probe; }).join(', ') : 'by these probes, on these items' })
    ]),
    card('Items', [statList([
      ['Probed', formatInteger(report.items.probed)],
      ['Graded ok (perturbed)', formatInteger(report.items.originalOk)],
      ['Failed, not probed', formatInteger(report.items.originalFailed), report.items.originalFailed ? 'num down' : 'num'],
      ['Mean original score', formatScore(report.items.meanOriginalScore)],
      ['Variants per item', formatInteger(report.variantsPerItem)],
      ['Bootstrap', report.bootstrap.resamples + ' resamples over items · ' + Math.round(report.bootstrap.confidence * 100) + '% · seed ' + report.bootstrap.seed]
    ])]),
    card('Judge', [statList(judge ? [
      ['Model', judge.model, 'mono'], ['Spec', judge.id, 'mono'], ['Template', judge.template_version, 'mono'], ['Mode', judge.mode, ''],
      ['Judge calls', formatInteger(report.usage.calls) + ' (' + formatInteger(report.usage.cache_hits) + ' cache hits)'],
      ['Tokens', formatCompact(report.usage.prompt_tokens) + ' in · ' + formatCompact(report.usage.completion_tokens) + ' out']
    ] : [['Judge', 'none', '']])])
  ]);
}

/** The table of probes (each injection kind on a row of its own under its probe) and the drift chart. */
function probesSection(report: ProbeReport): HTMLElement {
  const section = h('section', { className: 'section', attrs: { id: 'probes' } }, [sectionHead('Probes', 'drift = perturbed − original score, mean over items; intervals: paired bootstrap over items · "!" marks a weakness')]);
  const rows: Array<{ name: string; kind: ProbeResult['kind']; summary: ProbeSummary; assessment: string; flagged: boolean; result: ProbeResult; child: boolean }> = [];
  report.probes.forEach(function (result) {
    rows.push({ name: result.probe, kind: result.kind, summary: result, assessment: result.assessment, flagged: result.flagged, result: result, child: false });
    Object.keys(result.byVariant || {}).forEach(function (variant) {
      const summary = result.byVariant![variant];
      rows.push({ name: variant, kind: result.kind, summary: summary, assessment: summary.assessment, flagged: summary.flagged, result: result, child: true });
    });
  });
  const body = h('tbody', null, rows.map(function (row) {
    const drift = row.summary.drift;
    return h('tr', { data: { probe: row.name, flagged: row.flagged ? '1' : '0' } }, [
      h('td', { style: row.child ? { 'padding-left': '26px' } : {} }, [h('span', { className: row.child ? 'muted' : '', text: row.name }), row.flagged ? h('span', { className: 'probe-flag', text: ' !', title: 'a weakness' }) : null]),
      h('td', { text: row.child ? '' : row.kind }),
      h('td', { className: 'num', text: formatSigned(drift.mean, 4), data: { testid: 'probe-drift' } }),
      h('td', { className: 'num', text: drift.interval ? formatSigned(drift.interval.lower, 4) + ' … ' + formatSigned(drift.interval.upper, 4) : '—' }),
      h('td', { className: 'num', text: drift.rose + ' / ' + drift.fell + ' / ' + drift.unchanged }),
      h('td', { className: 'num', text: rateText(row.summary.flips.metToNotMet) }),
      h('td', { className: 'num', text: rateText(row.summary.flips.notMetToMet) }),
      h('td', { className: 'num', text: rateText(keyRate(row.kind, row.summary)) }),
      h('td', { className: row.flagged ? 'down' : '', text: row.assessment })
    ]);
  }));
  const tableCard = card(null, [h('div', { className: 'table-scroll', style: { 'max-height': 'none' } }, [h('table', { className: 'data', data: { testid: 'probe-table' } }, [
    h('thead', null, [h('tr', null, ['probe', 'kind', 'drift', Math.round(report.bootstrap.confidence * 100) + '% CI', 'up / down / same', 'met → not', 'not → met', 'key flips', 'assessment'].map(function (label, index) { return h('th', { className: index >= 2 && index <= 7 ? 'num' : '', text: label }); }))]),
    body
  ])]), h('div', { className: 'chart-note', text: 'key flips: any verdict change (spurious probes), not met → met (injection), the targeted criterion met → not met (deletion).' })]);
  section.appendChild(tableCard);
  const probes = report.probes;
  section.appendChild(card('Score drift by probe', [chartBox(Math.max(160, 56 + probes.length * 30), {
    type: 'bar',
    data: { labels: probes.map(function (result) { return result.probe; }), datasets: [{
      label: 'drift',
      data: probes.map(function (result) { return result.drift.mean; }),
      intervals: probes.map(function (result) { return intervalOf(result.drift.interval); }),
      backgroundColor: probes.map(function (result) { return result.flagged ? 'rgba(239, 68, 68, 0.75)' : COLORS.accentSoft; }),
      borderRadius: 4, barPercentage: 0.7
    }] },
    options: { indexAxis: 'y', scales: { y: { grid: { display: false } } }, plugins: { legend: { display: false } } }
  }, 'score drift by probe').element], 'probe-chart'));
  return section;
}

/** One tab per probe, showing the probe chosen. */
function probeDetailSection(report: ProbeReport): HTMLElement {
  const probes = report.probes;
  const detail = h('section', { className: 'section', attrs: { id: 'detail' } }, [sectionHead('Per probe', 'what each probe did, the criteria that flipped most and the items that moved most')]);
  const holder = h('div');
  if (probes.length > 0) {
    detail.appendChild(tabs(probes.map(function (result) { return { value: result.probe, label: result.probe }; }), probes[0].probe, function (name) { drawProbeDetail(holder, probes.filter(function (result) { return result.probe === name; })[0]); }));
    detail.appendChild(holder);
    drawProbeDetail(holder, probes[0]);
  }
  return detail;
}

/** A probe's perturbation and assessment, the criteria that flipped most and the items that moved most. */
function drawProbeDetail(holder: HTMLElement, result: ProbeResult): void {
  holder.textContent = '';
  const criteria = h('table', { className: 'data' }, [
    h('thead', null, [h('tr', null, ['criterion', 'eligible', 'flips', 'rate'].map(function (label, index) { return h('th', { className: index ? 'num' : '', text: label }); }))]),
    h('tbody', null, result.byCriterion.slice(0, 100).map(function (row) {
      return h('tr', null, [h('td', { className: 'clamp', text: row.text, title: row.text }), h('td', { className: 'num', text: formatInteger(row.eligible) }), h('td', { className: 'num', text: formatInteger(row.flips) }), h('td', { className: 'num', text: formatScore(row.rate) })]);
    }))
  ]);
  const moved = result.perItem.slice().sort(function (left, right) { return Math.abs(right.drift ?? 0) - Math.abs(left.drift ?? 0); }).slice(0, 100);
  const items = h('table', { className: 'data', data: { testid: 'probe-items' } }, [
    h('thead', null, [h('tr', null, ['item', 'original', 'perturbed', 'drift', 'variants'].map(function (label, index) { return h('th', { className: index ? 'num' : '', text: label }); }))]),
    h('tbody', null, moved.map(function (row) {
      return h('tr', null, [h('td', { className: 'mono', text: truncate(row.id, 48), title: row.id }), h('td', { className: 'num', text: formatScore(row.original) }), h('td', { className: 'num', text: formatScore(row.perturbed) }), h('td', { className: 'num ' + (isNumber(row.drift) && row.drift > 0 ? 'up' : isNumber(row.drift) && row.drift < 0 ? 'down' : ''), text: formatSigned(row.drift) }), h('td', { className: 'num', text: row.variants + (row.failed ? ' (' + row.failed + ' failed)' : '') })]);
    }))
  ]);
  holder.appendChild(card(null, [statList([
    ['Perturbation', result.description, ''], ['Expected', result.expected, ''], ['Assessment', result.assessment + (result.flagged ? ' — a weakness' : ''), result.flagged ? 'down' : ''],
    ['Variants graded', formatInteger(result.variants.graded) + (result.variants.failed ? ' (' + formatInteger(result.variants.failed) + ' failed, left out)' : '')],
    isNumber(result.unmatchedCriteria) ? ['Criteria not probed (no matching sentence)', formatInteger(result.unmatchedCriteria)] : null
  ])]));
  const grid = h('div', { className: 'grid-2', style: { 'margin-top': '16px' } }, [
    card('Criteria that flipped most', [result.byCriterion.length ? h('div', { className: 'table-scroll' }, [criteria]) : h('div', { className: 'callout info', text: 'No criterion flipped.' })]),
    card('Items that moved most', [moved.length ? h('div', { className: 'table-scroll' }, [items]) : h('div', { className: 'callout info', text: 'No item was graded.' })])
  ]);
  holder.appendChild(grid);
}
