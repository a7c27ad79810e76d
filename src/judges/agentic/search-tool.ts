/**
 * `search`: ranked text search over the documents a run provides (`--documents`): a folder of
 * text files (`.txt`, `.md`, `.html`, `.json`; the file name is the id) or a JSONL file of
 * `{id, text, title?, url?}`. Read once when the judge is built, bounded in count and bytes
 * before anything is kept, and ranked by BM25 over lower-cased words. Its hash is part of the
 * judge's identity, so a cached verdict never comes from other documents.
 */
import { createHash } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { RubricateError } from '../../errors.js';
import { readLines, parseLineJson } from '../../util/jsonl.js';
import { isRecord } from '../../util/is-record.js';
import { bounded, optionalInteger, stringArgument, toolFailed, type AgenticTool } from './tool.js';

export interface SearchDocument {
  id: string;
  text: string;
  title?: string;
  url?: string;
}

export interface DocumentIndex {
  documents: SearchDocument[];
  /** sha256 of every document, in order: what the judge's cache identity takes. */
  sha256: string;
  /** Per document: how often each word occurs, and its length in words. */
  terms: Array<Map<string, number>>;
  lengths: number[];
  /** Documents each word occurs in. */
  documentFrequency: Map<string, number>;
}

/** Bounds on the documents one run reads: their number and their bytes in all. */
export const documentLimits = { maxDocuments: 100_000, maxBytes: 64 * 1024 * 1024 } as const;
const folderExtensions = new Set(['.txt', '.md', '.html', '.htm', '.json']);

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

function documentsError(path: string, message: string, details: Record<string, unknown> = {}): RubricateError {
  return new RubricateError('CONFIG_INVALID', `--documents ${path}: ${message}`, { field: 'documents', file: path, ...details });
}

async function readFolder(path: string): Promise<SearchDocument[]> {
  const names = (await readdir(path, { withFileTypes: true })).filter((entry) => entry.isFile() && folderExtensions.has(extname(entry.name).toLowerCase())).map((entry) => entry.name).sort();
  if (names.length > documentLimits.maxDocuments) throw documentsError(path, `${names.length} documents, over the bound of ${documentLimits.maxDocuments}`);
  let total = 0;
  const documents: SearchDocument[] = [];
  for (const name of names) {
    total += (await stat(join(path, name))).size;
    if (total > documentLimits.maxBytes) throw documentsError(path, `over ${documentLimits.maxBytes} bytes of documents`);
    documents.push({ id: name, text: await readFile(join(path, name), 'utf8') });
  }
  return documents;
}

function documentOf(value: unknown, path: string, line: number): SearchDocument {
  if (!isRecord(value)) throw documentsError(path, `line ${line}: a document is an object {id, text, title?, url?}`, { line });
  for (const field of ['id', 'text'] as const) {
    if (typeof value[field] !== 'string' || value[field] === '') throw documentsError(path, `line ${line}: field "${field}" must be a non-empty string`, { line, field });
  }
  for (const field of ['title', 'url'] as const) {
    if (value[field] !== undefined && typeof value[field] !== 'string') throw documentsError(path, `line ${line}: field "${field}" must be a string`, { line, field });
  }
  return { id: value.id as string, text: value.text as string, ...(value.title ? { title: value.title as string } : {}), ...(value.url ? { url: value.url as string } : {}) };
}

async function readJsonLines(path: string): Promise<SearchDocument[]> {
  if ((await stat(path)).size > documentLimits.maxBytes) throw documentsError(path, `over ${documentLimits.maxBytes} bytes of documents`);
  const documents: SearchDocument[] = [];
  for await (const { line, text, error } of readLines(path)) {
    if (text.trim() === '' && !error) continue;
    const parsed = parseLineJson(text, error);
    if (!parsed.ok) throw documentsError(path, `line ${line}: ${parsed.error}`, { line });
    documents.push(documentOf(parsed.value, path, line));
    if (documents.length > documentLimits.maxDocuments) throw documentsError(path, `over ${documentLimits.maxDocuments} documents`);
  }
  return documents;
}

