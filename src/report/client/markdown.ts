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

/** The rendered Markdown of text, as a block of elements. */
export function renderMarkdown(text: string): HTMLElement {
  const root = h('div', { className: 'markdown' });
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  let paragraph: string[] = [];
  let lists: ListFrame[] = [];
  let quote: string[] | null = null;

  function flushParagraph(): void {
    if (paragraph.length === 0) return;
    const element = h('p');
    paragraph.forEach(function (line, index) {
      if (index > 0) element.appendChild(document.createElement('br'));
      appendInline(element, line);
    });
    target().appendChild(element);
    paragraph = [];
  }
  function target(): HTMLElement {
    if (lists.length === 0) return root;
    const list = lists[lists.length - 1].element;
    return (list.lastElementChild as HTMLElement | null) || list;
  }
  function closeLists(): void { lists = []; }
  function flushQuote(): void {
    if (quote === null) return;
    const block = h('blockquote', null, [renderMarkdown(quote.join('\n'))]);
    root.appendChild(block);
    quote = null;
  }

  for (let index = 0; index < lines.length; index += 1) {
    const line = lines[index];
    const fence = /^(\s*)(```|~~~)\s*([\w+.-]*)\s*$/.exec(line);
    if (fence) {
      flushParagraph(); flushQuote();
      const closing = fence[2];
      const body: string[] = [];
      index += 1;
      while (index < lines.length && lines[index].trim() !== closing) { body.push(lines[index]); index += 1; }
      target().appendChild(h('pre', { className: 'md-code' }, [h('code', { text: body.join('\n'), data: fence[3] ? { language: fence[3] } : undefined })]));
      continue;
    }
    const quoted = /^\s*>\s?(.*)$/.exec(line);
    if (quoted) {
      flushParagraph(); closeLists();
      (quote = quote || []).push(quoted[1]);
      continue;
    }
    flushQuote();
    if (line.trim() === '') { flushParagraph(); continue; }
    const heading = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      flushParagraph(); closeLists();
      const element = h(('h' + Math.min(6, heading[1].length + 2)) as 'h3', { className: 'md-heading' });
      appendInline(element, heading[2]);
      root.appendChild(element);
      continue;
    }
    if (/^\s{0,3}([-*_])(\s*\1){2,}\s*$/.test(line)) { flushParagraph(); closeLists(); root.appendChild(h('hr')); continue; }
    if (/^\s*\|.*\|\s*$/.test(line) && index + 1 < lines.length && /^\s*\|?\s*:?-{2,}:?\s*(\|\s*:?-{2,}:?\s*)*\|?\s*$/.test(lines[index + 1])) {
      flushParagraph(); closeLists();
      const rows: string[] = [line];
      index += 2;
      while (index < lines.length && /^\s*\|.*\|\s*$/.test(lines[index])) { rows.push(lines[index]); index += 1; }
      index -= 1;
      root.appendChild(table(rows));
      continue;
    }
    const item = /^(\s*)([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(line);
    if (item) {
      flushParagraph();
      const indent = item[1].replace(/\t/g, '    ').length;
      const ordered = /\d/.test(item[2]);
      while (lists.length > 0 && (lists[lists.length - 1].indent > indent || (lists[lists.length - 1].indent === indent && lists[lists.length - 1].ordered !== ordered))) lists.pop();
      if (lists.length === 0 || lists[lists.length - 1].indent < indent) {
        const list = h(ordered ? 'ol' : 'ul');
        if (ordered && parseInt(item[2], 10) !== 1) list.setAttribute('start', String(parseInt(item[2], 10)));
        target().appendChild(list);
        lists.push({ element: list, indent: indent, ordered: ordered });
      }
      const entry = h('li');
      appendInline(entry, item[3]);
      lists[lists.length - 1].element.appendChild(entry);
      continue;
    }
    // A line indented under a list item continues it; anything else ends the lists.
    if (lists.length > 0 && /^\s+\S/.test(line) && paragraph.length === 0) {
      const last = target();
      last.appendChild(document.createElement('br'));
      appendInline(last, line.trim());
      continue;
    }
    if (paragraph.length === 0) closeLists();
    paragraph.push(line.trim());
  }
  flushParagraph(); flushQuote();
  return root;
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
