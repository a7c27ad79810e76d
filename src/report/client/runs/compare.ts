/**
 * The viewer's comparison of two or more runs on the same items: each run's headline, judge and
 * cost; the overall paired difference of every pair of runs with its interval; each run against
 * the reference as a two-run report shows it (per-tag differences, changed items, flips); and
 * the item × run grid with filters (failures only, changed, tag, criterion) whose rows export as
 * CSV or JSON. An item opens in a drawer with its verdicts criterion by criterion and run by run,
 * and a link into each run's own report.
 */
import { rubricateCriterionMet, rubricateDecodeItem, rubricateTags, type DecodedCriterion } from '../decode.js';
import { card, formatCost, formatInteger, formatInterval, formatScore, formatSigned, formatSignedInterval, h, isNumber, plural, sectionHead, statList, tabs, truncate } from '../common.js';
import { createDrawer, type Drawer, type DrawerContent } from '../drawer.js';
import { createExplorer, idColumn, type Explorer, type ExplorerColumn } from '../explorer.js';
import { pageFooter, pageFrame } from '../frame.js';
import type { RunData, RunsComparePayload } from '../../types.js';
import { comparisonSection } from '../results/comparison.js';
import { criterionOutcome } from '../results/drawer.js';
import { runHref } from './index.js';

/** Worst status of a row across runs: ok 0, error 1, invalid 2 (absent counts as invalid: nothing to score). */
function rowStatus(runs: readonly RunData[], items: readonly number[][], row: number): number {
  let status = 0;
  runs.forEach(function (run, index) { const item = items[index][row]; status = Math.max(status, item < 0 ? 2 : run.items.status[item]); });
  return status;
}

/** The verdict of the criterion with this text in a run's item: 'met', 'not-met', 'error', 'skipped', or null when the item has none. */
function verdictOf(run: RunData, item: number, text: string): { key: string; label: string; className: string; failed: boolean } | null {
  if (item < 0) return null;
  for (let position = run.items.criteriaOffsets[item]; position < run.items.criteriaOffsets[item + 1]; position += 1) {
    if (run.strings[run.criteria.texts[position]] !== text) continue;
    const flags = run.criteria.flags[position];
    const outcome = criterionOutcome({ status: (['ok', 'error', 'skipped'] as const)[flags & 3], met: (flags & 3) === 0 ? rubricateCriterionMet(flags) : null, points: run.criteria.points[position] });
    return { key: outcome.key, label: outcome.label, className: outcome.className, failed: outcome.className === 'fail' || outcome.className === 'problem' };
  }
  return null;
}

/** The comparison page as the reader uses it: the runs, the grid's rows and the grid's filters; `refresh` lists the rows again. */
interface RunsCompareState {
  payload: RunsComparePayload;
  /** Each run's name: its file in the viewer's folder. */
  names: string[];
  /** Per run, per grid row: the item's score (null when absent or unscored). */
  scores: Array<Array<number | null>>;
  /** Per grid row: the worst status across runs. */
  status: number[];
  /** The grid row of each item id. */
  rowsOfId: Map<string, number>;
  filter: { failures: boolean; changed: boolean; tag: string; criterion: string };
  criterionTexts: Set<string>;
  refresh(): void;
}

