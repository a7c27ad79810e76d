/**
 * The results view's item explorer: the shared explorer over the run's items, with score,
 * baseline and Δ (when comparing), criteria passed, status, the prompt and response (once their
 * texts are decoded) and tags columns, and filters by tag, by a criterion that cost points or
 * flipped, by changed score, and by review (unreviewed, disagreed, judge errors, labels that
 * disagree); the rows shown export as CSV or JSON.
 */
import { rubricateCriterionMet, rubricateTags } from '../decode.js';
import { COLORS, formatScore, formatSigned, h, isNumber, truncate } from '../common.js';
import { createExplorer, idColumn, statusColumn, type Explorer, type ExplorerColumn } from '../explorer.js';
import type { RunData, RunTexts } from '../../types.js';
import type { LabelLookup, ResultsContext } from './common.js';
import { disagrees, type ReviewStore } from './review.js';

export interface ItemExplorer extends Explorer {
  /** Lists the items where the criterion with this text cost points (or, flipped, changed verdict from the baseline). */
  filterByCriterion(text: string, flipped?: boolean): void;
  /** Adds a decoded text chunk of the run to the search. */
  addChunk(chunk: RunTexts | null): void;
  /** Sets the review filter (the labels section lists the disagreements with it). */
  filterByReview(filter: 'labels' | 'disagree' | 'unreviewed' | 'judge-error'): void;
}

/** Per item: criteria that earned, cost points, errored, in all (the criteria passed column). */
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

/** What the search matches in a chunk: each item's response and the prompt's message texts. */
function searchTexts(chunk: RunTexts): string[] {
  const texts: string[] = [];
  for (let local = 0; local < chunk.responses.length; local += 1) {
    const parts: string[] = [];
    if (chunk.responses[local] >= 0) parts.push(chunk.strings[chunk.responses[local]]);
    const prompt = chunk.prompts[local] || [];
    for (let turn = 1; turn < prompt.length; turn += 2) parts.push(chunk.strings[prompt[turn]]);
    texts.push(parts.join('\n'));
  }
  return texts;
}

/** The last user message of an item (the question a response answers), or its last message. */
function lastPrompt(chunk: RunTexts, local: number): string | null {
  const prompt = chunk.prompts[local] || [];
  for (let turn = prompt.length - 2; turn >= 0; turn -= 2) if (chunk.strings[prompt[turn]] === 'user') return chunk.strings[prompt[turn + 1]];
  return prompt.length >= 2 ? chunk.strings[prompt[prompt.length - 1]] : null;
}

/** A table cell's one line of a long text. */
function snippet(text: string): string {
  return truncate(text.replace(/\s+/g, ' ').trim(), 160);
}

type ReviewFilter = '' | 'unreviewed' | 'disagree' | 'judge-error' | 'labels';

/** What the item explorer reads and the filters the reader set; `refresh` lists the items again. */
interface ItemExplorerState {
  context: ResultsContext;
  counts: ReturnType<typeof criterionCounts>;
  matchIndex: NonNullable<ResultsContext['comparison']>['matchIndex'] | null;
  reviews: ReviewStore;
  labels: LabelLookup | null;
  filter: { tag: string; criterionRef: number; criterionLabel: string; criterionFlipped: boolean; changedOnly: boolean; review: ReviewFilter };
  /** Filled as text chunks are decoded: the prompt and response of each item, in full (cells show a line of each). */
  prompts: Array<string | null | undefined>;
  responses: Array<string | null | undefined>;
  /** Where the criterion filter's chip shows. */
  chipHolder: HTMLElement;
  refresh(resetScroll: boolean): void;
}

