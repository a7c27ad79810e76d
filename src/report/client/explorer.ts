/**
 * The item explorer every view lists its rows in (results items, compare pairs): a section
 * with a search box, status tabs and the view's own filters above a sortable virtual table,
 * whose order the drawer steps through. Views give the rows (how many, their ids as row
 * data, their status), the columns (header, sort value, cell) and the filters they add.
 */
import { ITEM_STATUS_NAMES, type ItemStatusName } from './decode.js';
import { formatInteger, h, icon, isNumber, sectionHead, tabs } from './common.js';
import { exportButtons } from './export.js';

export interface ExplorerColumn {
  key: string;
  label: string;
  /** A CSS grid track: '120px', 'minmax(150px, 2fr)'. */
  width: string;
  right?: boolean;
  narrowHidden?: boolean;
  /** What the column sorts by: a number (missing ones last) or a text; with neither it does not sort. */
  sortNumber?(index: number): number | null | undefined;
  sortText?(index: number): string;
  cell(index: number): Node;
}

export interface ExplorerOptions {
  /** The section's anchor, heading and hint. */
  section: { id: string; title: string; hint: string };
  /** What a row is called ('item', 'items'): in labels and the count line. */
  noun: string;
  nounPlural: string;
  /** Rows are 0 … rows - 1. */
  rows: number;
  columns: ExplorerColumn[];
  /** The row element's data attributes (its index and id), for tests and the drawer. */
  rowData(index: number): Record<string, string | number | boolean>;
  /** Number columns sort highest first on their first click (else lowest); text columns A→Z first. */
  highestFirst: boolean;
  /** Per row, its status code (`ITEM_STATUS_NAMES`): the explorer adds the status tabs. */
  status?: ArrayLike<number>;
  search: {
    placeholder: string;
    /** What the box matches before the texts arrive (id, tags…). */
    keys(index: number): string;
  };
  /** The view's own filter controls, placed after the status tabs. */
  controls?: Node[];
  /** The view's active filters, read at every refresh: a row is listed when each one keeps it. */
  filters?(): Array<(index: number) => boolean>;
  /** Whether every text has been decoded (until then the count line says so while searching). */
  textsComplete(): boolean;
  /**
   * Where the page says how many rows are listed, for tests and tools: the document attribute
   * (default `data-filtered`) and the count line's test id (default `result-count`). A page with
   * several explorers gives the others names of their own.
   */
  counter?: { attribute: string; testid: string };
  /** CSV and JSON export of the rows shown: the file name, the columns, and each row's values. */
  export?: { name: string; columns(): string[]; row(index: number): Record<string, unknown> };
  /** The rows' order before any column sort, when it is not their index order (blind review: an order that tells no verdict). */
  baseOrder?(rows: Int32Array): Int32Array;
}

export interface Explorer {
  element: HTMLElement;
  /** Draws the rows; call once the section is on the page. */
  mount(): void;
  /** Filters and sorts again, after a view's filter changed. */
  refresh(resetScroll: boolean): void;
  /** The listed rows, in their shown order. */
  order(): Int32Array;
  /** Marks one row as the one the drawer shows (-1: none). */
  select(index: number): void;
  /** Adds decoded texts to the search, from row `first` on. */
  addSearchTexts(first: number, texts: readonly string[]): void;
  /** Draws the rows in view again (their cells changed: texts arrived, a review was made). */
  redraw(): void;
  onOpen: ((index: number) => void) | null;
}

/** The explorer as the reader uses it: the search, the status tab, the sort, and what the search looks through. */
interface ExplorerState {
  options: ExplorerOptions;
  count: number;
  sort: SortState;
  query: string;
  status: ItemStatusName | 'all';
  /** Each row's search keys, lower-cased on the first search. */
  keyHaystack: string[] | null;
  /** Each row's decoded texts, lower-cased, as they arrive. */
  textHaystack: Array<string | undefined>;
  counter: { attribute: string; testid: string };
  countLabel: HTMLElement;
  table: VirtualTable;
}

