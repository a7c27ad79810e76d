/**
 * Assembles the single-file HTML report: stylesheet, Chart.js, page code and the embedded
 * data, all inline, under a Content-Security-Policy that forbids every network request, so
 * the report works offline and nothing in it can call out.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { RubricateError } from '../../errors.js';
import { embedPayload, escapeHtml, plainCoreLimitBytes, type PayloadCompression } from '../encoding.js';
import type { ReportPayload, TextChunk } from '../types.js';
import { clientCommonSource } from './client-common.js';
import { clientDecoderSource } from './client-decode.js';
import { clientFrameSource } from './client-frame.js';
import { clientMetaSource } from './client-meta.js';
import { clientPairwiseDecoderSource, clientPairwiseSource } from './client-pairwise.js';
import { clientResultsSource } from './client-results.js';
import { reportStyles } from './styles.js';

let chartLibrary: string | undefined;

/**
 * Chart.js's browser build, read from the installed package. Its `exports` map hides the
 * dist files, so resolve the package entry and take the UMD file beside it (works from src/
 * and from a built dist/, wherever node_modules is).
 */
export function chartLibrarySource(): string {
  if (chartLibrary !== undefined) return chartLibrary;
  const require = createRequire(import.meta.url);
  let entry: string;
  try {
    entry = require.resolve('chart.js');
  } catch (error) {
    throw new RubricateError('INTERNAL', 'chart.js is not installed; reinstall rubricate', {}, { cause: error });
  }
  const source = readFileSync(join(dirname(entry), 'chart.umd.min.js'), 'utf8');
  // Inline script text must not contain a closing script tag.
  chartLibrary = source.replace(/<\/(script)/gi, '<\\/$1');
  return chartLibrary;
}

/**
 * The views a page can show, by `payload.view`. A new view adds its renderer here and its
 * payload type to `ReportPayload`.
 */
const bootSource = String.raw`
var views = {
  results: renderResultsView,
  'meta-binary': renderBinaryMetaView,
  'meta-pairwise': renderPairwiseMetaView,
  compare: renderPairwiseCompareView
};

function readScript(id) {
  var element = document.getElementById(id);
  if (!element) return Promise.resolve(null);
  return rubricateReadEmbedded(element.getAttribute('data-encoding'), element.textContent);
}

/** Resolves once the parser has read the whole document (the text chunks sit at its end). */
function documentLoaded() {
  if (document.readyState !== 'loading') return Promise.resolve();
  return new Promise(function (resolve) { document.addEventListener('DOMContentLoaded', function () { resolve(); }, { once: true }); });
}

/**
 * Decodes the runs' text chunks on demand, each once; loadAll walks them one by one, yielding
 * in between. A run here is anything with items.ids and textChunkSize (the compare view passes its pairs).
 */
function createTextStore(runs) {
  var promises = runs.map(function () { return []; });
  var values = runs.map(function () { return []; });
  var counts = runs.map(function (run) { return Math.ceil(run.items.ids.length / run.textChunkSize); });
  var loaded = 0;
  var total = counts.reduce(function (sum, count) { return sum + count; }, 0);
  function load(runIndex, chunkIndex) {
    if (!promises[runIndex][chunkIndex]) {
      promises[runIndex][chunkIndex] = documentLoaded()
        .then(function () { return readScript('rubricate-texts-' + runIndex + '-' + chunkIndex); })
        .then(function (chunk) { values[runIndex][chunkIndex] = chunk; loaded += 1; return chunk; });
    }
    return promises[runIndex][chunkIndex];
  }
  return {
    chunkFor: function (runIndex, item) { return values[runIndex][rubricateChunkIndex(runs[runIndex], item)] || null; },
    loadFor: function (runIndex, item) { return load(runIndex, rubricateChunkIndex(runs[runIndex], item)); },
    complete: function () { return loaded === total; },
    loadAll: function (onChunk) {
      var chain = Promise.resolve();
      counts.forEach(function (count, runIndex) {
        for (var chunkIndex = 0; chunkIndex < count; chunkIndex += 1) {
          (function (chunkIndex) {
            chain = chain
              .then(function () { return new Promise(function (resolve) { setTimeout(resolve, 0); }); })
              .then(function () { return load(runIndex, chunkIndex); })
              .then(function (chunk) { if (onChunk) onChunk(runIndex, chunk); });
          })(chunkIndex);
        }
      });
      return chain;
    }
  };
}

function boot() {
  var root = document.getElementById('app');
  readScript('rubricate-payload').then(function (payload) {
    var view = views[payload.view];
    if (!view) throw new Error('This copy of rubricate cannot show a "' + payload.view + '" report.');
    root.textContent = '';
    var textRuns = payload.runs || (payload.view === 'compare' ? [{ items: { ids: payload.pairs.ids }, textChunkSize: payload.textChunkSize }] : null);
    view(root, payload, textRuns ? createTextStore(textRuns) : null);
    document.documentElement.setAttribute('data-report-ready', '1');
    if (performance.mark) performance.mark('rubricate-ready');
  }).catch(function (error) {
    showFatal(root, error);
    document.documentElement.setAttribute('data-report-error', error && error.message ? error.message : String(error));
  });
}

boot();
`;

export interface RenderHtmlOptions {
  compression?: PayloadCompression;
  /** Leave Chart.js out (smaller test pages); charts then show a note instead. */
  withoutCharts?: boolean;
}

const contentSecurityPolicy = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; base-uri 'none'; form-action 'none'";

export function renderReportHtml(payload: ReportPayload, texts: ReadonlyArray<readonly TextChunk[]>, options: RenderHtmlOptions = {}): string {
  const compression = options.compression ?? 'auto';
  const data = embedPayload(payload, compression, plainCoreLimitBytes);
  const parts: string[] = [];
  parts.push(
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy}">`,
    '<meta name="generator" content="rubricate">',
    `<title>${escapeHtml(payload.title)}</title>`,
    `<style>${reportStyles}</style>`,
    '</head>',
    '<body>',
    '<div id="app"><div class="loading"><div class="spinner"></div><div>Loading report…</div></div></div>',
    `<script type="application/json" id="rubricate-payload" data-encoding="${data.encoding}">${data.text}</script>`,
  );
  if (!options.withoutCharts) parts.push(`<script>${chartLibrarySource()}</script>`);
  parts.push(`<script>(function () {\n'use strict';\n${clientDecoderSource}\n${clientCommonSource}\n${clientFrameSource}\n${clientResultsSource}\n${clientMetaSource}\n${clientPairwiseDecoderSource}\n${clientPairwiseSource}\n${bootSource}\n})();</script>`);
  // Long texts come after the page code: the browser runs the page (and paints the overview)
  // before it has parsed them, and the page reads them once the document has finished loading.
  texts.forEach((chunks, runIndex) => {
    chunks.forEach((chunk, chunkIndex) => {
      const embedded = embedPayload(chunk, compression);
      parts.push(`<script type="application/json" id="rubricate-texts-${runIndex}-${chunkIndex}" data-encoding="${embedded.encoding}">${embedded.text}</script>`);
    });
  });
  parts.push(
    '</body>',
    '</html>',
    '',
  );
  return parts.join('\n');
}