export function renderRunsCompareView(root: HTMLElement, payload: RunsComparePayload): void {
  const runs = payload.runs, files = payload.files, grid = payload.grid;
  const names = runs.map(function (run, index) { return files[index] || run.summary.label; });
  const page = pageFrame(root, payload, {
    sections: [{ id: 'runs', label: 'Runs' }, { id: 'differences', label: 'Differences' }, { id: 'reference', label: 'Vs reference' }, { id: 'grid', label: 'Grid' }],
    subtitle: [h('span', { className: 'pill accent', text: 'viewer' }), h('a', { className: 'run-link', text: '← all runs', attrs: { href: '/' } }), h('span', { className: 'muted', text: plural(runs.length, 'run') + ' · reference ' + names[0] + ' · scoring ' + runs[0].summary.scoring })],
    madeUpBy: runs.map(function (run) { return run.summary.madeUpBy; }).filter(Boolean).join(', ') || null
  });
  page.appendChild(runsSection(payload, names));
  page.appendChild(differencesSection(payload, names));

  // Each run against the reference, drawn as a two-run report draws it.
  const reference = h('section', { className: 'section', attrs: { id: 'reference' } }, [sectionHead('Against the reference', 'each run − ' + names[0] + ', as a two-run report compares them')]);
  const holder = h('div');
  const drawReference = function (index: number): void { drawReferenceComparison(state, holder, index, { drawer: drawer, explorer: explorer, criterionInput: controls.criterionInput }); };
  if (payload.comparisons.length > 0) {
    reference.appendChild(tabs(payload.comparisons.map(function (_, index) { return { value: String(index), label: names[index + 1] }; }), '0', function (value) { drawReference(Number(value)); }));
    reference.appendChild(holder);
  }
  page.appendChild(reference);

  // The grid: one row per item id of any run.
  const state: RunsCompareState = {
    payload: payload,
    names: names,
    scores: runs.map(function (run, index) { return grid.items[index].map(function (item) { return item < 0 ? null : run.items.scores[item]; }); }),
    status: grid.ids.map(function (_, row) { return rowStatus(runs, grid.items, row); }),
    rowsOfId: new Map<string, number>(),
    filter: { failures: false, changed: false, tag: '', criterion: '' },
    criterionTexts: new Set<string>(),
    refresh: function () { explorer.refresh(true); }
  };
  grid.ids.forEach(function (id, row) { state.rowsOfId.set(id, row); });
  const columns = gridColumns(state);
  const controls = gridControls(state);
  const explorer = createExplorer({
    section: { id: 'grid', title: 'Items × runs', hint: 'each cell is the item score in that run (or, with a criterion chosen, its verdict) · click a row for every verdict' },
    noun: 'item',
    nounPlural: 'items',
    rows: grid.ids.length,
    columns: columns,
    rowData: function (row) { return { index: row, itemId: grid.ids[row] }; },
    highestFirst: true,
    status: state.status,
    search: { placeholder: 'Search item ids and tags', keys: function (row) { return grid.ids[row] + ' ' + rowTags(state, row).join(' '); } },
    controls: controls.elements,
    filters: function () { return gridFilters(state); },
    textsComplete: function () { return true; },
    export: {
      name: 'grid',
      columns: function () { return gridExportColumns(state); },
      row: function (row) { return gridExportRow(state, row); }
    }
  });
  page.appendChild(explorer.element);
  page.appendChild(pageFooter(payload, ['paired bootstrap: ' + (payload.comparisons[0] ? payload.comparisons[0].bootstrap.samples + ' resamples, seed ' + payload.comparisons[0].bootstrap.seed : '—'), 'runs scored with ' + runs[0].summary.scoring]));
  explorer.mount();
  const drawer = createDrawer({ explorer: explorer, noun: 'item', testid: 'grid-drawer', hashKey: 'item', ids: grid.ids, render: function (row) { return renderGridRow(state, row); } });
  explorer.onOpen = drawer.open;
  if (payload.comparisons.length > 0) drawReference(0);
}