export function createExplorer(options: ExplorerOptions): Explorer {
  const count = options.rows;
  const searchInput = h('input', { attrs: { type: 'search', placeholder: options.search.placeholder, 'aria-label': 'Search ' + options.nounPlural } });
  const counter = options.counter || { attribute: 'data-filtered', testid: 'result-count' };
  const countLabel = h('div', { className: 'result-count num', data: { testid: counter.testid } });
  const toolbar = h('div', { className: 'explorer-toolbar' }, [
    h('div', { className: 'search' }, [icon('search'), searchInput]),
    options.status ? tabs([{ value: 'all', label: 'All' }, { value: 'ok', label: 'OK' }, { value: 'error', label: 'Errors' }, { value: 'invalid', label: 'Invalid' }], 'all', function (value) { state.status = value; refreshExplorer(state, true); }) : null,
    ...(options.controls || []),
    countLabel,
    options.export ? exportButtons({
      name: options.export.name,
      columns: options.export.columns,
      rows: function () { return Array.from(table.order(), function (index) { return options.export!.row(index); }); }
    }) : null
  ]);
  const table = createVirtualTable({
    columns: options.columns,
    label: options.nounPlural,
    emptyText: 'No ' + options.noun + ' matches these filters.',
    rowData: options.rowData,
    onSort: function (column) { sortExplorerBy(state, column); },
    onOpen: function (index) { if (explorer.onOpen) explorer.onOpen(index); }
  });
  const state: ExplorerState = { options: options, count: count, sort: { sortKey: '', sortDirection: 1 }, query: '', status: 'all', keyHaystack: null, textHaystack: new Array<string | undefined>(count), counter: counter, countLabel: countLabel, table: table };
  const section = h('section', { className: 'section', attrs: { id: options.section.id }, data: { testid: 'explorer-' + options.section.id } }, [sectionHead(options.section.title, options.section.hint), toolbar, table.element]);

  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  searchInput.addEventListener('input', function () {
    clearTimeout(searchTimer);
    searchTimer = setTimeout(function () { state.query = searchInput.value.trim().toLowerCase(); refreshExplorer(state, true); }, 120);
  });

  const explorer: Explorer = {
    element: section,
    mount: function () { refreshExplorer(state, true); },
    refresh: function (resetScroll) { refreshExplorer(state, resetScroll); },
    order: table.order,
    select: table.select,
    // Texts join the search chunk by chunk as they are decoded, while the reader looks at the overview.
    addSearchTexts: function (first, texts) {
      for (let offset = 0; offset < texts.length; offset += 1) state.textHaystack[first + offset] = texts[offset].toLowerCase();
      if (state.query) refreshExplorer(state, false);
    },
    redraw: function () { table.show(table.order(), false); },
    onOpen: null
  };
  return explorer;
}

function matchesQuery(state: ExplorerState, index: number): boolean {
  if (!state.keyHaystack) {
    const haystack = (state.keyHaystack = new Array<string>(state.count));
    for (let each = 0; each < state.count; each += 1) haystack[each] = state.options.search.keys(each).toLowerCase();
  }
  const text = state.textHaystack[index];
  return state.keyHaystack[index].indexOf(state.query) >= 0 || (text !== undefined && text.indexOf(state.query) >= 0);
}

/** The rows the status tab, the view's filters and the search keep, in the column sort's order, drawn with the count line. */
function refreshExplorer(state: ExplorerState, resetScroll: boolean): void {
  const { options, count, query, status } = state;
  const rowStatus = options.status;
  const statusCode = rowStatus && status !== 'all' ? ITEM_STATUS_NAMES.indexOf(status) : -1;
  const filters = options.filters ? options.filters() : [];
  const kept = new Int32Array(count);
  let length = 0;
  rows: for (let index = 0; index < count; index += 1) {
    if (statusCode >= 0 && rowStatus && rowStatus[index] !== statusCode) continue;
    for (let each = 0; each < filters.length; each += 1) if (!filters[each](index)) continue rows;
    if (query && !matchesQuery(state, index)) continue;
    kept[length++] = index;
  }
  const listed = kept.slice(0, length);
  const order = sortOrder(state, options.baseOrder ? options.baseOrder(listed) : listed);
  state.countLabel.textContent = 'Showing ' + formatInteger(order.length) + ' of ' + formatInteger(count) + ' ' + options.nounPlural + (query && !options.textsComplete() ? ' (texts still loading)' : '');
  document.documentElement.setAttribute(state.counter.attribute, String(order.length));
  state.table.show(order, resetScroll);
}

