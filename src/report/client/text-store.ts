/**
 * The long texts of a report (conversations, responses, explanations) sit in chunks after the
 * page code. The store decodes a chunk on demand, each once; loadAll walks them one by one,
 * yielding to the page in between.
 */
import { errorMessage } from './common.js';
import { rubricateChunkIndex, rubricateReadEmbedded } from './decode.js';

export interface TextStore<Chunk> {
  /** The decoded chunk holding an entry's texts, or null while it is not loaded. */
  chunkFor(runIndex: number, entry: number): Chunk | null;
  loadFor(runIndex: number, entry: number): Promise<Chunk | null>;
  complete(): boolean;
  loadAll(onChunk?: (runIndex: number, chunk: Chunk | null) => void): Promise<void>;
}

/**
 * Decodes every chunk in the background once the view is drawn, handing each to onChunk (the
 * explorers' search); the page says when all texts are in (`data-texts-ready`) or why not.
 */
export function loadTextsInBackground<Chunk>(store: TextStore<Chunk>, onChunk: (runIndex: number, chunk: Chunk | null) => void): void {
  setTimeout(function () {
    store.loadAll(onChunk).then(function () {
      document.documentElement.setAttribute('data-texts-ready', '1');
    }, function (error: unknown) {
      document.documentElement.setAttribute('data-report-error', 'texts: ' + errorMessage(error));
    });
  }, 0);
}

/** A run here is anything with entry ids and a chunk size (the compare view passes its pairs). */
export interface TextRun {
  items: { ids: readonly string[] };
  textChunkSize: number;
}

/** Decodes one embedded script element's JSON (and removes the element); null when the page has no such element. */
export function readScript(id: string): Promise<unknown> {
  const element = document.getElementById(id);
  if (!element) return Promise.resolve(null);
  const encoding = element.getAttribute('data-encoding'), text = element.textContent ?? '';
  // Read once, then out of the page: the data lives in the script's memory, and the page's text
  // holds only what is drawn (blind review keeps unreviewed verdicts out of it).
  element.remove();
  return rubricateReadEmbedded(encoding, text);
}

/** Resolves once the parser has read the whole document (the text chunks sit at its end). */
function documentLoaded(): Promise<void> {
  if (document.readyState !== 'loading') return Promise.resolve();
  return new Promise(function (resolve) { document.addEventListener('DOMContentLoaded', function () { resolve(); }, { once: true }); });
}

export function createTextStore<Chunk>(runs: readonly TextRun[]): TextStore<Chunk> {
  const promises = runs.map(function (): Array<Promise<Chunk | null>> { return []; });
  const values = runs.map(function (): Array<Chunk | null> { return []; });
  const counts = runs.map(function (run) { return Math.ceil(run.items.ids.length / run.textChunkSize); });
  let loaded = 0;
  const total = counts.reduce(function (sum, count) { return sum + count; }, 0);
  function load(runIndex: number, chunkIndex: number): Promise<Chunk | null> {
    if (!promises[runIndex][chunkIndex]) {
      promises[runIndex][chunkIndex] = documentLoaded()
        .then(function () { return readScript('rubricate-texts-' + runIndex + '-' + chunkIndex); })
        .then(function (chunk) { values[runIndex][chunkIndex] = chunk as Chunk | null; loaded += 1; return chunk as Chunk | null; });
    }
    return promises[runIndex][chunkIndex];
  }
  return {
    chunkFor: function (runIndex, entry) { return values[runIndex][rubricateChunkIndex(runs[runIndex], entry)] || null; },
    loadFor: function (runIndex, entry) { return load(runIndex, rubricateChunkIndex(runs[runIndex], entry)); },
    complete: function () { return loaded === total; },
    loadAll: function (onChunk) {
      let chain: Promise<void> = Promise.resolve();
      counts.forEach(function (count, runIndex) {
        for (let chunkIndex = 0; chunkIndex < count; chunkIndex += 1) {
          chain = chain
            .then(function () { return new Promise<void>(function (resolve) { setTimeout(resolve, 0); }); })
            .then(function () { return load(runIndex, chunkIndex); })
            .then(function (chunk) { if (onChunk) onChunk(runIndex, chunk); });
        }
      });
      return chain;
    }
  };
}