export function createItemExplorer(context: ResultsContext, textsComplete: () => boolean, reviews: ReviewStore, labels: LabelLookup | null): ItemExplorer {
  const run = context.run, comparison = context.comparison;
  const items = run.items;
  const state: ItemExplorerState = {
    context: context,
    counts: criterionCounts(run),
    matchIndex: comparison ? comparison.matchIndex : null,
    reviews: reviews,
    labels: labels,
    filter: { tag: '', criterionRef: -1, criterionLabel: '', criterionFlipped: false, changedOnly: false, review: '' },
    prompts: new Array<string | null | undefined>(items.ids.length),
    responses: new Array<string | null | undefined>(items.ids.length),
    chipHolder: h('div'),
    refresh: function (resetScroll) { explorer.refresh(resetScroll); }
  };
  const columns = itemColumns(state);
  const reviewFilterSelect = reviewSelect(state);
  const controls: Node[] = [tagSelect(state), reviewFilterSelect, state.chipHolder];
  if (comparison) {
    const changedBox = h('input', { attrs: { type: 'checkbox' } });
    changedBox.addEventListener('change', function () { state.filter.changedOnly = changedBox.checked; explorer.refresh(true); });
    controls.push(h('label', { className: 'toggle' }, [changedBox, 'changed score only']));
  }

  const explorer = createExplorer({
    section: { id: 'items', title: 'Items', hint: 'click an item to see the conversation and every verdict' },
    noun: 'item',
    nounPlural: 'items',
    rows: items.ids.length,
    columns: columns,
    rowData: function (index) { return { index: index, itemId: items.ids[index] }; },
    highestFirst: true,
    status: items.status,
    search: {
      placeholder: 'Search ids, tags, prompts and responses',
      keys: function (index) {
        const parts = [items.ids[index]];
        if (items.tagSets[index] >= 0) parts.push(rubricateTags(run, items.tagSets[index]).join(' '));
        if (items.rubricIds[index] >= 0) parts.push(run.strings[items.rubricIds[index]]);
        return parts.join(' ');
      }
    },
    controls: controls,
    filters: function () { return itemFilters(state); },
    textsComplete: textsComplete,
    export: {
      name: run.summary.label.replace(/\.[^.]+$/, '') + '-items',
      columns: function () { return itemExportColumns(Boolean(comparison)); },
      row: function (index) { return itemExportRow(state, index); }
    }
  });
  reviews.onChange(function () { if (state.filter.review) explorer.refresh(false); });

  return Object.assign(explorer, {
    filterByCriterion: function (text: string, flipped?: boolean) {
      state.filter.criterionRef = run.strings.indexOf(text);
      state.filter.criterionLabel = text;
      state.filter.criterionFlipped = Boolean(flipped);
      renderChip(state);
      explorer.refresh(true);
      explorer.element.scrollIntoView({ behavior: 'smooth', block: 'start' });
    },
    filterByReview: function (filter: ReviewFilter) {
      state.filter.review = filter;
      reviewFilterSelect.value = filter;
      explorer.refresh(true);
      explorer.element.scrollIntoView({ behavior: 'smooth', block: 'start' });
    },
    // A chunk that could not be read (null) adds nothing, but the count line may change.
    addChunk: function (chunk: RunTexts | null) { addItemChunk(state, explorer, chunk); }
  });
}

/** A decoded text chunk: its prompts and responses into the table's cells and the search. */
function addItemChunk(state: ItemExplorerState, explorer: Explorer, chunk: RunTexts | null): void {
  if (chunk) {
    for (let local = 0; local < chunk.responses.length; local += 1) {
      state.prompts[chunk.firstItem + local] = lastPrompt(chunk, local);
      state.responses[chunk.firstItem + local] = chunk.responses[local] >= 0 ? chunk.strings[chunk.responses[local]] : null;
    }
  }
  explorer.addSearchTexts(chunk ? chunk.firstItem : 0, chunk ? searchTexts(chunk) : []);
  explorer.redraw();
}

function itemExportColumns(comparing: boolean): string[] {
  const columns = ['id', 'line', 'status', 'score'];
  if (comparing) columns.push('baseline_score', 'delta');
  columns.push('criteria_passed', 'criteria_failed', 'criteria_errors', 'criteria', 'tags', 'reviewed', 'disagreed', 'prompt', 'response');
  return columns;
}

