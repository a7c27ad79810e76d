/**
 * The drawer every view opens a row in: a side panel over the page with keyboard navigation
 * (Esc, ←/→, j/k) through the explorer's order, a deep link in the URL hash (#item=ID), and
 * focus handed back on close. It draws the header (id, notes, "N of M", the row's summary,
 * the buttons); the view gives the per-row detail, built with the blocks below.
 */
import { formatInteger, h, icon, type Child } from './common.js';
import { textWithImages } from './media.js';
import type { ReportImage } from '../types.js';

/** What the drawer needs from the explorer it steps through. */
export interface DrawerExplorer {
  order(): Int32Array;
  select(index: number): void;
}

/** What the drawer shows for one row. */
export interface DrawerContent {
  /** Set on the panel (data-item-id…), for tests. */
  attributes: Record<string, string>;
  /** Notes beside the id (status, line…), before "N of M". */
  meta: Child[];
  /** Chips after "N of M" (tags). */
  tags?: Child[];
  /** The header's right-hand block (score, verdict). */
  summary: HTMLElement;
  body: HTMLElement;
}

export interface DrawerOptions {
  explorer: DrawerExplorer;
  /** What one row is called ('item', 'pair'): in labels. */
  noun: string;
  testid: string;
  /** The URL hash key of the deep link (#item=ID). */
  hashKey: string;
  /** Each row's id (the deep link's). */
  ids: readonly string[];
  render(index: number): DrawerContent;
  /** Starts loading the row's texts; calls done when they arrive. */
  load?(index: number, done: () => void): void;
}

export interface Drawer {
  open(index: number): void;
  close(): void;
}

/** The drawer as it runs: the row it shows (-1 when closed), its elements while open, and where focus returns. */
interface DrawerState {
  options: DrawerOptions;
  backdrop: HTMLElement | null;
  panel: HTMLElement | null;
  currentIndex: number;
  lastFocus: Element | null;
}

/** Creates the drawer and opens the row the URL hash names, now and whenever the hash changes. */
export function createDrawer(options: DrawerOptions): Drawer {
  const state: DrawerState = { options: options, backdrop: null, panel: null, currentIndex: -1, lastFocus: null };
  document.addEventListener('keydown', function (event) {
    if (state.currentIndex < 0) return;
    if (event.key === 'Escape') closeDrawer(state);
    else if ((event.key === 'ArrowRight' || event.key === 'j') && !isTyping(event)) stepDrawer(state, 1);
    else if ((event.key === 'ArrowLeft' || event.key === 'k') && !isTyping(event)) stepDrawer(state, -1);
  });
  window.addEventListener('hashchange', function () { openFromHash(state); });
  openFromHash(state);
  return { open: function (index: number) { openDrawer(state, index); }, close: function () { closeDrawer(state); } };
}

