/**
 * A small Markdown renderer for responses: headings, paragraphs, lists (nested by indent),
 * block quotes, fenced code, rules, pipe tables, and inline code, bold, italics, strikethrough
 * and links. It builds elements and text nodes only: no string of the response is ever parsed
 * as HTML, a link shows its text and address without being followable, and an image shows as
 * its alt text, so nothing in a response can run, load or navigate.
 */
import { h } from './common.js';

/** Lines that mark a text as Markdown worth rendering (plain prose reads the same either way). */
const markdownHint = /^(#{1,6}\s|\s*[-*+]\s+\S|\s*\d{1,3}[.)]\s+\S|\s*>\s|```|~~~|\|.*\|\s*$)|\*\*[^*\n]+\*\*|`[^`\n]+`/m;

export function looksLikeMarkdown(text: string): boolean {
  return markdownHint.test(text);
}

interface ListFrame {
  element: HTMLElement;
  indent: number;
  ordered: boolean;
}

/** A text being rendered: the block so far, the line it is at, and the open paragraph, lists and quote. */
interface MarkdownState {
  root: HTMLElement;
  lines: string[];
  index: number;
  paragraph: string[];
  lists: ListFrame[];
  quote: string[] | null;
}

/** The rendered Markdown of text, as a block of elements. */
export function renderMarkdown(text: string): HTMLElement {
  const state: MarkdownState = { root: h('div', { className: 'markdown' }), lines: text.replace(/\r\n?/g, '\n').split('\n'), index: 0, paragraph: [], lists: [], quote: null };
  for (; state.index < state.lines.length; state.index += 1) renderLine(state, state.lines[state.index]);
  flushParagraph(state); flushQuote(state);
  return state.root;
}

/** One line: it opens or continues a block (a fence or a table also reads the lines after it). */
function renderLine(state: MarkdownState, line: string): void {
  const fence = /^(\s*)(```|~~~)\s*([\w+.-]*)\s*$/.exec(line);
  if (fence) { renderFence(state, fence); return; }
  const quoted = /^\s*>\s?(.*)$/.exec(line);
  if (quoted) {
    flushParagraph(state); closeLists(state);
    (state.quote = state.quote || []).push(quoted[1]);
    return;
  }
  flushQuote(state);
  if (line.trim() === '') { flushParagraph(state); return; }
  const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
  if (heading) {
    flushParagraph(state); closeLists(state);
    const element = h(('h' + Math.min(6, heading[1].length + 2)) as 'h3', { className: 'md-heading' });
    appendInline(element, heading[2]);
    state.root.appendChild(element);
    return;
  }
  if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) { flushParagraph(state); closeLists(state); state.root.appendChild(h('hr')); return; }
  if (/^\s*\|.*\|\s*$/.test(line) && state.index + 1 < state.lines.length && /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(state.lines[state.index + 1])) { renderTable(state, line); return; }
  const item = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
  if (item) { renderListItem(state, item); return; }
  // A line indented under a list item continues it; anything else ends the lists.
  if (state.lists.length > 0 && /^\s+\S/.test(line) && state.paragraph.length === 0) {
    const last = target(state);
    last.appendChild(document.createElement('br'));
    appendInline(last, line.trim());
    return;
  }
  if (state.paragraph.length === 0) closeLists(state);
  state.paragraph.push(line.trim());
}

/** A fenced code block, up to its closing fence (or the end of the text). */
function renderFence(state: MarkdownState, fence: RegExpExecArray): void {
  const lines = state.lines;
  flushParagraph(state); flushQuote(state);
  const closing = fence[2];
  const body: string[] = [];
  state.index += 1;
  while (state.index < lines.length && lines[state.index].trim() !== closing) { body.push(lines[state.index]); state.index += 1; }
  target(state).appendChild(h('pre', { className: 'md-code' }, [h('code', { text: body.join('\n'), data: fence[3] ? { language: fence[3] } : undefined })]));
}

/** A pipe table: its header, the delimiter row after it, and every pipe row that follows. */
function renderTable(state: MarkdownState, line: string): void {
  const lines = state.lines;
  flushParagraph(state); closeLists(state);
  const rows: string[] = [line];
  state.index += 2;
  while (state.index < lines.length && /^\s*\|.*\|\s*$/.test(lines[state.index])) { rows.push(lines[state.index]); state.index += 1; }
  state.index -= 1;
  state.root.appendChild(table(rows));
}

/** A list item, in the list its indent and kind place it in (a new nested list when it is indented further). */
function renderListItem(state: MarkdownState, item: RegExpExecArray): void {
  const lists = state.lists;
  flushParagraph(state);
  const indent = item[1].replace(/\t/g, '    ').length;
  const ordered = /\d/.test(item[2]);
  while (lists.length > 0 && (lists[lists.length - 1].indent > indent || (lists[lists.length - 1].indent === indent && lists[lists.length - 1].ordered !== ordered))) lists.pop();
  if (lists.length === 0 || lists[lists.length - 1].indent < indent) {
    const list = h(ordered ? 'ol' : 'ul');
    if (ordered && parseInt(item[2], 10) !== 1) list.setAttribute('start', String(parseInt(item[2], 10)));
    target(state).appendChild(list);
    lists.push({ element: list, indent: indent, ordered: ordered });
  }
  const entry = h('li');
  appendInline(entry, item[3]);
  lists[lists.length - 1].element.appendChild(entry);
}

function flushParagraph(state: MarkdownState): void {
  if (state.paragraph.length === 0) return;
  const element = h('p');
  state.paragraph.forEach(function (line, index) {
    if (index > 0) element.appendChild(document.createElement('br'));
    appendInline(element, line);
  });
  target(state).appendChild(element);
  state.paragraph = [];
}

/** Where a block goes: the last item of the innermost open list, else the root. */
function target(state: MarkdownState): HTMLElement {
  if (state.lists.length === 0) return state.root;
  const list = state.lists[state.lists.length - 1].element;
  return (list.lastElementChild as HTMLElement | null) || list;
}

function closeLists(state: MarkdownState): void { state.lists = []; }

function flushQuote(state: MarkdownState): void {
  if (state.quote === null) return;
  const block = h('blockquote', null, [renderMarkdown(state.quote.join('\n'))]);
  state.root.appendChild(block);
  state.quote = null;
}

function cells(row: string): string[] {
  return row.trim().replace(/^\|/, '').replace(/\|$/, '').split('|').map(function (cell) { return cell.trim(); });
}

function table(rows: string[]): HTMLElement {
  const head = h('tr', null, cells(rows[0]).map(function (cell) { const element = h('th'); appendInline(element, cell); return element; }));
  const body = rows.slice(1).map(function (row) { return h('tr', null, cells(row).map(function (cell) { const element = h('td'); appendInline(element, cell); return element; })); });
  return h('div', { className: 'md-table' }, [h('table', { className: 'data' }, [h('thead', null, [head]), h('tbody', null, body)])]);
}

/**
 * Inline spans, outermost first; each match's inner text is read again for nested spans (except
 * code). Single underscores are left alone: snake_case names are far more common in responses
 * than _emphasis_.
 */
const inlinePattern = /(`+)([\s\S]*?[^`])\1(?!`)|!\[([^\]]*)\]\(([^)\s]*)[^)]*\)|\[([^\]]+)\]\(([^)\s]*)[^)]*\)|\*\*([^*]+(?:\*(?!\*)[^*]*)*)\*\*|__([^_]+)__|~~([^~]+)~~|\*([^*\s][^*]*?)\*/;

