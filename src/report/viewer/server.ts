/**
 * `rubricate view`: a local server over a folder of runs, on loopback only. It serves pages
 * made the way a report is made (one self-contained HTML file each, the same page script and
 * views, no request beyond the page): the index of runs, the comparison of any runs chosen, and
 * any one file as its own report. Comparisons are computed here, on demand, with the report's
 * own code (`compareRuns`, the paired bootstrap), so the viewer never disagrees with a report.
 *
 * Only GET is answered (and `POST /labels`, a run page saving its reviews beside the run), only
 * for a Host naming the loopback interface (a page elsewhere cannot read these pages through a
 * rebound DNS name), and only files found by walking the folder are ever read.
 */
import { listenError } from '../../util/listen-error.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, resolve } from 'node:path';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { RubricateError } from '../../errors.js';
import { isLoopbackHostHeader } from '../../util/loopback-host.js';
import { redactText } from '../../util/redact.js';
import { rubricateVersion } from '../../version.js';
import { escapeHtml } from '../encoding.js';
import { renderReportHtml } from '../html/page.js';
import { buildReport, renderReport } from '../index.js';
import { reportPayloadVersion, type RunsComparePayload, type RunsIndexPayload } from '../types.js';
import { compareManyRuns } from './compare-runs.js';
import { openRunFolder, type RunFolder } from './folder.js';
import { openRunHistory, withRunHistory, type HistoryFolder } from './history.js';
import { registerLabelsRoute } from './labels-endpoint.js';

export const defaultViewerPort = 8011;
const loopbackHost = '127.0.0.1';
/** Runs one comparison page takes at most (each embeds its columns). */
const maximumRunsCompared = 12;

export interface ViewerOptions {
  /** The folder of runs; without it, the runs of the run history (`runIndex`). */
  folder?: string;
  /** The run history: its runs are labelled (live while running), and listed when no folder is given. */
  runIndex?: string;
  /** 0 picks a free port; default 8011 (a fixed port keeps the browser's saved reviews, which are per address). */
  port?: number;
  /** Bootstrap settings of the comparisons. */
  bootstrapSamples?: number;
  seed?: number;
}

export interface RunningViewer {
  url: string;
  port: number;
  server: Server;
  close(): Promise<void>;
}

/** A fresh set per response: the node adapter adds the body's length to the object it is given. */
const pageHeaders = (): Record<string, string> => ({
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
});

function messagePage(status: number, title: string, message: string): Response {
  const body = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'"><title>${escapeHtml(title)}</title></head><body style="font: 15px/1.5 system-ui, sans-serif; max-width: 720px; margin: 12vh auto; padding: 0 20px"><h1 style="font-size: 20px">${escapeHtml(title)}</h1><p>${escapeHtml(redactText(message))}</p><p><a href="/">All runs</a></p></body></html>`;
  return new Response(body, { status, headers: pageHeaders() });
}

/** The runs a viewer shows: a folder, or the run history (which also says which runs are live, and how far they are). */
type ViewerFolder = RunFolder & Partial<Pick<HistoryFolder, 'historyOf' | 'state'>>;

export function createViewerApp(folder: ViewerFolder, options: Pick<ViewerOptions, 'bootstrapSamples' | 'seed'> = {}): Hono {
  const app = new Hono();
  app.use('*', async (context, next) => {
    const host = context.req.header('host') ?? new URL(context.req.url).host;
    if (!isLoopbackHostHeader(host)) return messagePage(403, 'Not this address', `The viewer answers on the loopback address only, not "${host}".`);
    // One write: the reviews of a run's page, saved beside it (labels-endpoint.ts guards it further).
    const savingLabels = context.req.method === 'POST' && context.req.path === '/labels';
    if (context.req.method !== 'GET' && context.req.method !== 'HEAD' && !savingLabels) return messagePage(405, 'Read only', 'The viewer only shows runs and saves their reviews.');
    await next();
  });
  app.onError((error) => {
    const known = RubricateError.isInstance(error);
    return messagePage(known && error.code === 'INPUT_INVALID' ? 404 : 500, known ? 'Cannot show this' : 'Something went wrong', error.message);
  });
  app.get('/', () => runsIndexPage(folder));
  app.get('/compare', (context) => runsComparePage(folder, context.req.queries('run') ?? [], options));
  app.get('/run', (context) => runPage(folder, context.req.query('file'), context.req.query('compare')));
  // A run's size, complete lines and history status, for a page or a script watching it grow.
  app.get('/api/run-state', async (context) => {
    const file = context.req.query('file');
    const state = file === undefined || !folder.state ? undefined : await folder.state(file);
    if (!state) return new Response(JSON.stringify({ error: `"${file ?? ''}" is not a run of this viewer` }), { status: 404, headers: jsonHeaders() });
    return new Response(JSON.stringify(state), { headers: jsonHeaders() });
  });
  registerLabelsRoute(app, folder);
  app.notFound(() => messagePage(404, 'Not found', 'The viewer has the list of runs at /, comparisons at /compare and single runs at /run.'));
  return app;
}

