/**
 * CaRR's citation context: the pages a deep-research answer cites, as its own tool history
 * showed them. Rules, as in THUDM's released reward server:
 *
 * - a citation is `[n](URL)` followed by `]` or `,` (so `[[1](u)]` and `[[1](u), [2](v)]`); a
 *   `view-source:` or `r.jina.ai/` prefix is dropped; URLs are deduplicated in citation order;
 * - the history is read for `browser.search` results (`[i] Title:`, `[i] URL Source:`,
 *   `[i] Description:`, optional `[i] Date:`), `browser.open` pages (`Title:`, `URL Source:`,
 *   `Published Time:`, `Markdown Content:`) and `browser.find` matches (credited to the page
 *   opened last);
 * - each cited URL the history holds becomes a `[Webpage k]` block (title and time from the
 *   first sighting; snippets, page contents and find matches each written once across blocks),
 *   at most 20 such blocks; a cited URL the history never showed is left out;
 * - no citation, or none the history holds, gives an empty context (the rubric reward is then 0).
 */
import { RubricateError } from '../errors.js';
import { isRecord } from '../util/is-record.js';

export const maxCitedPages = 20;

/** One message of CaRR's history: assistant turns carry `tool_calls`, tool turns a list of outputs. */
export interface CarrHistoryMessage {
  role: string;
  content?: unknown;
  tool_calls?: unknown;
}

interface PageRecord {
  title?: string;
  publishedTime?: string;
  snippets: string[];
  contents: string[];
  finds: Array<{ keyword: string; matches: string }>;
}

/** A URL runs to the first `)` followed by `]` or `,`, as released; at most 2048 characters, so a line of unclosed links is read in bounded steps. */
const citationPattern = /\[\d+\]\((?:view-source:)?(https?:\/\/.{1,2048}?)\)[\],]/g;

/** The cited URLs in order, each once, with the reader-proxy and view-source prefixes dropped. */
export function citedUrls(response: string): string[] {
  const seen = new Set<string>();
  for (const match of response.matchAll(citationPattern)) {
    const url = match[1].replaceAll('https://r.jina.ai/', '').replaceAll('http://r.jina.ai/', '').replaceAll('view-source:', '');
    seen.add(url);
  }
  return [...seen];
}

const titleMarker = /\[(\d+)\]\sTitle:\s/g;

/** The text after the first `marker` in `text` from `from`, split there (undefined: no marker). */
function splitAt(text: string, marker: RegExp, from: number): { before: string; after: number } | undefined {
  marker.lastIndex = from;
  const match = marker.exec(text);
  return match ? { before: text.slice(from, match.index), after: match.index + match[0].length } : undefined;
}

/**
 * `browser.search` results: blocks `[i] Title:`, `[i] URL Source:`, `[i] Description:`, optional
 * `[i] Date:`, each block running to the next `[j] Title:`. Read in one pass over the blocks (each
 * marker searched once), never by backtracking: search snippets are web text.
 */
function searchResults(text: string): Array<{ url: string; title: string; snippet: string; publishedTime: string }> {
  const starts = [...text.matchAll(titleMarker)].map((match) => ({ index: match.index, length: match[0].length, number: match[1] }));
  return starts.flatMap((start, position) => {
    const block = text.slice(start.index, starts[position + 1]?.index ?? text.length);
    const url = splitAt(block, new RegExp(`\\[${start.number}\\]\\sURL\\sSource:\\s`, 'g'), start.length);
    const description = url && splitAt(block, new RegExp(`\\[${start.number}\\]\\sDescription:\\s`, 'g'), url.after);
    // Title, URL and description hold one character at least, as in the released pattern.
    if (!url || !description || url.before.length === 0 || description.before.length === 0 || description.after === block.length) return [];
    const date = splitAt(block, new RegExp(`\\[${start.number}\\]\\sDate:\\s`, 'g'), description.after);
    const snippet = (date ? date.before : block.slice(description.after)).trim();
    return [{ title: url.before.trim(), url: description.before.trim(), snippet, publishedTime: date ? block.slice(date.after).trim() : '' }];
  });
}

