/**
 * `POST /labels?file=RUN`: the reviews made in a run's page, saved as you go to a labels file
 * beside the run (`run.jsonl` → `run.labels.jsonl`), in the format `rubricate meta --labels`,
 * `report --labels` and `align` read. The page sends every review it holds each time one
 * changes, so the file is always the whole set; a closed browser loses nothing.
 *
 * Guarded as the rest of the viewer is (loopback Host only), and more, since it writes: the
 * request must come from the viewer's own page (its Origin is the viewer's own address) and be
 * JSON (a cross-site page cannot send that without a preflight the viewer never grants); the
 * body is bounded before it is read; each line is checked as a label line; the file is written
 * atomically and never over an input (the run itself, through a link or otherwise).
 */
import { basename, dirname, join } from 'node:path';
import type { Context, Hono } from 'hono';
import { RubricateError, toRubricateError } from '../../errors.js';
import { parseLabelLine } from '../../meta/labels.js';
import { readJsonBody } from '../../server/body.js';
import { hostnameOf, isLoopbackHost } from '../../server/browser-guard.js';
import { httpStatusOf } from '../../server/http-error.js';
import { checkFiles, writeFileAtomic } from '../../util/files.js';
import { isRecord } from '../../util/is-record.js';
import type { RunFolder } from './folder.js';

/** The largest labels body the viewer reads (a review is a short line: this is millions of them). */
export const maximumLabelsBodyBytes = 16 * 1024 * 1024;
/** Reviews one save may hold. */
const maximumLabelLines = 1_000_000;

/** Where a run's reviews are saved: beside it, `NAME.labels.jsonl` for `NAME.jsonl` (or `NAME.json`). */
export function labelsPathOf(runPath: string): string {
  return join(dirname(runPath), `${basename(runPath).replace(/\.(jsonl|json)$/i, '')}.labels.jsonl`);
}

/** The request came from a page of this viewer: an Origin naming the loopback address the request was sent to. */
function fromOwnPage(context: Context): boolean {
  const origin = context.req.header('origin');
  const host = context.req.header('host');
  if (!origin || !host) return false;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  return parsed.protocol === 'http:' && parsed.host === host && isLoopbackHost(hostnameOf(host));
}

/** The body's label lines, each checked as `meta --labels` checks a line, in the order sent. */
function labelLines(body: unknown): string[] {
  if (!isRecord(body) || !Array.isArray(body.labels)) throw new RubricateError('INPUT_INVALID', 'expected {"labels": [label line, …]}', { field: 'labels' });
  if (body.labels.length > maximumLabelLines) throw new RubricateError('INPUT_INVALID', `at most ${maximumLabelLines} labels in one save`, { field: 'labels' });
  return body.labels.map((line, index) => {
    const parsed = parseLabelLine(line, { line: index + 1 });
    if (parsed instanceof RubricateError) throw new RubricateError('INPUT_INVALID', `labels[${index}]: ${parsed.message}`, { field: `labels[${index}]` });
    return JSON.stringify(line);
  });
}

export function registerLabelsRoute(app: Hono, folder: RunFolder): void {
  app.post('/labels', async (context) => {
    try {
      if (!fromOwnPage(context)) throw new RubricateError('FORBIDDEN_ORIGIN', "reviews are saved from the viewer's own pages only");
      const file = context.req.query('file');
      const runPath = file === undefined ? undefined : await folder.read(file, async (path) => path);
      if (!runPath) throw new RubricateError('NOT_FOUND', `"${file ?? ''}" is not a file of this folder`, { field: 'file' });
      const lines = labelLines(await readJsonBody(context, maximumLabelsBodyBytes));
      const target = labelsPathOf(runPath);
      // Never over an input: the run (or anything the target links to that is the run).
      checkFiles({ inputs: [{ flag: 'file', path: runPath }], outputs: [{ flag: 'labels', path: target }] });
      await writeFileAtomic(target, lines.map((line) => `${line}\n`).join(''));
      return context.json({ file: basename(target), labels: lines.length });
    } catch (error) {
      const failure = toRubricateError(error, 'INTERNAL');
      return context.json({ error: { code: failure.code, message: failure.message } }, httpStatusOf(failure) as 400);
    }
  });
}