/** Each run: headline, items, judge, cost. */
function runsSection(payload: RunsComparePayload, names: string[]): HTMLElement {
  return h('section', { className: 'section', attrs: { id: 'runs' }, style: { 'margin-top': '0' } }, [card(null, [h('div', { className: 'table-scroll', style: { 'max-height': 'none' } }, [h('table', { className: 'data', data: { testid: 'runs-table' } }, [
    h('thead', null, [h('tr', null, ['run', 'score', '95% CI', 'items', 'ok', 'error', 'invalid', 'judge', 'template', 'calls', 'cost'].map(function (label, index) { return h('th', { className: index >= 1 && index <= 6 || index >= 9 ? 'num' : '', text: label }); }))]),
    h('tbody', null, payload.runs.map(function (run, index) {
      const summary = run.summary, metrics = summary.metrics, overall = metrics.overall, judge = summary.judges.length === 1 ? summary.judges[0] : null;
      return h('tr', { data: { run: names[index] } }, [
        h('td', null, [h('a', { className: 'run-link mono', text: names[index], attrs: { href: runHref(names[index]) } }), index === 0 ? h('span', { className: 'pill neutral', text: 'reference', style: { 'margin-left': '6px' } }) : null]),
        h('td', { className: 'num', text: formatScore(overall ? overall.score : null), data: { testid: 'run-score' } }),
        h('td', { className: 'num', text: overall ? formatInterval(overall.ci95) : '—' }),
        h('td', { className: 'num', text: formatInteger(metrics.n) }),
        h('td', { className: 'num', text: formatInteger(metrics.n_ok) }),
        h('td', { className: 'num' + (metrics.n_error ? ' down' : ''), text: formatInteger(metrics.n_error) }),
        h('td', { className: 'num' + (metrics.n_invalid ? ' down' : ''), text: formatInteger(metrics.n_invalid) }),
        summary.madeUpBy ? h('td', null, [h('span', { className: 'chip made-up', text: 'scripted (made up)', data: { testid: 'made-up' } })]) : h('td', { className: 'mono', text: judge ? judge.model : summary.judges.length ? summary.judges.length + ' judges' : 'none', title: judge ? judge.id : '' }),
        h('td', { className: 'mono', text: judge ? judge.template_version + ' · ' + judge.mode : '—' }),
        h('td', { className: 'num', text: formatInteger(summary.usage.calls) }),
        h('td', { className: 'num', text: summary.madeUpBy ? 'scripted' : formatCost(summary.costUsd) })
      ]);
    }))
  ])])])]);
}

/** Every pair of runs: row − column, with its interval. */
function differencesSection(payload: RunsComparePayload, names: string[]): HTMLElement {
  const matrix = payload.matrix;
  return h('section', { className: 'section', attrs: { id: 'differences' } }, [
    sectionHead('Paired differences', 'row − column over the items both runs scored (matched by id) · 95% paired bootstrap interval · bold when it excludes 0'),
    card(null, [h('div', { className: 'table-scroll', style: { 'max-height': 'none' } }, [h('table', { className: 'data', data: { testid: 'delta-matrix' } }, [
      h('thead', null, [h('tr', null, [h('th', { text: 'row − column' })].concat(names.map(function (name) { return h('th', { className: 'num', text: truncate(name, 28), title: name }); })))]),
      h('tbody', null, names.map(function (name, row) {
        return h('tr', null, [h('td', { className: 'mono', text: truncate(name, 40), title: name })].concat(names.map(function (_, column) {
          const difference = matrix[row][column];
          if (!difference) return h('td', { className: 'num faint', text: row === column ? '·' : '—' });
          const significant = difference.ci95[0] > 0 || difference.ci95[1] < 0;
          return h('td', { className: 'num ' + (significant ? (difference.difference > 0 ? 'up' : 'down') : ''), data: { testid: 'delta-' + row + '-' + column }, title: 'n = ' + difference.n + ' paired items' }, [
            h(significant ? 'b' : 'span', { text: formatSigned(difference.difference) }),
            h('div', { className: 'faint', text: formatSignedInterval(difference.ci95) })
          ]);
        })));
      }))
    ])])])
  ]);
}

/** One run against the reference; its items open in the grid's drawer, its criteria filter the grid. */
function drawReferenceComparison(state: RunsCompareState, holder: HTMLElement, index: number, grid: { drawer: Drawer; explorer: Explorer; criterionInput: HTMLInputElement }): void {
  const runs = state.payload.runs;
  holder.textContent = '';
  const run = runs[index + 1];
  holder.appendChild(comparisonSection(state.payload.comparisons[index], function (item) {
    const row = state.rowsOfId.get(run.items.ids[item]);
    if (row !== undefined) grid.drawer.open(row);
  }, function (text) {
    grid.criterionInput.value = text;
    state.filter.criterion = text;
    state.filter.changed = true;
    const changedBox = grid.explorer.element.querySelector<HTMLInputElement>('[data-testid="grid-changed"]');
    if (changedBox) changedBox.checked = true;
    grid.explorer.refresh(true);
    grid.explorer.element.scrollIntoView({ behavior: 'smooth', block: 'start' });
  }));
}

