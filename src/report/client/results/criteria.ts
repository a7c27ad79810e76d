/**
 * Every criterion of the run in one sortable table (pass rate, times it cost points, points lost,
 * items, errors), grouped by criterion text as the "cost the most" chart groups them, and a
 * drawer that drills into one criterion: its verdict, explanation and review in every item that
 * carries it, each a click away from that item's own drawer.
 */
import { rubricateCriterionMet, rubricateDecodeItem, rubricateTags } from '../decode.js';
import { COLORS, formatInteger, formatPercent, formatPoints, formatScore, h, plural, tabs, truncate } from '../common.js';
import { createDrawer, type Drawer, type DrawerContent } from '../drawer.js';
import { createExplorer, type Explorer, type ExplorerColumn } from '../explorer.js';
import type { RunData, RunTexts } from '../../types.js';
import type { TextStore } from '../text-store.js';
import { criterionOutcome } from './drawer.js';
import { disagrees, type ReviewStore } from './review.js';

/** One criterion text of the run and where it occurs. */
export interface CriterionGroup {
  /** String-table index of the text. */
  text: number;
  /** The id of its first occurrence (made unique among groups for the drawer's deep link). */
  key: string;
  points: number;
  /** Criterion positions in the run's columns, and the item of each. */
  positions: number[];
  items: number[];
  graded: number;
  met: number;
  /** Graded occurrences that cost points (a positive criterion not met, a penalty met). */
  failed: number;
  pointsLost: number;
  errors: number;
  skipped: number;
  /** 1 judge, 2 check, 3 both. */
  sources: number;
  tags: string[];
}

export function criterionGroups(run: RunData): CriterionGroup[] {
  const byText = new Map<number, CriterionGroup>();
  const groups: CriterionGroup[] = [];
  const usedKeys = new Set<string>();
  const items = run.items, criteria = run.criteria;
  for (let item = 0; item < items.ids.length; item += 1) {
    for (let position = items.criteriaOffsets[item]; position < items.criteriaOffsets[item + 1]; position += 1) {
      const text = criteria.texts[position];
      let group = byText.get(text);
      if (!group) {
        let key = run.strings[criteria.ids[position]];
        for (let suffix = 2; usedKeys.has(key); suffix += 1) key = run.strings[criteria.ids[position]] + '~' + suffix;
        usedKeys.add(key);
        group = { text: text, key: key, points: criteria.points[position], positions: [], items: [], graded: 0, met: 0, failed: 0, pointsLost: 0, errors: 0, skipped: 0, sources: 0, tags: rubricateTags(run, criteria.tagSets[position]) };
        byText.set(text, group);
        groups.push(group);
      }
      group.positions.push(position);
      group.items.push(item);
      const flags = criteria.flags[position];
      group.sources |= (flags >> 4) & 1 ? 2 : 1;
      const status = flags & 3;
      if (status === 1) { group.errors += 1; continue; }
      if (status === 2) { group.skipped += 1; continue; }
      const met = rubricateCriterionMet(flags);
      if (met === null) continue;
      group.graded += 1;
      if (met) group.met += 1;
      if (criteria.points[position] < 0 ? met : !met) { group.failed += 1; group.pointsLost += Math.abs(criteria.points[position]); }
    }
  }
  // Most points lost first, as the chart above the table ranks them.
  return groups.sort(function (left, right) { return right.pointsLost - left.pointsLost || right.failed - left.failed || left.positions[0] - right.positions[0]; });
}

function sourceName(sources: number): string { return sources === 3 ? 'mixed' : sources === 2 ? 'check' : 'judge'; }

type GroupFilter = '' | 'cost' | 'errors';