/** Reads and indexes a run's documents; a bad file is CONFIG_INVALID naming it (and the line). */
export async function loadDocuments(path: string): Promise<DocumentIndex> {
  let isFolder: boolean;
  try {
    isFolder = (await stat(path)).isDirectory();
  } catch (error) {
    throw documentsError(path, (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : (error as Error).message);
  }
  const documents = isFolder ? await readFolder(path) : await readJsonLines(path);
  if (documents.length === 0) throw documentsError(path, 'holds no documents');
  const hash = createHash('sha256');
  const documentFrequency = new Map<string, number>();
  const terms = documents.map((document) => {
    hash.update(`${document.id}\u0000${document.title ?? ''}\u0000${document.url ?? ''}\u0000${document.text}\u0001`);
    const counts = new Map<string, number>();
    for (const word of words(`${document.title ?? ''} ${document.text}`)) counts.set(word, (counts.get(word) ?? 0) + 1);
    for (const word of counts.keys()) documentFrequency.set(word, (documentFrequency.get(word) ?? 0) + 1);
    return counts;
  });
  const lengths = terms.map((counts) => [...counts.values()].reduce((sum, count) => sum + count, 0));
  return { documents, sha256: hash.digest('hex'), terms, lengths, documentFrequency };
}

/** Documents ranked by BM25 (k1 1.2, b 0.75) for a query's words; ties keep the documents' order. */
export function rankDocuments(index: DocumentIndex, query: string, top: number): Array<{ document: SearchDocument; score: number }> {
  const queryWords = [...new Set(words(query))];
  const count = index.documents.length;
  const averageLength = index.lengths.reduce((sum, length) => sum + length, 0) / count || 1;
  const scored = index.terms.map((counts, position) => {
    let score = 0;
    for (const word of queryWords) {
      const frequency = counts.get(word);
      if (!frequency) continue;
      const containing = index.documentFrequency.get(word) ?? 0;
      const idf = Math.log(1 + (count - containing + 0.5) / (containing + 0.5));
      score += (idf * frequency * 2.2) / (frequency + 1.2 * (0.25 + (0.75 * index.lengths[position]) / averageLength));
    }
    return { position, score };
  });
  return scored
    .filter((entry) => entry.score > 0)
    .sort((left, right) => right.score - left.score || left.position - right.position)
    .slice(0, top)
    .map((entry) => ({ document: index.documents[entry.position], score: entry.score }));
}

/** The passage of a document around the first query word it holds (its start when none). */
function passage(text: string, query: string, characters = 1200): string {
  const lower = text.toLowerCase();
  const hits = words(query).map((word) => lower.indexOf(word)).filter((index) => index >= 0);
  const start = Math.max(0, (hits.length > 0 ? Math.min(...hits) : 0) - characters / 4);
  return `${start > 0 ? '…' : ''}${text.slice(start, start + characters)}${start + characters < text.length ? '…' : ''}`;
}

export function createSearchTool(index: DocumentIndex): AgenticTool {
  return {
    name: 'search',
    description: `search: ranked text search over the ${index.documents.length} documents this run provides. Arguments: "query" (words to look for) and "top" (results, 1 to 10; default 3). Each result gives the document's id, title, URL and a passage.`,
    arguments: ['query', 'top'],
    async run(args) {
      const query = stringArgument('search', args, 'query');
      const top = optionalInteger('search', args, 'top', 1, 10) ?? 3;
      if (words(query).length === 0) throw toolFailed('search', 'the query holds no words');
      const ranked = rankDocuments(index, query, top);
      const shown = ranked.map(({ document, score }, place) =>
        [`[${place + 1}] id: ${document.id}${document.title ? `; title: ${document.title}` : ''}${document.url ? `; url: ${document.url}` : ''}; score ${score.toFixed(3)}`, passage(document.text, query)].join('\n'),
      );
      const text = bounded(ranked.length === 0 ? `no document matches "${query}"` : shown.join('\n\n'));
      return { text, summary: `${ranked.length} of ${index.documents.length} documents: ${ranked.map(({ document }) => document.id).join(', ')}`.slice(0, 200) };
    },
  };
}