/** The spread of a row's scores across runs (max − min), null with fewer than one score. */
function spreadOf(state: RunsCompareState, row: number): number | null {
  let low = Infinity, high = -Infinity;
  state.scores.forEach(function (list) { const score = list[row]; if (isNumber(score)) { low = Math.min(low, score); high = Math.max(high, score); } });
  return high >= low ? high - low : null;
}

/** The item, one column per run (its score, or with a criterion chosen its verdict), and the spread. */
function gridColumns(state: RunsCompareState): ExplorerColumn[] {
  const grid = state.payload.grid, names = state.names;
  const columns: ExplorerColumn[] = [idColumn('Item', grid.ids)];
  state.payload.runs.forEach(function (run, index) {
    columns.push({
      key: 'run' + index, label: truncate(names[index], 22), width: 'minmax(90px, 1fr)', right: true,
      sortNumber: function (row) { return state.scores[index][row]; },
      cell: function (row) {
        const item = grid.items[index][row];
        if (item < 0) return h('div', { className: 'right faint', text: 'absent', data: { testid: 'grid-cell' } });
        if (state.filter.criterion) {
          const verdict = verdictOf(run, item, state.filter.criterion);
          return h('div', { className: 'right', data: { testid: 'grid-cell', verdict: verdict ? verdict.key : 'none' } }, [verdict ? h('span', { className: 'verdict ' + verdict.className, text: verdict.label }) : h('span', { className: 'faint', text: 'no such criterion' })]);
        }
        const itemStatus = run.items.status[item];
        return h('div', { className: 'right grid-cell num', data: { testid: 'grid-cell', status: ['ok', 'error', 'invalid'][itemStatus] } }, itemStatus === 0 ? [h('span', { text: formatScore(run.items.scores[item]) })] : [h('span', { className: 'pill ' + ['ok', 'error', 'invalid'][itemStatus], text: ['ok', 'error', 'invalid'][itemStatus] })]);
      }
    });
  });
  columns.push({
    key: 'spread', label: 'Spread', width: '80px', right: true,
    sortNumber: function (row) { return spreadOf(state, row); },
    cell: function (row) { const spread = spreadOf(state, row); return h('div', { className: 'right num ' + (spread ? 'down' : 'faint'), text: spread === null ? '—' : formatScore(spread) }); }
  });
  return columns;
}

/** The grid's toggles (failures only, changed), tag menu and criterion box (with its list of every criterion text). */
function gridControls(state: RunsCompareState): { elements: Node[]; criterionInput: HTMLInputElement } {
  const runs = state.payload.runs;
  const tagSelect = h('select', { className: 'select', attrs: { 'aria-label': 'Filter by tag' }, data: { testid: 'grid-tag' } }, [h('option', { text: 'All tags', attrs: { value: '' } })]);
  const tags = new Set<string>();
  runs.forEach(function (run) { run.tagSets.forEach(function (set) { set.forEach(function (reference) { tags.add(run.strings[reference]); }); }); });
  Array.from(tags).sort().forEach(function (tag) { tagSelect.appendChild(h('option', { text: tag, attrs: { value: tag } })); });
  tagSelect.addEventListener('change', function () { state.filter.tag = tagSelect.value; state.refresh(); });
  const criterionTexts = state.criterionTexts;
  runs.forEach(function (run) { run.criteria.texts.forEach(function (text) { criterionTexts.add(run.strings[text]); }); });
  const criterionList = h('datalist', { attrs: { id: 'grid-criteria' } }, Array.from(criterionTexts).sort().slice(0, 5000).map(function (text) { return h('option', { attrs: { value: text } }); }));
  const criterionInput = h('input', { className: 'select', attrs: { type: 'search', list: 'grid-criteria', placeholder: 'criterion (verdicts in the cells)', 'aria-label': 'Show one criterion' }, data: { testid: 'grid-criterion' }, style: { width: '260px' } });
  criterionInput.addEventListener('change', function () {
    const value = criterionInput.value.trim();
    state.filter.criterion = criterionTexts.has(value) ? value : '';
    state.refresh();
  });
  function toggle(label: string, testid: string, key: 'failures' | 'changed'): HTMLElement {
    const box = h('input', { attrs: { type: 'checkbox' }, data: { testid: testid } });
    box.addEventListener('change', function () { state.filter[key] = box.checked; state.refresh(); });
    return h('label', { className: 'toggle' }, [box, label]);
  }
  return { elements: [toggle('failures only', 'grid-failures', 'failures'), toggle('changed', 'grid-changed', 'changed'), tagSelect, criterionInput, criterionList], criterionInput: criterionInput };
}