function sortOrder(state: ExplorerState, order: Int32Array): Int32Array {
  const sort = state.sort;
  const column = state.options.columns.find(function (each) { return each.key === sort.sortKey; });
  if (!column) return order;
  if (column.sortText) return sortByText(order, column.sortText, sort.sortDirection);
  return column.sortNumber ? sortByNumber(order, column.sortNumber, sort.sortDirection) : order;
}

function sortExplorerBy(state: ExplorerState, column: ExplorerColumn): void {
  nextSort(state.sort, column.key, column.sortText || !state.options.highestFirst ? 1 : -1);
  state.table.showSort(state.sort.sortKey, state.sort.sortDirection);
  refreshExplorer(state, true);
}

// The explorer's virtual table: a sortable header and only the rows in view drawn, so a
// report of 100k items scrolls as smoothly as one of ten.
interface VirtualTableOptions {
  columns: ExplorerColumn[];
  label: string;
  emptyText: string;
  rowData(index: number): Record<string, string | number | boolean>;
  onSort(column: ExplorerColumn): void;
  onOpen(index: number): void;
}

interface VirtualTable {
  element: HTMLElement;
  order(): Int32Array;
  select(index: number): void;
  show(order: Int32Array, resetScroll?: boolean): void;
  showSort(key: string, direction: number): void;
}

function createVirtualTable(options: VirtualTableOptions): VirtualTable {
  const ROW_HEIGHT = 40;
  let order: Int32Array = new Int32Array(0), selected = -1, scheduled = false;
  const template = options.columns.map(function (column) { return column.width; }).join(' ');
  const headerRow = h('div', { className: 'vtable-head', style: { 'grid-template-columns': template }, attrs: { role: 'row' } });
  options.columns.forEach(function (column) {
    const cell = h('div', { className: (column.right ? 'right' : '') + (column.narrowHidden ? ' hide-narrow' : ''), attrs: { role: 'columnheader' } });
    if (!column.sortNumber && !column.sortText) cell.appendChild(h('span', { text: column.label }));
    else cell.appendChild(h('button', { attrs: { type: 'button', title: 'sort by ' + column.label.toLowerCase() }, data: { sort: column.key }, on: { click: function () { options.onSort(column); } } }, [column.label, h('span', { className: 'sort-indicator' })]));
    headerRow.appendChild(cell);
  });
  const spacer = h('div', { className: 'vtable-spacer' });
  const viewport = h('div', { className: 'vtable-viewport', attrs: { role: 'rowgroup', tabindex: '-1' } }, [spacer]);
  viewport.addEventListener('scroll', function () {
    if (scheduled) return;
    scheduled = true;
    requestAnimationFrame(function () { scheduled = false; renderRows(); });
  });
  return {
    element: h('div', { className: 'vtable', attrs: { role: 'grid', 'aria-label': options.label } }, [headerRow, viewport]),
    order: function () { return order; },
    show: function (nextOrder: Int32Array, resetScroll?: boolean) {
      order = nextOrder;
      spacer.style.height = Math.max(order.length * ROW_HEIGHT, 1) + 'px';
      // A short list takes the room it needs; a long one scrolls in the stylesheet's height.
      viewport.style.height = order.length * ROW_HEIGHT < 480 ? Math.max(order.length * ROW_HEIGHT + 2, 150) + 'px' : '';
      if (resetScroll) viewport.scrollTop = 0;
      renderRows();
    },
    select: function (index: number) { selected = index; renderRows(); },
    showSort: function (key: string, direction: number) {
      headerRow.querySelectorAll<HTMLElement>('button[data-sort]').forEach(function (button) {
        const indicator = button.querySelector('.sort-indicator')!;
        indicator.textContent = '';
        if (button.dataset.sort === key) { button.setAttribute('data-sorted', direction > 0 ? 'asc' : 'desc'); indicator.appendChild(icon(direction > 0 ? 'up' : 'down')); }
        else button.removeAttribute('data-sorted');
      });
    }
  };

  function renderRows() {
    const top = viewport.scrollTop;
    const height = viewport.clientHeight || 600;
    const first = Math.max(0, Math.floor(top / ROW_HEIGHT) - 8);
    const last = Math.min(order.length, Math.ceil((top + height) / ROW_HEIGHT) + 8);
    const fragment = document.createDocumentFragment();
    for (let position = first; position < last; position += 1) fragment.appendChild(row(order[position], position));
    spacer.textContent = '';
    if (order.length === 0) spacer.appendChild(h('div', { className: 'empty-state', text: options.emptyText }));
    spacer.appendChild(fragment);
  }

  function row(index: number, position: number): HTMLElement {
    const element = h('div', {
      className: 'vrow' + (index === selected ? ' selected' : ''),
      attrs: { role: 'row', tabindex: '0' },
      data: options.rowData(index),
      style: { top: position * ROW_HEIGHT + 'px', 'grid-template-columns': template },
      on: {
        click: function () { options.onOpen(index); },
        keydown: function (event) { if (event.key === 'Enter') options.onOpen(index); }
      }
    });
    options.columns.forEach(function (column) { element.appendChild(column.cell(index)); });
    return element;
  }
}