export function appendInline(parent: HTMLElement, text: string): void {
  let rest = text;
  while (rest.length > 0) {
    const match = inlinePattern.exec(rest);
    if (!match) { parent.appendChild(document.createTextNode(rest)); return; }
    if (match.index > 0) parent.appendChild(document.createTextNode(rest.slice(0, match.index)));
    if (match[1] !== undefined) parent.appendChild(h('code', { className: 'md-inline-code', text: match[2] }));
    else if (match[3] !== undefined) parent.appendChild(h('span', { className: 'md-image', text: '[image: ' + (match[3] || match[4]) + ']', title: match[4] }));
    else if (match[5] !== undefined) {
      // A link is shown, never followed: its text, then its address.
      const link = h('span', { className: 'md-link', title: match[6] });
      appendInline(link, match[5]);
      parent.appendChild(link);
      if (match[6] && match[6] !== match[5]) parent.appendChild(h('span', { className: 'md-url mono', text: ' (' + match[6] + ')' }));
    } else {
      const tag = match[7] !== undefined || match[8] !== undefined ? 'strong' : match[9] !== undefined ? 'del' : 'em';
      const element = h(tag);
      appendInline(element, match[7] ?? match[8] ?? match[9] ?? match[10] ?? '');
      parent.appendChild(element);
    }
    rest = rest.slice(match.index + match[0].length);
  }
}