function gridFilters(state: RunsCompareState): Array<(row: number) => boolean> {
  const runs = state.payload.runs, grid = state.payload.grid, filter = state.filter;
  const filters: Array<(row: number) => boolean> = [];
  if (filter.failures) filters.push(function (row) { return failing(state, row); });
  if (filter.changed) filters.push(function (row) { return changing(state, row); });
  if (filter.tag) filters.push(function (row) { return rowTags(state, row).indexOf(filter.tag) >= 0; });
  if (filter.criterion) filters.push(function (row) { return runs.some(function (run, index) { return verdictOf(run, grid.items[index][row], filter.criterion) !== null; }); });
  return filters;
}

function gridExportColumns(state: RunsCompareState): string[] {
  const list = ['id'];
  state.names.forEach(function (name) { list.push(name + ' status', name + ' score'); if (state.filter.criterion) list.push(name + ' verdict'); });
  list.push('spread');
  if (state.filter.criterion) list.push('criterion');
  return list;
}

/** One grid row as the CSV and JSON export write it. */
function gridExportRow(state: RunsCompareState, row: number): Record<string, unknown> {
  const grid = state.payload.grid, names = state.names, criterion = state.filter.criterion;
  const out: Record<string, unknown> = { id: grid.ids[row] };
  state.payload.runs.forEach(function (run, index) {
    const item = grid.items[index][row];
    out[names[index] + ' status'] = item < 0 ? 'absent' : ['ok', 'error', 'invalid'][run.items.status[item]];
    out[names[index] + ' score'] = item < 0 ? null : run.items.scores[item];
    if (criterion) { const verdict = verdictOf(run, item, criterion); out[names[index] + ' verdict'] = verdict ? verdict.key : null; }
  });
  out.spread = spreadOf(state, row);
  if (criterion) out.criterion = criterion;
  return out;
}

/** The tags of a row's items and their criteria, in every run. */
function rowTags(state: RunsCompareState, row: number): string[] {
  const grid = state.payload.grid;
  const found: string[] = [];
  state.payload.runs.forEach(function (run, index) {
    const item = grid.items[index][row];
    if (item < 0) return;
    rubricateTags(run, run.items.tagSets[item]).forEach(function (tag) { if (found.indexOf(tag) < 0) found.push(tag); });
    for (let position = run.items.criteriaOffsets[item]; position < run.items.criteriaOffsets[item + 1]; position += 1) {
      rubricateTags(run, run.criteria.tagSets[position]).forEach(function (tag) { if (found.indexOf(tag) < 0) found.push(tag); });
    }
  });
  return found;
}

/** Failed somewhere: an item in error or invalid in some run, or (with a criterion chosen) that criterion not met or in error there; else a criterion that cost points. */
function failing(state: RunsCompareState, row: number): boolean {
  const grid = state.payload.grid, criterion = state.filter.criterion;
  return state.payload.runs.some(function (run, index) {
    const item = grid.items[index][row];
    if (item < 0) return false;
    if (run.items.status[item] !== 0) return true;
    if (criterion) { const verdict = verdictOf(run, item, criterion); return verdict !== null && verdict.failed; }
    for (let position = run.items.criteriaOffsets[item]; position < run.items.criteriaOffsets[item + 1]; position += 1) {
      const flags = run.criteria.flags[position];
      const met = rubricateCriterionMet(flags);
      if ((flags & 3) === 0 && met !== null && (run.criteria.points[position] < 0 ? met : !met)) return true;
    }
    return false;
  });
}