function isTyping(event: KeyboardEvent): boolean { const tag = (event.target as Element | null)?.tagName; return tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA'; }

function openFromHash(state: DrawerState): void {
  const prefix = '#' + state.options.hashKey + '=';
  if (location.hash.indexOf(prefix) !== 0) return;
  const index = state.options.ids.indexOf(decodeURIComponent(location.hash.slice(prefix.length)));
  if (index >= 0 && state.currentIndex !== index) openDrawer(state, index);
}

/** The next (1) or previous (-1) row in the explorer's order; the first one when the row shown is filtered out. */
function stepDrawer(state: DrawerState, direction: number): void {
  const order = state.options.explorer.order();
  const position = Array.prototype.indexOf.call(order, state.currentIndex);
  const next: number | undefined = position < 0 ? (order.length ? order[0] : -1) : order[position + direction];
  if (next !== undefined && next >= 0) openDrawer(state, next);
}

function openDrawer(state: DrawerState, index: number): void {
  const options = state.options;
  if (!state.panel) {
    state.lastFocus = document.activeElement;
    const backdrop = h('div', { className: 'drawer-backdrop', on: { click: function () { closeDrawer(state); } } });
    const panel = h('aside', { className: 'drawer', attrs: { role: 'dialog', 'aria-modal': 'true', 'aria-label': options.noun + ' details' }, data: { testid: options.testid } });
    state.backdrop = backdrop;
    state.panel = panel;
    document.body.appendChild(backdrop);
    document.body.appendChild(panel);
    const shown = [backdrop, panel];
    requestAnimationFrame(function () { shown.forEach(function (element) { element.classList.add('open'); }); });
    document.body.style.overflow = 'hidden';
  }
  state.currentIndex = index;
  options.explorer.select(index);
  const hash = '#' + options.hashKey + '=' + encodeURIComponent(options.ids[index]);
  if (location.hash !== hash) history.replaceState(null, '', hash);
  renderDrawer(state);
  // Texts load in the background; draw again when they arrive, if the drawer still shows this row.
  if (options.load) options.load(index, function () { if (state.currentIndex === index) renderDrawer(state); });
}

function renderDrawer(state: DrawerState): void {
  const panel = state.panel;
  if (!panel) return;
  const options = state.options;
  panel.textContent = '';
  const content = options.render(state.currentIndex);
  for (const name in content.attributes) panel.setAttribute(name, content.attributes[name]);
  const order = options.explorer.order();
  const position = Array.prototype.indexOf.call(order, state.currentIndex);
  const title = h('div', { className: 'drawer-title' }, [
    h('h2', { text: options.ids[state.currentIndex], data: { testid: 'drawer-id' } }),
    h('div', { className: 'meta' }, [
      ...content.meta,
      position >= 0 ? h('span', { className: 'num faint', text: (position + 1) + ' of ' + formatInteger(order.length) }) : null,
      ...(content.tags || [])
    ])
  ]);
  panel.appendChild(h('div', { className: 'drawer-header' }, [title, content.summary, drawerActions(state)]));
  panel.appendChild(content.body);
  const closeButton = panel.querySelector<HTMLElement>('[data-testid="drawer-close"]');
  if (closeButton && document.activeElement === document.body) closeButton.focus({ preventScroll: true });
}

function drawerActions(state: DrawerState): HTMLElement {
  const noun = state.options.noun;
  return h('div', { className: 'drawer-actions' }, [
    h('button', { className: 'icon-button', attrs: { type: 'button', 'aria-label': 'previous ' + noun, title: 'previous (←)' }, on: { click: function () { stepDrawer(state, -1); } } }, [icon('up')]),
    h('button', { className: 'icon-button', attrs: { type: 'button', 'aria-label': 'next ' + noun, title: 'next (→)' }, on: { click: function () { stepDrawer(state, 1); } } }, [icon('down')]),
    h('button', { className: 'icon-button', attrs: { type: 'button', 'aria-label': 'close', title: 'close (Esc)' }, data: { testid: 'drawer-close' }, on: { click: function () { closeDrawer(state); } } }, [icon('close')])
  ]);
}

function closeDrawer(state: DrawerState): void {
  if (!state.panel) return;
  state.panel.remove(); state.backdrop?.remove();
  state.panel = null; state.backdrop = null; state.currentIndex = -1;
  document.body.style.overflow = '';
  state.options.explorer.select(-1);
  if (location.hash) history.replaceState(null, '', location.pathname + location.search);
  if (state.lastFocus instanceof HTMLElement) state.lastFocus.focus();
}

/** The placeholder shown while a row's texts are decoded. */
export function textsLoading(minHeight: string): HTMLElement {
  return h('div', { className: 'loading', style: { 'min-height': minHeight } }, [h('div', { className: 'spinner' }), h('div', { text: 'Loading texts…' })]);
}

/** The conversation a response answered, each message as text (images where their placeholders stand). */
export function conversation(prompt: ReadonlyArray<{ role: string; content: string }>, notStored: string, images?: readonly ReportImage[]): HTMLElement[] {
  const blocks = [h('div', { className: 'block-title', text: 'Conversation' })];
  if (prompt.length === 0) blocks.push(h('div', { className: 'callout info', text: notStored }));
  prompt.forEach(function (message) {
    blocks.push(h('div', { className: 'message ' + (['user', 'assistant', 'system'].indexOf(message.role) >= 0 ? message.role : 'user') }, [
      h('div', { className: 'message-role', text: message.role }),
      textWithImages(message.content, images)
    ]));
  });
  return blocks;
}