/** The table of every criterion; openGroup opens a criterion's drawer. */
export function createCriteriaTable(run: RunData, groups: CriterionGroup[], reviews: ReviewStore): Explorer & { filterText(text: string): void } {
  const state = { filter: '' as GroupFilter, source: '' };
  const filterSelect = h('select', { className: 'select', attrs: { 'aria-label': 'Filter criteria' } }, [['', 'All criteria'], ['cost', 'Cost points'], ['errors', 'With errors']].map(function (option) { return h('option', { text: option[1], attrs: { value: option[0] } }); }));
  filterSelect.addEventListener('change', function () { state.filter = filterSelect.value as GroupFilter; explorer.refresh(true); });
  const sourceSelect = h('select', { className: 'select', attrs: { 'aria-label': 'Filter by source' } }, [['', 'Judge and checks'], ['judge', 'LLM judge'], ['check', 'Checks']].map(function (option) { return h('option', { text: option[1], attrs: { value: option[0] } }); }));
  sourceSelect.addEventListener('change', function () { state.source = sourceSelect.value; explorer.refresh(true); });
  const searchInput: { value: HTMLInputElement | null } = { value: null };
  const explorer = createExplorer({
    section: { id: 'criteria', title: 'Criteria', hint: 'every criterion of the run, most points lost first · click one to see its verdict in each item' },
    noun: 'criterion',
    nounPlural: 'criteria',
    rows: groups.length,
    columns: criteriaColumns(run, groups, reviews),
    rowData: function (index) { return { index: index, criterionKey: groups[index].key }; },
    highestFirst: true,
    search: {
      placeholder: 'Search criterion texts, ids and tags',
      keys: function (index) { return run.strings[groups[index].text] + ' ' + groups[index].key + ' ' + groups[index].tags.join(' '); }
    },
    controls: [filterSelect, sourceSelect],
    filters: function () {
      const filters: Array<(index: number) => boolean> = [];
      if (state.filter === 'cost' && !reviews.blind) filters.push(function (index) { return groups[index].failed > 0; });
      if (state.filter === 'errors') filters.push(function (index) { return groups[index].errors > 0; });
      if (state.source) filters.push(function (index) { return (groups[index].sources & (state.source === 'check' ? 2 : 1)) !== 0; });
      return filters;
    },
    textsComplete: function () { return true; },
    counter: { attribute: 'data-criteria-filtered', testid: 'criteria-count' },
    // Most points lost first would tell which criteria fail: blind review lists them as the run first has them.
    baseOrder: function (rows) { return reviews.blind ? rows.slice().sort(function (left, right) { return groups[left].positions[0] - groups[right].positions[0]; }) : rows; },
    export: {
      name: run.summary.label.replace(/\.[^.]+$/, '') + '-criteria',
      columns: function () { return ['criterion', 'id', 'points', 'items', 'graded', 'met', 'cost_points', 'pass_rate', 'points_lost', 'errors', 'skipped', 'source', 'tags']; },
      row: function (index) {
        const group = groups[index];
        const shown = function (value: number | null): number | null { return shownUnlessBlind(reviews, value); };
        return { criterion: run.strings[group.text], id: group.key, points: group.points, items: group.positions.length, graded: group.graded, met: shown(group.met), cost_points: shown(group.failed), pass_rate: shown(passRate(group)), points_lost: shown(group.pointsLost), errors: group.errors, skipped: group.skipped, source: sourceName(group.sources), tags: group.tags.join(' ') };
      }
    }
  });
  searchInput.value = explorer.element.querySelector('input[type="search"]');
  return Object.assign(explorer, {
    // The chart's bars are truncated texts: a click finds the criterion in the table by its full text.
    filterText: function (text: string) {
      const input = searchInput.value;
      if (!input) return;
      input.value = text;
      input.dispatchEvent(new Event('input'));
      explorer.element.scrollIntoView({ behavior: 'smooth', block: 'start' });
    }
  });
}

function passRate(group: CriterionGroup): number | null { return group.graded ? (group.graded - group.failed) / group.graded : null; }

/** Blind review: a criterion's pass rate, points lost and times it cost points are made of verdicts not yet reviewed. */
function shownUnlessBlind(reviews: ReviewStore, value: number | null): number | null { return reviews.blind ? null : value; }

function hiddenCell(): HTMLElement { return h('div', { className: 'right faint', text: 'hidden', title: 'blind review: turn blind off to see the figures of every criterion' }); }