function textCell(texts: Array<string | null | undefined>, what: string) {
  return function (index: number): Node {
    const text = texts[index];
    if (text === undefined) return h('div', { className: 'faint', text: '…', title: 'texts still loading' });
    if (text === null) return h('div', { className: 'faint', text: '—', title: 'no ' + what + ' in the results' });
    return h('div', { className: 'snippet hide-narrow', text: snippet(text), title: truncate(text, 600) });
  };
}

/** Blind review: an item's score, criteria passed and baseline stay out of the page until every criterion of it is reviewed. */
function concealed(state: ItemExplorerState, index: number): boolean {
  const items = state.context.run.items;
  return state.reviews.blind && reviewCounts(state, index).reviewed < items.criteriaOffsets[index + 1] - items.criteriaOffsets[index];
}

function hiddenCell(): HTMLElement {
  return h('div', { className: 'right faint', text: 'hidden', title: 'blind review: shown once every criterion of the item is reviewed', data: { testid: 'hidden-score' } });
}

/** Item, score, baseline and Δ when comparing, criteria passed, status, prompt, response and tags. */
function itemColumns(state: ItemExplorerState): ExplorerColumn[] {
  const run = state.context.run, items = run.items, counts = state.counts, matchIndex = state.matchIndex;
  const hides = function (index: number): boolean { return concealed(state, index); };
  const columns: ExplorerColumn[] = [idColumn('Item', items.ids), {
    key: 'score', label: 'Score', width: '120px', right: true,
    // Sorting by a hidden score would tell it: hidden scores sort as absent ones.
    sortNumber: function (index) { return hides(index) ? null : items.scores[index]; },
    cell: function (index) {
      if (hides(index)) return hiddenCell();
      const score = items.scores[index];
      const width = isNumber(score) ? Math.max(0, Math.min(1, score)) * 100 : 0;
      return h('div', { className: 'score-cell num' }, [h('span', { text: formatScore(score) }), h('div', { className: 'score-bar' }, [h('span', { style: { width: width + '%', background: isNumber(score) && score < 0 ? COLORS.bad : COLORS.accent } })])]);
    }
  }];
  if (state.context.comparison) {
    columns.push({
      key: 'baseline', label: 'Baseline', width: '76px', right: true,
      sortNumber: function (index) { return hides(index) ? null : baselineScore(state, index); },
      cell: function (index) { return hides(index) ? hiddenCell() : h('div', { className: 'right num muted', text: matchIndex && matchIndex[index] < 0 ? 'absent' : formatScore(baselineScore(state, index)) }); }
    }, {
      key: 'delta', label: 'Δ', width: '72px', right: true,
      sortNumber: function (index) { return hides(index) ? null : deltaOf(state, index); },
      cell: function (index) { if (hides(index)) return hiddenCell(); const delta = deltaOf(state, index); return h('div', { className: 'right num ' + (delta !== null && delta > 0 ? 'up' : delta !== null && delta < 0 ? 'down' : 'faint'), text: delta === null ? '—' : formatSigned(delta) }); }
    });
  }
  columns.push({
    key: 'passed', label: 'Criteria passed', width: '130px',
    sortNumber: function (index) { const graded = counts.passed[index] + counts.failed[index]; return graded && !hides(index) ? counts.passed[index] / graded : null; },
    cell: function (index) {
      if (hides(index)) return hiddenCell();
      const passed = counts.passed[index], failed = counts.failed[index], errors = counts.errors[index], total = counts.total[index];
      return h('div', { className: 'met-cell num' }, [
        h('div', { className: 'met-bar' }, [
          h('span', { style: { width: (passed / Math.max(1, total)) * 100 + '%', background: COLORS.good } }),
          h('span', { style: { width: (failed / Math.max(1, total)) * 100 + '%', background: COLORS.bad } }),
          h('span', { style: { width: (errors / Math.max(1, total)) * 100 + '%', background: COLORS.warn } })
        ]),
        h('span', { text: passed + '/' + total })
      ]);
    }
  }, statusColumn(items.status), {
    key: 'prompt', label: 'Prompt', width: 'minmax(120px, 3fr)', narrowHidden: true,
    cell: textCell(state.prompts, 'prompt')
  }, {
    key: 'response', label: 'Response', width: 'minmax(120px, 3fr)', narrowHidden: true,
    cell: textCell(state.responses, 'response')
  }, {
    key: 'tags', label: 'Tags', width: 'minmax(90px, 1.4fr)', narrowHidden: true,
    cell: function (index) {
      const tagCell = h('div', { className: 'hide-narrow' });
      const tags = rubricateTags(run, items.tagSets[index]);
      tags.slice(0, 3).forEach(function (tag) { tagCell.appendChild(h('span', { className: 'chip', text: tag, title: tag })); tagCell.appendChild(document.createTextNode(' ')); });
      if (tags.length > 3) tagCell.appendChild(h('span', { className: 'faint', text: '+' + (tags.length - 3) }));
      return tagCell;
    }
  });
  return columns;
}

