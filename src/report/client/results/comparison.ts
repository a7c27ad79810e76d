/**
 * The results view's comparison with a baseline run: paired differences by tag (a forest
 * plot), the items whose score changed most, and the criteria whose verdicts flipped.
 */
import { COLORS, formatInteger, formatPoints, formatScore, formatSigned, formatSignedInterval, h, isNumber, sectionHead, tabs, tagNameOf, truncate } from '../common.js';
import type { ComparisonSummary, PairedDifference } from '../../types.js';
import { tagGroups } from './common.js';

/** The comparison with the baseline; openItem opens an item's drawer, listFlips lists the items where a criterion's verdict flipped. */
export function comparisonSection(comparison: ComparisonSummary, openItem: (index: number) => void, listFlips: (criterionText: string) => void): HTMLElement {
  const section = h('section', { className: 'section', attrs: { id: 'comparison' } }, [sectionHead('Compared with ' + comparison.baselineLabel, 'Δ = ' + comparison.runLabel + ' − ' + comparison.baselineLabel + ' over items matched by id · paired bootstrap, ' + comparison.bootstrap.samples + ' resamples, seed ' + comparison.bootstrap.seed)]);
  section.appendChild(forestCard(comparison));
  const grid = h('div', { className: 'grid-2', style: { 'margin-top': '16px' } });
  grid.appendChild(changedCard(comparison, openItem));
  grid.appendChild(flipsCard(comparison, listFlips));
  section.appendChild(grid);
  return section;
}

function forestCard(comparison: ComparisonSummary): HTMLElement {
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

function changedCard(comparison: ComparisonSummary, openItem: (index: number) => void): HTMLElement {
  const container = h('section', { className: 'card', data: { testid: 'changed-items' } }, [h('div', { className: 'card-head' }, [h('h3', { text: 'Items that changed most' })])]);
  if (comparison.changedItems.length === 0) { container.appendChild(h('div', { className: 'callout info', text: 'No matched item changed score.' })); return container; }
  const body = h('tbody');
  comparison.changedItems.forEach(function (item) {
    body.appendChild(h('tr', { className: 'clickable', on: { click: function () { openItem(item.runIndex); } } }, [
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

function flipsCard(comparison: ComparisonSummary, listFlips: (criterionText: string) => void): HTMLElement {
  const flips = comparison.flips;
  const container = h('section', { className: 'card', data: { testid: 'flips' } }, [h('div', { className: 'card-head' }, [h('h3', { text: 'Criterion verdict flips' }), h('span', { className: 'hint faint num', text: formatInteger(flips.metToNotMet) + ' met → not met · ' + formatInteger(flips.notMetToMet) + ' not met → met · of ' + formatInteger(flips.compared) })])]);
  if (flips.criteria.length === 0) { container.appendChild(h('div', { className: 'callout info', text: 'No verdict flipped between the runs.' })); return container; }
  const body = h('tbody');
  flips.criteria.forEach(function (row) {
    body.appendChild(h('tr', { className: 'clickable', on: { click: function () { listFlips(row.text); } } }, [
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
