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
import { reportClientSource } from './client-bundle.js';
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

export interface RenderHtmlOptions {
  compression?: PayloadCompression;
  /** Leave Chart.js out (smaller test pages); charts then show a note instead. */
  withoutCharts?: boolean;
  /** The page may send requests to its own origin (`rubricate view`'s run pages save reviews there); a report file sends none. */
  connectSelf?: boolean;
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
    `<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy}${options.connectSelf ? "; connect-src 'self'" : ''}">`,
    '<meta name="generator" content="rubricate">',
    `<title>${escapeHtml(payload.title)}</title>`,
    `<style>${reportStyles}</style>`,
    '</head>',
    '<body>',
    '<div id="app"><div class="loading"><div class="spinner"></div><div>Loading report…</div></div></div>',
    `<script type="application/json" id="rubricate-payload" data-encoding="${data.encoding}">${data.text}</script>`,
  );
  if (!options.withoutCharts) parts.push(`<script>${chartLibrarySource()}</script>`);
  parts.push(`<script>${reportClientSource()}</script>`);
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