// Sort state cycles first direction → the other → unsorted, as spreadsheet headers do.
interface SortState {
  sortKey: string;
  sortDirection: number;
}

function nextSort(state: SortState, key: string, firstDirection: number): void {
  if (state.sortKey === key) {
    if (state.sortDirection === firstDirection) state.sortDirection = -firstDirection;
    else { state.sortKey = ''; state.sortDirection = 1; }
  } else {
    state.sortKey = key;
    state.sortDirection = firstDirection;
  }
}

// Sorts indexes by a number each; missing values (null, NaN) go last whatever the direction.
function sortByNumber(indexes: Int32Array, valueOf: (index: number) => number | null | undefined, direction: number): Int32Array {
  // Values are read once into an array indexed by entry, not per comparison: sorting 100k rows stays fast.
  let size = 0;
  let position: number;
  for (position = 0; position < indexes.length; position += 1) size = Math.max(size, indexes[position] + 1);
  const values = new Float64Array(size);
  for (position = 0; position < indexes.length; position += 1) {
    const value = valueOf(indexes[position]);
    values[indexes[position]] = isNumber(value) ? value : NaN;
  }
  const list = Array.from(indexes);
  list.sort(function (left, right) {
    const a = values[left], b = values[right];
    const aMissing = a !== a, bMissing = b !== b;
    if (aMissing || bMissing) return aMissing === bMissing ? left - right : aMissing ? 1 : -1;
    return direction * (a - b) || left - right;
  });
  return Int32Array.from(list);
}

function sortByText(indexes: Int32Array, textOf: (index: number) => string, direction: number): Int32Array {
  const collator = new Intl.Collator(undefined, { numeric: true });
  return Int32Array.from(Array.from(indexes).sort(function (left, right) { return direction * collator.compare(textOf(left), textOf(right)) || left - right; }));
}

/** The id column every explorer starts with. */
export function idColumn(label: string, ids: readonly string[]): ExplorerColumn {
  return {
    key: 'id', label: label, width: 'minmax(150px, 2fr)',
    sortText: function (index) { return ids[index]; },
    cell: function (index) { return h('div', { className: 'mono', text: ids[index], title: ids[index] }); }
  };
}

/** The status column: a pill per row (`ITEM_STATUS_NAMES` codes). */
export function statusColumn(status: ArrayLike<number>): ExplorerColumn {
  return {
    key: 'status', label: 'Status', width: '76px',
    sortNumber: function (index) { return status[index]; },
    cell: function (index) { const name = ITEM_STATUS_NAMES[status[index]]; return h('div', null, [h('span', { className: 'pill ' + name, text: name })]); }
  };
}