/** The table's columns: text, points, items, then the verdict figures (hidden in blind review), errors and source. */
function criteriaColumns(run: RunData, groups: CriterionGroup[], reviews: ReviewStore): ExplorerColumn[] {
  const shown = function (value: number | null): number | null { return shownUnlessBlind(reviews, value); };
  return [{
    key: 'text', label: 'Criterion', width: 'minmax(220px, 6fr)',
    sortText: function (index) { return run.strings[groups[index].text]; },
    cell: function (index) { const text = run.strings[groups[index].text]; return h('div', { text: text, title: text }); }
  }, {
    key: 'points', label: 'Points', width: '64px', right: true,
    sortNumber: function (index) { return groups[index].points; },
    cell: function (index) { return h('div', { className: 'right num ' + (groups[index].points < 0 ? 'down' : 'up'), text: formatPoints(groups[index].points) }); }
  }, {
    key: 'items', label: 'Items', width: '64px', right: true,
    sortNumber: function (index) { return groups[index].positions.length; },
    cell: function (index) { return h('div', { className: 'right num', text: formatInteger(groups[index].positions.length) }); }
  }, {
    key: 'pass', label: 'Pass rate', width: '120px', right: true,
    sortNumber: function (index) { return shown(passRate(groups[index])); },
    cell: function (index) {
      if (reviews.blind) return hiddenCell();
      const rate = passRate(groups[index]);
      return h('div', { className: 'score-cell num' }, [h('span', { text: formatPercent(rate) }), h('div', { className: 'score-bar' }, [h('span', { style: { width: (rate === null ? 0 : rate * 100) + '%', background: COLORS.good } })])]);
    }
  }, {
    key: 'failed', label: 'Cost points', width: '90px', right: true,
    sortNumber: function (index) { return shown(groups[index].failed); },
    cell: function (index) { return reviews.blind ? hiddenCell() : h('div', { className: 'right num', text: formatInteger(groups[index].failed) }); }
  }, {
    key: 'lost', label: 'Points lost', width: '90px', right: true,
    sortNumber: function (index) { return shown(groups[index].pointsLost); },
    cell: function (index) { return reviews.blind ? hiddenCell() : h('div', { className: 'right num', text: formatScore(groups[index].pointsLost, Number.isInteger(groups[index].pointsLost) ? 0 : 2) }); }
  }, {
    key: 'errors', label: 'Errors', width: '64px', right: true,
    sortNumber: function (index) { return groups[index].errors; },
    cell: function (index) { const errors = groups[index].errors; return h('div', { className: 'right num' + (errors ? '' : ' faint'), text: formatInteger(errors) }); }
  }, {
    key: 'source', label: 'Source', width: '70px', narrowHidden: true,
    sortText: function (index) { return sourceName(groups[index].sources); },
    cell: function (index) { return h('div', { className: 'hide-narrow' }, [h('span', { className: 'chip', text: sourceName(groups[index].sources) })]); }
  }];
}

type OccurrenceFilter = 'all' | 'cost' | 'met' | 'errors' | 'unreviewed' | 'disagree';
const occurrenceFilter = { value: 'all' as OccurrenceFilter };
/** Occurrences drawn at once in the criterion drawer (the filter narrows the rest). */
const occurrencesShown = 300;

/** What the criterion drawer reads; `openItem` closes it and opens an item's own drawer. */
interface CriterionDrawerState {
  run: RunData;
  groups: CriterionGroup[];
  textStore: TextStore<RunTexts>;
  reviews: ReviewStore;
  openItem(item: number): void;
}

/** The drawer of one criterion across items; openItem opens an item's own drawer. */
export function createCriterionDrawer(run: RunData, groups: CriterionGroup[], table: Explorer, textStore: TextStore<RunTexts>, reviews: ReviewStore, openItem: (index: number) => void): Drawer {
  const state: CriterionDrawerState = { run: run, groups: groups, textStore: textStore, reviews: reviews, openItem: function (item) { drawer.close(); openItem(item); } };
  const drawer: Drawer = createDrawer({
    explorer: table,
    noun: 'criterion',
    testid: 'criterion-drawer',
    hashKey: 'criterion',
    ids: groups.map(function (group) { return group.key; }),
    render: function (index) { return renderCriterion(state, index); },
    load: function (index, done) {
      const pending: Array<Promise<unknown>> = [];
      const seen = new Set<number>();
      groups[index].items.slice(0, occurrencesShown).forEach(function (item) {
        const chunk = Math.floor(item / run.textChunkSize);
        if (seen.has(chunk) || textStore.chunkFor(0, item)) return;
        seen.add(chunk);
        pending.push(textStore.loadFor(0, item));
      });
      if (pending.length) Promise.all(pending).then(done);
    }
  });
  return drawer;
}

/** Every criterion of the item is reviewed (blind review then shows its score). */
function itemReviewed(state: CriterionDrawerState, item: number): boolean {
  const run = state.run;
  for (let position = run.items.criteriaOffsets[item]; position < run.items.criteriaOffsets[item + 1]; position += 1) {
    if (!state.reviews.get(run.items.ids[item], run.strings[run.criteria.ids[position]])) return false;
  }
  return true;
}

