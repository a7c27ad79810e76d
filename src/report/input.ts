/**
 * What a report is made from, decided by content: a results JSONL file (one record per line),
 * a `rubricate compare` JSONL file (its records have `winner` / `orders` and no `score`), or a
 * meta-evaluation report (one JSON document with `kind: "binary" | "pairwise"`).
 */
import { open, readFile, stat } from 'node:fs/promises';
import { RubricateError } from '../errors.js';
import type { BinaryMetaReport } from '../meta/binary-metrics.js';
import type { PairwiseMetaReport } from '../scoring/pairwise-metrics.js';
import type { ProbeReport } from '../meta/probes/runner.js';
import { safeParseJson } from '../util/json.js';
import { parseLineJson, readLines } from '../util/jsonl.js';
import { looksLikeCompareRecord } from './pairwise.js';
import { isRecord } from '../util/is-record.js';

export type DetectedInput = { kind: 'results' } | { kind: 'compare' } | { kind: 'meta'; report: BinaryMetaReport | PairwiseMetaReport } | { kind: 'probes'; report: ProbeReport };

const peekBytes = 64 * 1024;
/** A meta report is a summary; anything larger read as one document is a mistake. */
const maximumMetaBytes = 256 * 1024 * 1024;
/** Lines read looking for the first readable record when the first line is not one. */
const linesScanned = 1000;

function notFound(file: string, error: unknown): RubricateError {
  const code = (error as NodeJS.ErrnoException).code;
  return new RubricateError('INPUT_INVALID', code === 'ENOENT' ? 'file not found' : (error as Error).message, { file }, { cause: error });
}

/** Checks the fields the meta views read; names the first one missing. */
export function validateMetaReport(value: Record<string, unknown>, file: string): BinaryMetaReport | PairwiseMetaReport {
  const overall = value.overall;
  const fail = (field: string, message: string) => new RubricateError('INPUT_INVALID', `not a meta-evaluation report: ${message}`, { file, field });
  if (!isRecord(overall)) throw fail('overall', 'missing the overall metrics');
  if (!isRecord(value.bootstrap)) throw fail('bootstrap', 'missing the bootstrap settings');
  if (value.kind === 'binary') {
    if (!isRecord(overall.confusion)) throw fail('overall.confusion', 'missing the confusion counts');
    if (!isRecord(overall.intervals)) throw fail('overall.intervals', 'missing the intervals');
    if (!isRecord(value.groups)) throw fail('groups', 'missing the group breakdowns');
    if (!isRecord(value.agreement)) throw fail('agreement', 'missing the agreement figures');
    return value as unknown as BinaryMetaReport;
  }
  if (!isRecord(overall.accuracy)) throw fail('overall.accuracy', 'missing the accuracies');
  if (!isRecord(overall.verdicts)) throw fail('overall.verdicts', 'missing the verdict counts');
  if (!isRecord(overall.intervals)) throw fail('overall.intervals', 'missing the intervals');
  if (!isRecord(overall.judgeBench)) throw fail('overall.judgeBench', 'missing the JudgeBench figures');
  if (!isRecord(value.bySource) || !isRecord(value.byCategory)) throw fail('bySource', 'missing the source and category breakdowns');
  return value as unknown as PairwiseMetaReport;
}

function isMetaKind(value: unknown): value is Record<string, unknown> {
  return isRecord(value) && (value.kind === 'binary' || value.kind === 'pairwise' || value.kind === 'probes');
}

/** Checks the fields the probe view reads; names the first one missing. */
export function validateProbeReport(value: Record<string, unknown>, file: string): ProbeReport {
  const fail = (field: string, message: string) => new RubricateError('INPUT_INVALID', `not a probe report: ${message}`, { file, field });
  if (!Array.isArray(value.probes)) throw fail('probes', 'missing the list of probes');
  if (!isRecord(value.items)) throw fail('items', 'missing the item counts');
  if (!isRecord(value.bootstrap)) throw fail('bootstrap', 'missing the bootstrap settings');
  value.probes.forEach((probe, index) => {
    if (!isRecord(probe) || typeof probe.probe !== 'string') throw fail(`probes[${index}].probe`, 'a probe without its name');
    if (!isRecord(probe.drift) || !isRecord(probe.flips)) throw fail(`probes[${index}].drift`, 'a probe without its drift and flips');
    if (!Array.isArray(probe.byCriterion) || !Array.isArray(probe.perItem)) throw fail(`probes[${index}].perItem`, 'a probe without its per-criterion and per-item figures');
  });
  return value as unknown as ProbeReport;
}

/** A meta-evaluation or probe report, by its kind. */
function documentInput(value: Record<string, unknown>, file: string): DetectedInput {
  return value.kind === 'probes' ? { kind: 'probes', report: validateProbeReport(value, file) } : { kind: 'meta', report: validateMetaReport(value, file) };
}

/** JSON lines: results or compare records, told apart by the first readable record. */
function linesKind(record: unknown): DetectedInput {
  return isRecord(record) && looksLikeCompareRecord(record) ? { kind: 'compare' } : { kind: 'results' };
}

/** Reads lines (each in full, however long) up to the first JSON object and classifies the file by it. */
async function scanLines(file: string): Promise<DetectedInput> {
  let scanned = 0;
  for await (const { text, error: lineError } of readLines(file)) {
    const parsed = parseLineJson(text, lineError);
    if (parsed.ok && isRecord(parsed.value)) return linesKind(parsed.value);
    scanned += 1;
    if (scanned >= linesScanned) break;
  }
  return { kind: 'results' };
}

export async function detectReportInput(file: string): Promise<DetectedInput> {
  let handle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    throw notFound(file, error);
  }
  let head: string;
  try {
    const buffer = Buffer.alloc(peekBytes);
    const { bytesRead } = await handle.read(buffer, 0, peekBytes, 0);
    head = buffer.subarray(0, bytesRead).toString('utf8').replace(/^\uFEFF/, '');
  } finally {
    await handle.close();
  }
  const trimmed = head.trimStart();
  if (!trimmed.startsWith('{')) return trimmed === '' ? { kind: 'results' } : scanLines(file);
  const newline = trimmed.indexOf('\n');
  const firstLine = safeParseJson(newline < 0 ? trimmed : trimmed.slice(0, newline));
  if (firstLine.ok) {
    // A whole document on its first line: a one-line meta report, else a results or compare line.
    if (isMetaKind(firstLine.value)) return documentInput(firstLine.value, file);
    return linesKind(firstLine.value);
  }
  // The first line is not a JSON value on its own: a pretty-printed document, a line longer
  // than the peek, or a bad line.
  const size = (await stat(file)).size;
  if (size > maximumMetaBytes) return scanLines(file);
  const whole = safeParseJson(await readFile(file, 'utf8'));
  if (!whole.ok) return scanLines(file);
  if (isMetaKind(whole.value)) return documentInput(whole.value, file);
  if (newline < 0) return linesKind(whole.value);
  throw new RubricateError(
    'INPUT_INVALID',
    'neither a results file nor a compare file (JSON lines) nor a meta-evaluation or probe report (a JSON document with kind "binary", "pairwise" or "probes")',
    { file },
  );
}