/** The list of runs (reloading itself while one of them is still being graded). */
async function runsIndexPage(folder: ViewerFolder): Promise<Response> {
  const { runs, skipped } = await folder.index();
  const payload: RunsIndexPayload = {
    view: 'runs',
    version: reportPayloadVersion,
    title: `Runs · ${basename(resolve(folder.folder))}`,
    generatedAt: new Date().toISOString(),
    rubricateVersion,
    folder: folder.folder,
    runs,
    skipped,
  };
  const live = runs.some((entry) => entry.history?.live);
  return new Response(live ? withLiveRefresh(renderReportHtml(payload, []), 'a run is still being graded') : renderReportHtml(payload, []), { headers: pageHeaders() });
}

/** The comparison of the runs chosen (2 to 12, each once), every one scored as the first is. */
async function runsComparePage(folder: ViewerFolder, files: string[], options: Pick<ViewerOptions, 'bootstrapSamples' | 'seed'>): Promise<Response> {
  if (files.length < 2) return messagePage(400, 'Choose two runs or more', 'A comparison needs at least two runs: tick them in the list of runs.');
  if (files.length > maximumRunsCompared) return messagePage(400, 'Too many runs', `A comparison takes at most ${maximumRunsCompared} runs.`);
  if (new Set(files).size !== files.length) return messagePage(400, 'A run given twice', 'Each run can be compared once.');
  const reference = await folder.run(files[0]);
  // Every run scored as the reference is, or their differences would mean nothing.
  const runs = [reference, ...(await Promise.all(files.slice(1).map((file) => folder.run(file, reference.scoring.name))))];
  const payload: RunsComparePayload = {
    view: 'runs-compare',
    version: reportPayloadVersion,
    title: `${files.length} runs compared`,
    generatedAt: new Date().toISOString(),
    rubricateVersion,
    files,
    ...compareManyRuns(runs, { bootstrapSamples: options.bootstrapSamples, seed: options.seed }),
  };
  return new Response(renderReportHtml(payload, []), { headers: pageHeaders() });
}

/** One file as its own report, or against another file of the folder; live while the history says it is running. */
async function runPage(folder: ViewerFolder, file: string | undefined, compare: string | undefined): Promise<Response> {
  const notListed = (name: string | undefined) => messagePage(404, 'No such run', `"${name ?? ''}" is not a file of this folder.`);
  if (file === undefined) return notListed(file);
  // Each file is checked as it is read (no link followed, still inside the folder), both held while the report is built.
  const build = (path: string, comparePath?: string) => buildReport({ input: path, ...(comparePath ? { compare: comparePath } : {}), title: comparePath ? `${file} vs ${compare}` : file });
  const page = await folder.read(file, async (path) => {
    // A run the history marks as running is shown live (the page reloads as its results grow).
    if (compare === undefined) return { document: await build(path), live: (await folder.historyOf?.(path))?.status === 'running' };
    const compared = await folder.read(compare, async (comparePath) => ({ document: await build(path, comparePath), live: false }));
    if (!compared) throw new RubricateError('INPUT_INVALID', `"${compare}" is not a file of this folder.`, { field: 'compare' });
    return compared;
  });
  if (!page) return notListed(file);
  // A run's page saves its reviews to the viewer (`POST /labels`): the one request it may send.
  const html = renderReport(page.document, 'html', { connectSelf: true });
  return new Response(page.live ? withLiveRefresh(html) : html, { headers: pageHeaders() });
}

/** Seconds between reloads of a live run's page. */
export const liveRefreshSeconds = 3;

/**
 * A live run's page: it reloads itself while the run writes its results, each time rebuilt from
 * the file as it is (the page makes no request of its own: its policy forbids them), under a banner.
 */
function withLiveRefresh(html: string, what = 'this run is still being graded'): string {
  const banner = `<div data-testid="live-banner" style="position: sticky; top: 0; z-index: 10; padding: 6px 16px; background: #fff4d6; color: #5c4400; font: 13px/1.4 system-ui, sans-serif; border-bottom: 1px solid #e9d49a">● Live: ${what}; the page reloads every ${liveRefreshSeconds} s with the results written so far.</div>`;
  return html.replace('<head>', `<head><meta http-equiv="refresh" content="${liveRefreshSeconds}">`).replace('<body>', `<body>${banner}`);
}

const jsonHeaders = (): Record<string, string> => ({ 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'x-content-type-options': 'nosniff' });

/** Starts the viewer on 127.0.0.1: over a folder (its runs labelled from the run history), or over the run history itself. */
export async function startViewer(options: ViewerOptions): Promise<RunningViewer> {
  if (options.folder === undefined && options.runIndex === undefined) throw new RubricateError('CONFIG_INVALID', 'the viewer needs a folder of runs, or a run history to list', { field: 'folder' });
  const folder = options.folder !== undefined ? withRunHistory(openRunFolder(options.folder), options.runIndex) : openRunHistory(options.runIndex!);
  const app = createViewerApp(folder, options);
  const server = createServer(getRequestListener(app.fetch));
  const port = options.port ?? defaultViewerPort;
  await new Promise<void>((done, fail) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      fail(listenError(loopbackHost, port, error, 'the viewer'));
    });
    server.listen(port, loopbackHost, () => done());
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${loopbackHost}:${address.port}/`,
    port: address.port,
    server,
    close: () =>
      new Promise<void>((done) => {
        server.close(() => done());
        server.closeAllConnections();
      }),
  };
}