function itemFilters(state: ItemExplorerState): Array<(index: number) => boolean> {
  const filters: Array<(index: number) => boolean> = [];
  const matchesTag = tagMatcher(state), matchesCriterion = criterionMatcher(state);
  if (matchesTag) filters.push(matchesTag);
  if (matchesCriterion) filters.push(matchesCriterion);
  if (state.filter.changedOnly) filters.push(function (index) { const delta = deltaOf(state, index); return delta !== null && delta !== 0; });
  if (state.filter.review) filters.push(reviewMatcher(state, state.filter.review));
  return filters;
}

/** One item as the CSV and JSON export write it. */
function itemExportRow(state: ItemExplorerState, index: number): Record<string, unknown> {
  const run = state.context.run, items = run.items, counts = state.counts;
  // Blind review: the export of the rows shown leaves out what the page hides.
  const hidden = concealed(state, index);
  const row: Record<string, unknown> = { id: items.ids[index], line: items.lines[index], status: ['ok', 'error', 'invalid'][items.status[index]], score: hidden ? null : items.scores[index] };
  if (state.context.comparison) { row.baseline_score = hidden ? null : baselineScore(state, index); row.delta = hidden ? null : deltaOf(state, index); }
  const review = reviewCounts(state, index);
  row.criteria_passed = hidden ? null : counts.passed[index]; row.criteria_failed = hidden ? null : counts.failed[index]; row.criteria_errors = counts.errors[index]; row.criteria = counts.total[index];
  row.tags = rubricateTags(run, items.tagSets[index]).join(' ');
  row.reviewed = review.reviewed; row.disagreed = review.disagreed;
  row.prompt = state.prompts[index] ?? null; row.response = state.responses[index] ?? null;
  return row;
}

/** Of an item's criteria: how many are reviewed, and how many reviews disagree with the judge. */
function reviewCounts(state: ItemExplorerState, index: number): { reviewed: number; disagreed: number } {
  const run = state.context.run, items = run.items;
  let reviewed = 0, disagreed = 0;
  const id = items.ids[index];
  for (let position = items.criteriaOffsets[index]; position < items.criteriaOffsets[index + 1]; position += 1) {
    const review = state.reviews.get(id, run.strings[run.criteria.ids[position]]);
    if (!review) continue;
    reviewed += 1;
    const flags = run.criteria.flags[position];
    if (disagrees(review, (flags & 3) === 0 ? rubricateCriterionMet(flags) : null)) disagreed += 1;
  }
  return { reviewed: reviewed, disagreed: disagreed };
}

function reviewMatcher(state: ItemExplorerState, filter: ReviewFilter): (index: number) => boolean {
  const items = state.context.run.items, labels = state.labels;
  if (filter === 'unreviewed') return function (index) { return reviewCounts(state, index).reviewed < items.criteriaOffsets[index + 1] - items.criteriaOffsets[index]; };
  if (filter === 'disagree') return function (index) { return reviewCounts(state, index).disagreed > 0; };
  if (filter === 'judge-error') return function (index) { return state.counts.errors[index] > 0; };
  return function (index) {
    if (!labels) return false;
    for (let position = items.criteriaOffsets[index]; position < items.criteriaOffsets[index + 1]; position += 1) if (labels.disagrees(position)) return true;
    return false;
  };
}

