/**
 * The compare view's pair explorer: the shared explorer over the pairs, with the headline
 * verdict, each presentation order's verdict, the gold label and the source, and filters by
 * verdict, by source and by a verdict that differs from the gold label.
 */
import { h, tabs } from '../common.js';
import { createExplorer, idColumn, statusColumn, type Explorer, type ExplorerColumn } from '../explorer.js';
import { PAIR_VERDICT_NAMES, rubricatePairVerdict, type PairVerdictName } from '../pairwise-decode.js';
import type { CompareReportPayload, PairTexts } from '../../types.js';
import { pairVerdictPill } from './common.js';

export interface PairExplorer extends Explorer {
  /** Lists the pairs of one source (null: the pairs without one). */
  filterBySource(source: string | null): void;
  /** Adds a decoded text chunk to the search. */
  addChunk(chunk: PairTexts): void;
}

/** What the search matches in a chunk: both responses and the prompt's message texts. */
function searchTexts(chunk: PairTexts): string[] {
  const texts: string[] = [];
  for (let local = 0; local < chunk.responsesA.length; local += 1) {
    const parts: string[] = [];
    if (chunk.responsesA[local] >= 0) parts.push(chunk.strings[chunk.responsesA[local]]);
    if (chunk.responsesB[local] >= 0) parts.push(chunk.strings[chunk.responsesB[local]]);
    const prompt = chunk.prompts[local] || [];
    for (let turn = 1; turn < prompt.length; turn += 2) parts.push(chunk.strings[prompt[turn]]);
    texts.push(parts.join('\n'));
  }
  return texts;
}

/** The pair explorer's own filters: by verdict, by source (`s` + its string index), and pairs whose verdict differs from the gold label. */
interface PairFilterState {
  verdict: PairVerdictName | 'all';
  source: string;
  wrongOnly: boolean;
}

export function createPairExplorer(payload: CompareReportPayload, textsComplete: () => boolean): PairExplorer {
  const summary = payload.summary, pairs = payload.pairs, strings = payload.strings;
  const state: PairFilterState = { verdict: 'all', source: '', wrongOnly: false };
  const refresh = function () { explorer.refresh(true); };
  const controls = pairControls(payload, state, refresh);
  const sourceSelect = controls.sourceSelect;
  const explorer = createExplorer({
    section: { id: 'pairs', title: 'Pairs', hint: 'click a pair to see the conversation, both responses and each order\'s verdict' },
    noun: 'pair',
    nounPlural: 'pairs',
    rows: pairs.ids.length,
    columns: pairColumns(payload),
    rowData: function (index) { return { index: index, pairId: pairs.ids[index] }; },
    highestFirst: false,
    status: pairs.status,
    search: { placeholder: 'Search ids, sources, prompts and responses', keys: function (index) { return pairs.ids[index] + ' ' + sourceOf(payload, index); } },
    controls: controls.elements,
    filters: function () { return pairFilters(payload, state); },
    textsComplete: textsComplete,
    export: {
      name: summary.label.replace(/\.[^.]+$/, '') + '-pairs',
      columns: function () { return ['id', 'line', 'status', 'verdict', 'original_order', 'swapped_order', 'consistent', 'label', 'correct', 'source']; },
      row: function (index) { return pairExportRow(payload, index); }
    }
  });

  return Object.assign(explorer, {
    filterBySource: function (source: string | null) {
      if (!sourceSelect) return;
      const reference = source === null ? -1 : strings.indexOf(source);
      sourceSelect.value = 's' + reference;
      state.source = sourceSelect.value;
      explorer.refresh(true);
      explorer.element.scrollIntoView({ behavior: 'smooth', block: 'start' });
    },
    addChunk: function (chunk: PairTexts) { explorer.addSearchTexts(chunk.firstPair, searchTexts(chunk)); }
  });
}

function sourceOf(payload: CompareReportPayload, index: number): string { return payload.pairs.sources[index] >= 0 ? payload.strings[payload.pairs.sources[index]] : ''; }

function verdictColumn(key: string, label: string, width: string, codes: number[], testid?: string): ExplorerColumn {
  return {
    key: key, label: label, width: width,
    sortNumber: function (index) { return codes[index]; },
    cell: function (index) { return h('div', null, [pairVerdictPill(rubricatePairVerdict(codes[index]), testid)]); }
  };
}