function renderCriterion(state: CriterionDrawerState, index: number): DrawerContent {
  const run = state.run;
  const group = state.groups[index];
  const rate = group.graded ? (group.graded - group.failed) / group.graded : null;
  const list = h('div', { data: { testid: 'occurrences' } });
  const counter = h('span', { className: 'num faint' });
  // Blind review: no filter by verdict (it would tell the verdicts), no pass rate.
  const blind = state.reviews.blind;
  const allOptions: Array<{ value: OccurrenceFilter; label: string }> = [{ value: 'all', label: 'All' }, { value: 'cost', label: 'Cost points' }, { value: 'met', label: 'Met' }, { value: 'errors', label: 'Errors' }, { value: 'unreviewed', label: 'Unreviewed' }, { value: 'disagree', label: 'I disagree' }];
  const options = allOptions.filter(function (option) { return !blind || (option.value !== 'cost' && option.value !== 'met'); });
  if (blind && (occurrenceFilter.value === 'cost' || occurrenceFilter.value === 'met')) occurrenceFilter.value = 'all';
  drawOccurrences(state, group, blind, list, counter);
  const body = h('div', { className: 'pair-drawer-body' }, [
    h('div', { className: 'criterion-text', style: { 'font-size': '15px', 'margin-bottom': '10px' }, text: run.strings[group.text] }),
    h('div', { className: 'chips', style: { 'margin-bottom': '12px' } }, group.tags.map(function (tag) { return h('span', { className: 'chip', text: tag, title: tag }); })),
    h('div', { className: 'criteria-filter' }, [tabs(options, occurrenceFilter.value, function (value) { occurrenceFilter.value = value; drawOccurrences(state, group, blind, list, counter); }), counter]),
    list
  ]);
  return {
    attributes: { 'data-criterion-key': group.key },
    meta: [h('span', { className: 'chip', text: sourceName(group.sources) }), h('span', { className: 'num', text: formatPoints(group.points) + ' points' }), h('span', { className: 'num', text: plural(group.positions.length, 'item') + ' · ' + formatInteger(group.errors) + ' errors' })],
    summary: blind
      ? h('div', { className: 'drawer-score' }, [h('div', { className: 'faint', text: 'pass rate' }), h('div', { className: 'value num', text: 'hidden', title: 'blind review: turn blind off to see it', data: { testid: 'criterion-pass-rate' } })])
      : h('div', { className: 'drawer-score' }, [h('div', { className: 'faint', text: 'pass rate' }), h('div', { className: 'value num', text: formatPercent(rate), data: { testid: 'criterion-pass-rate' } }), h('div', { className: 'num muted', text: formatInteger(group.failed) + ' cost points · ' + truncate(formatScore(group.pointsLost, Number.isInteger(group.pointsLost) ? 0 : 2), 12) + ' lost' })]),
    body: body
  };
}

/** The criterion's occurrences the filter keeps (the first `occurrencesShown` drawn), and the count line; `blind`: blind review as the drawer was drawn. */
function drawOccurrences(state: CriterionDrawerState, group: CriterionGroup, blind: boolean, list: HTMLElement, counter: HTMLElement): void {
  const run = state.run, reviews = state.reviews;
  list.textContent = '';
  let listed = 0, drawn = 0;
  group.positions.forEach(function (position, offset) {
    const item = group.items[offset];
    const flags = run.criteria.flags[position];
    const met = (flags & 3) === 0 ? rubricateCriterionMet(flags) : null;
    const criterionId = run.strings[run.criteria.ids[position]];
    const review = reviews.get(run.items.ids[item], criterionId);
    const outcome = criterionOutcome({ status: (['ok', 'error', 'skipped'] as const)[flags & 3], met: met, points: run.criteria.points[position] });
    const keep = occurrenceFilter.value === 'all' ? true
      : occurrenceFilter.value === 'cost' ? outcome.className === 'fail'
      : occurrenceFilter.value === 'met' ? met === true
      : occurrenceFilter.value === 'errors' ? (flags & 3) === 1
      : occurrenceFilter.value === 'unreviewed' ? !review
      : disagrees(review, met);
    if (!keep) return;
    listed += 1;
    if (drawn >= occurrencesShown) return;
    drawn += 1;
    const chunk = state.textStore.chunkFor(0, item);
    const concealed = reviews.blind && !review;
    const decoded = chunk ? rubricateDecodeItem(run, chunk, item).criteria[position - run.items.criteriaOffsets[item]] : null;
    list.appendChild(h('div', { className: 'occurrence', data: { itemId: run.items.ids[item], verdict: concealed ? 'hidden' : outcome.key } }, [
      h('button', { className: 'link-button mono', text: run.items.ids[item], attrs: { type: 'button', title: 'open the item' }, on: { click: function () { state.openItem(item); } } }),
      h('span', { className: 'verdict ' + (concealed ? 'ghost' : outcome.className), text: concealed ? 'hidden' : outcome.label }),
      review ? h('span', { className: 'chip', text: 'you: ' + review.answer.replace('_', ' ') }) : null,
      blind && !itemReviewed(state, item) ? null : h('span', { className: 'num faint', text: 'item score ' + formatScore(run.items.scores[item]) }),
      decoded && decoded.explanation && !concealed ? h('div', { className: 'explanation', text: decoded.explanation }) : null,
      decoded && decoded.error ? h('div', { className: 'explanation', text: decoded.error.code + ': ' + decoded.error.message }) : null
    ]));
  });
  counter.textContent = (listed > drawn ? 'showing ' + drawn + ' of ' : '') + plural(listed, 'item');
  if (listed === 0) list.appendChild(h('div', { className: 'callout info', text: 'No item matches the filter.' }));
}