/** Differs between runs: the score (or status), or with a criterion chosen, its verdict. */
function changing(state: RunsCompareState, row: number): boolean {
  const grid = state.payload.grid, criterion = state.filter.criterion;
  const seen = new Set<string>();
  state.payload.runs.forEach(function (run, index) {
    const item = grid.items[index][row];
    if (item < 0) { seen.add('absent'); return; }
    if (criterion) { const verdict = verdictOf(run, item, criterion); seen.add(verdict ? verdict.key : 'none'); return; }
    seen.add(run.items.status[item] === 0 ? 'score ' + run.items.scores[item] : 'status ' + run.items.status[item]);
  });
  return seen.size > 1;
}

/** A row in the drawer: a link into each run's report, the scores, and every criterion's verdict run by run. */
function renderGridRow(state: RunsCompareState, row: number): DrawerContent {
  const grid = state.payload.grid, names = state.names, status = state.status;
  const id = grid.ids[row];
  const decoded = state.payload.runs.map(function (run, index) { const item = grid.items[index][row]; return item < 0 ? null : rubricateDecodeItem(run, null, item); });
  const links = h('div', { className: 'chips', style: { 'margin-bottom': '14px' } }, names.map(function (name, index) {
    return decoded[index] ? h('a', { className: 'chip run-link', text: 'open in ' + truncate(name, 40), attrs: { href: runHref(name, id) }, data: { testid: 'open-in-run' } }) : h('span', { className: 'chip', text: 'absent from ' + truncate(name, 40) });
  }));
  const summaryRows = names.map(function (name, index) {
    const item = decoded[index];
    return [truncate(name, 40), item ? (item.status === 'ok' ? formatScore(item.score) : item.status) : 'absent', item && item.status !== 'ok' ? 'num down' : 'num'] as [string, string, string];
  });
  return {
    attributes: { 'data-item-id': id },
    meta: [h('span', { className: 'pill ' + ['ok', 'error', 'invalid'][status[row]], text: ['ok', 'error', 'invalid'][status[row]] })],
    summary: h('div', { className: 'drawer-score' }, [h('div', { className: 'faint', text: 'spread' }), h('div', { className: 'value num', text: formatScore(spreadOf(state, row)) })]),
    body: h('div', { className: 'pair-drawer-body' }, [links, card('Scores', [statList(summaryRows)]), h('div', { className: 'block-title', style: { 'margin-top': '18px' }, text: 'Verdicts by criterion and run' }), card(null, [h('div', { className: 'table-scroll', style: { 'max-height': 'none' } }, [verdictGrid(names, decoded)])])])
  };
}

/** Criteria by id, in the first run's order, then those only later runs have; one verdict per run. */
function verdictGrid(names: string[], decoded: Array<ReturnType<typeof rubricateDecodeItem> | null>): HTMLElement {
  const order: string[] = [];
  const texts: Record<string, string> = {};
  decoded.forEach(function (item) { if (item) item.criteria.forEach(function (criterion) { if (!(criterion.id in texts)) { order.push(criterion.id); texts[criterion.id] = criterion.text; } }); });
  const byId = decoded.map(function (item) { const map: Record<string, DecodedCriterion> = {}; if (item) item.criteria.forEach(function (criterion) { if (!(criterion.id in map)) map[criterion.id] = criterion; }); return map; });
  return h('table', { className: 'data verdict-grid', data: { testid: 'verdict-grid' } }, [
    h('thead', null, [h('tr', null, [h('th', { text: 'criterion' }), h('th', { className: 'num', text: 'points' })].concat(names.map(function (name) { return h('th', { text: truncate(name, 22), title: name }); })))]),
    h('tbody', null, order.map(function (criterionId) {
      const first = byId.filter(function (map) { return map[criterionId]; })[0][criterionId];
      return h('tr', { data: { criterionId: criterionId } }, [h('td', { text: texts[criterionId], title: criterionId }), h('td', { className: 'num', text: String(first.points) })].concat(byId.map(function (map) {
        const criterion = map[criterionId];
        if (!criterion) return h('td', { data: { verdict: 'absent' } }, [h('span', { className: 'verdict-dot absent', title: 'not in this run' })]);
        const outcome = criterionOutcome(criterion);
        return h('td', { data: { verdict: outcome.key } }, [h('span', { className: 'verdict ' + outcome.className, text: outcome.label })]);
      })));
    }))
  ]);
}