/** The pair, its verdicts (the swapped order's when some pair was judged both ways), the gold label and the source when there are any, and the status. */
function pairColumns(payload: CompareReportPayload): ExplorerColumn[] {
  const summary = payload.summary, pairs = payload.pairs;
  const columns: ExplorerColumn[] = [idColumn('Pair', pairs.ids), verdictColumn('winner', 'Verdict', '130px', pairs.winners, 'row-winner'), verdictColumn('original', 'A shown first', '120px', pairs.originalOrder)];
  if (summary.swappedPairs > 0) columns.push(verdictColumn('swapped', 'B shown first', '120px', pairs.swappedOrder));
  if (summary.labelledPairs > 0) {
    columns.push({
      key: 'label', label: 'Gold', width: '96px',
      sortNumber: function (index) { return pairs.labels[index] < 0 ? NaN : pairs.correct[index] * 10 + pairs.labels[index]; },
      cell: function (index) {
        const label = pairs.labels[index];
        return h('div', { className: 'num' }, label < 0 ? [h('span', { className: 'faint', text: '—' })] : [
          h('span', { text: PAIR_VERDICT_NAMES[label] + ' ' }),
          pairs.correct[index] === 1 ? h('span', { className: 'up', text: '✓', title: 'the verdict matches the label' }) : pairs.correct[index] === 0 ? h('span', { className: 'down', text: '✗', title: 'the verdict differs from the label' }) : h('span', { className: 'faint', text: '?' })
        ]);
      }
    });
  }
  if (summary.sources.length > 0) {
    columns.push({
      key: 'source', label: 'Source', width: 'minmax(100px, 1.3fr)', narrowHidden: true,
      sortText: function (index) { return sourceOf(payload, index); },
      cell: function (index) { return h('div', { className: 'hide-narrow muted', text: sourceOf(payload, index), title: pairs.sources[index] >= 0 ? sourceOf(payload, index) : undefined }); }
    });
  }
  columns.push(statusColumn(pairs.status));
  return columns;
}

/** The verdict tabs, the source menu (with sources) and the "wrong vs gold" box (with labels); each change refreshes the list. */
function pairControls(payload: CompareReportPayload, state: PairFilterState, refresh: () => void): { elements: Node[]; sourceSelect: HTMLSelectElement | null } {
  const summary = payload.summary, pairs = payload.pairs, strings = payload.strings;
  const elements: Node[] = [tabs([{ value: 'all', label: 'Any verdict' }, { value: 'A', label: 'A better' }, { value: 'B', label: 'B better' }, { value: 'tie', label: 'Tie' }, { value: 'inconsistent', label: 'Inconsistent' }], 'all', function (value) { state.verdict = value; refresh(); })];
  let sourceSelect: HTMLSelectElement | null = null;
  if (summary.sources.length > 0) {
    const select = (sourceSelect = h('select', { className: 'select', attrs: { 'aria-label': 'Filter by source' } }, [h('option', { text: 'All sources', attrs: { value: '' } })]));
    const sourceRefs: Record<number, boolean> = {};
    pairs.sources.forEach(function (reference) { sourceRefs[reference] = true; });
    Object.keys(sourceRefs).map(Number).sort(function (a, b) { return a < 0 ? 1 : b < 0 ? -1 : strings[a] < strings[b] ? -1 : 1; }).forEach(function (reference) {
      select.appendChild(h('option', { text: reference < 0 ? '(no source)' : strings[reference], attrs: { value: 's' + reference } }));
    });
    select.addEventListener('change', function () { state.source = select.value; refresh(); });
    elements.push(select);
  }
  if (summary.labelledPairs > 0) {
    const wrongBox = h('input', { attrs: { type: 'checkbox' } });
    wrongBox.addEventListener('change', function () { state.wrongOnly = wrongBox.checked; refresh(); });
    elements.push(h('label', { className: 'toggle' }, [wrongBox, 'wrong vs gold only']));
  }
  return { elements: elements, sourceSelect: sourceSelect };
}

function pairFilters(payload: CompareReportPayload, state: PairFilterState): Array<(index: number) => boolean> {
  const pairs = payload.pairs;
  const filters: Array<(index: number) => boolean> = [];
  if (state.verdict !== 'all') {
    const verdictCode = PAIR_VERDICT_NAMES.indexOf(state.verdict);
    filters.push(function (index) { return pairs.winners[index] === verdictCode; });
  }
  if (state.source) {
    const sourceReference = Number(state.source.slice(1));
    filters.push(function (index) { return pairs.sources[index] === sourceReference; });
  }
  if (state.wrongOnly) filters.push(function (index) { return pairs.labels[index] >= 0 && pairs.correct[index] === 0; });
  return filters;
}

/** One pair as the CSV and JSON export write it. */
function pairExportRow(payload: CompareReportPayload, index: number): Record<string, unknown> {
  const pairs = payload.pairs;
  const flag = function (value: number) { return value < 0 ? null : value === 1; };
  return {
    id: pairs.ids[index], line: pairs.lines[index], status: ['ok', 'error', 'invalid'][pairs.status[index]],
    verdict: rubricatePairVerdict(pairs.winners[index]) ?? null, original_order: rubricatePairVerdict(pairs.originalOrder[index]) ?? null, swapped_order: rubricatePairVerdict(pairs.swappedOrder[index]) ?? 'not judged',
    consistent: flag(pairs.consistent[index]), label: pairs.labels[index] >= 0 ? rubricatePairVerdict(pairs.labels[index]) : null, correct: flag(pairs.correct[index]), source: sourceOf(payload, index) || null
  };
}