function openedPage(text: string): { url: string; title: string; publishedTime: string; content: string } {
  return {
    title: /Title:\s*(.+)/.exec(text)?.[1].trim() ?? '',
    url: /URL Source:\s*(\S+)/.exec(text)?.[1].trim() ?? '',
    publishedTime: /Published Time:\s*([^\n]+)/.exec(text)?.[1].trim() ?? '',
    content: /Markdown Content:\s*([\s\S]*)/.exec(text)?.[1].trim() ?? '',
  };
}

function invalid(index: number, why: string): RubricateError {
  return new RubricateError('INPUT_INVALID', `history[${index}]: ${why}`, { field: `history[${index}]` });
}

function pageOf(pages: Map<string, PageRecord>, url: string, first?: { title: string; publishedTime: string }): PageRecord {
  let page = pages.get(url);
  if (!page) {
    page = { snippets: [], contents: [], finds: [] };
    if (first?.title) page.title = first.title;
    if (first?.publishedTime) page.publishedTime = first.publishedTime;
    pages.set(url, page);
  }
  return page;
}

interface ToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

function recordCalls(message: CarrHistoryMessage, index: number, calls: Map<string, ToolCall>): void {
  if (!Array.isArray(message.tool_calls)) return;
  for (const call of message.tool_calls) {
    if (!isRecord(call) || typeof call.tool_call_id !== 'string' || typeof call.name !== 'string' || typeof call.arguments !== 'string') throw invalid(index, 'a tool call needs string `tool_call_id`, `name` and `arguments`');
    let parsed: unknown;
    try {
      parsed = JSON.parse(call.arguments);
    } catch {
      throw invalid(index, `tool call ${call.tool_call_id}: \`arguments\` is not JSON`);
    }
    calls.set(call.tool_call_id, { name: call.name, arguments: isRecord(parsed) ? parsed : {} });
  }
}

/** Every page the history showed, by URL, in the order first seen. */
function pagesOfHistory(history: readonly CarrHistoryMessage[]): Map<string, PageRecord> {
  const pages = new Map<string, PageRecord>();
  const calls = new Map<string, ToolCall>();
  let currentUrl: string | undefined;
  history.forEach((message, index) => {
    if (message.role === 'assistant') recordCalls(message, index, calls);
    if (message.role !== 'tool' || !Array.isArray(message.content)) return;
    for (const output of message.content) {
      if (!isRecord(output) || typeof output.tool_call_id !== 'string') continue;
      if (typeof output.output !== 'string' || output.output.trim() === '') continue;
      const call = calls.get(output.tool_call_id);
      if (!call) throw invalid(index, `tool output for ${output.tool_call_id}, which no earlier tool call made`);
      if (call.name === 'browser.search') {
        for (const result of searchResults(output.output)) pageOf(pages, result.url, result).snippets.push(result.snippet);
      } else if (call.name === 'browser.open') {
        const page = openedPage(output.output);
        currentUrl = page.url;
        pageOf(pages, page.url, page).contents.push(page.content);
      } else if (call.name === 'browser.find' && currentUrl !== undefined) {
        pageOf(pages, currentUrl).finds.push({ keyword: String(call.arguments.pattern), matches: output.output });
      }
    }
  });
  return pages;
}

/** The citation context the support judge reads ('' when the answer cites nothing the history shows). */
export function citationContext(response: string, history: readonly CarrHistoryMessage[]): string {
  const urls = citedUrls(response);
  if (urls.length === 0) return '';
  const pages = pagesOfHistory(history);
  const written = { snippets: new Set<string>(), contents: new Set<string>(), finds: new Set<string>() };
  let text = '';
  let count = 0;
  const once = (seen: Set<string>, key: string, block: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    text += block;
  };
  for (const url of urls) {
    const page = pages.get(url);
    if (!page) continue;
    count += 1;
    text += `[Webpage ${count}]\nURL Source: ${url}\n`;
    if (page.title) text += `Title: ${page.title}\n`;
    if (page.publishedTime) text += `Published Time: ${page.publishedTime}\n`;
    text += '\n';
    for (const snippet of page.snippets) once(written.snippets, snippet, `Snippet:\n${snippet}\n\n`);
    for (const content of page.contents) once(written.contents, content, `Content:\n${content}\n\n`);
    for (const find of page.finds) once(written.finds, find.matches, `Search Result of Keyword "${find.keyword}":\n${find.matches}\n\n`);
    if (count === maxCitedPages) break;
  }
  return text;
}