function reviewSelect(state: ItemExplorerState): HTMLSelectElement {
  const options: Array<[ReviewFilter, string]> = [['', 'All verdicts'], ['unreviewed', 'Unreviewed'], ['disagree', 'I disagree'], ['judge-error', 'Judge in error']];
  if (state.labels) options.push(['labels', 'Labels disagree']);
  const select = h('select', { className: 'select', attrs: { 'aria-label': 'Filter by review' }, data: { testid: 'review-filter' } }, options.map(function (option) { return h('option', { text: option[1], attrs: { value: option[0] } }); }));
  select.addEventListener('change', function () { state.filter.review = select.value as ReviewFilter; state.refresh(true); });
  return select;
}

/** The tag menu: item tags, then criterion tags (hidden when the run has none). */
function tagSelect(state: ItemExplorerState): HTMLSelectElement {
  const run = state.context.run, items = run.items;
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
  select.addEventListener('change', function () { state.filter.tag = select.value; state.refresh(true); });
  if (itemTags.size === 0 && criterionTags.size === 0) select.style.display = 'none';
  return select;
}

/** The criterion filter's chip, with its clear button (nothing when no criterion filters the list). */
function renderChip(state: ItemExplorerState): void {
  const filter = state.filter;
  state.chipHolder.textContent = '';
  if (filter.criterionRef < 0 && !filter.criterionLabel) return;
  state.chipHolder.appendChild(h('div', { className: 'filter-chip', title: filter.criterionLabel }, [
    h('span', { text: (filter.criterionFlipped ? 'flipped: ' : 'cost points: ') + truncate(filter.criterionLabel, 60) }),
    h('button', { text: '×', attrs: { type: 'button', 'aria-label': 'clear criterion filter' }, on: { click: function () { filter.criterionRef = -1; filter.criterionLabel = ''; renderChip(state); state.refresh(true); } } })
  ]));
}

function tagMatcher(state: ItemExplorerState): ((index: number) => boolean) | null {
  const run = state.context.run, items = run.items;
  if (!state.filter.tag) return null;
  const kind = state.filter.tag.charAt(0), reference = Number(state.filter.tag.slice(1));
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

/** Items where the chosen criterion cost points, or (flipped) changed verdict from the baseline; a text the run lacks matches nothing. */
function criterionMatcher(state: ItemExplorerState): ((index: number) => boolean) | null {
  const run = state.context.run, items = run.items, filter = state.filter;
  if (filter.criterionRef < 0) return filter.criterionLabel ? function () { return false; } : null;
  const reference = filter.criterionRef;
  return function (index: number) {
    for (let position = items.criteriaOffsets[index]; position < items.criteriaOffsets[index + 1]; position += 1) {
      if (run.criteria.texts[position] !== reference) continue;
      const flags = run.criteria.flags[position];
      if ((flags & 3) !== 0) continue;
      const met = rubricateCriterionMet(flags);
      if (met === null) continue;
      if (filter.criterionFlipped) return flippedAt(state, index, position, met);
      if (run.criteria.points[position] < 0 ? met : !met) return true;
    }
    return false;
  };
}

function flippedAt(state: ItemExplorerState, index: number, position: number, met: boolean): boolean {
  const run = state.context.run, baseline = state.context.baseline, matchIndex = state.matchIndex;
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

function baselineScore(state: ItemExplorerState, index: number): number | null {
  const baseline = state.context.baseline, matchIndex = state.matchIndex;
  if (!matchIndex || matchIndex[index] < 0 || !baseline) return null;
  return baseline.items.scores[matchIndex[index]];
}

function deltaOf(state: ItemExplorerState, index: number): number | null {
  const before = baselineScore(state, index), after = state.context.run.items.scores[index];
  return isNumber(before) && isNumber(after) ? after - before : null;
}
