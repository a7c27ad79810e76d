/**
 * Human labels for judged criteria: "was criterion C of item I met?", one or several raters.
 *
 * A labels file is JSONL; each line is either
 *   {"id": ITEM, "criterion_id": CRITERION, "label": true | false | [true, false, …]}
 * or, for all of an item's criteria at once,
 *   {"id": ITEM, "labels": {CRITERION: true | false | [true, false, …], …}}.
 * An array holds one label per rater. Lines are read one at a time; a bad line is reported
 * (file, line, field) and skipped, never fatal.
 */
import { RubricateError } from '../errors.js';
import { parseLineJson, readLines } from '../util/jsonl.js';
import { isRecord } from '../util/is-record.js';
import type { InvalidRecord } from '../rubric/records.js';

/** The labels of one criterion of one item, from one line. */
export interface CriterionLabel {
  /** Item id, as in the results file (numbers are read as their decimal string). */
  id: string;
  criterionId: string;
  /** One entry per rater: true = met. */
  labels: boolean[];
  line: number;
}

export type LabelReadRecord = { kind: 'label'; label: CriterionLabel } | InvalidRecord;

function readIdentifier(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A label value: a boolean, or a non-empty array of booleans. Returns the field suffix at fault otherwise. */
function readLabelValue(value: unknown): { ok: true; labels: boolean[] } | { ok: false; suffix: string; message: string } {
  if (typeof value === 'boolean') return { ok: true, labels: [value] };
  if (Array.isArray(value)) {
    if (value.length === 0) return { ok: false, suffix: '', message: 'a list of labels must not be empty' };
    const wrong = value.findIndex((entry) => typeof entry !== 'boolean');
    if (wrong >= 0) return { ok: false, suffix: `[${wrong}]`, message: 'each rater label must be true or false' };
    return { ok: true, labels: value as boolean[] };
  }
  return { ok: false, suffix: '', message: 'label must be true, false or a list of them (one per rater)' };
}

/**
 * Reads one parsed line into criterion labels, or the reason it cannot be used.
 * Exported for the HTTP and library paths that hold labels in memory.
 */
export function parseLabelLine(value: unknown, location: { file?: string; line: number }): CriterionLabel[] | RubricateError {
  const fail = (field: string, message: string) => new RubricateError('INPUT_INVALID', message, { ...(location.file ? { file: location.file } : {}), line: location.line, field });
  if (!isRecord(value)) return fail('', 'a labels line must be a JSON object');
  const id = readIdentifier(value.id);
  if (id === undefined) return fail('id', 'id must be a non-empty string or a number (the item id in the results file)');
  const single = 'label' in value || 'criterion_id' in value;
  const several = 'labels' in value;
  if (single && several) return fail('labels', 'give either criterion_id with label, or labels, not both');
  if (several) {
    if (!isRecord(value.labels) || Object.keys(value.labels).length === 0) {
      return fail('labels', 'labels must be a non-empty object {criterion_id: true | false | [...]}');
    }
    const result: CriterionLabel[] = [];
    for (const [criterionId, entry] of Object.entries(value.labels)) {
      const read = readLabelValue(entry);
      if (!read.ok) return fail(`labels.${criterionId}${read.suffix}`, read.message);
      result.push({ id, criterionId, labels: read.labels, line: location.line });
    }
    return result;
  }
  if (!single) return fail('label', 'missing label: give criterion_id with label, or labels');
  const criterionId = readIdentifier(value.criterion_id);
  if (criterionId === undefined) return fail('criterion_id', 'criterion_id must be a non-empty string or a number');
  if (!('label' in value)) return fail('label', 'missing label (true, false or a list of them)');
  const read = readLabelValue(value.label);
  if (!read.ok) return fail(`label${read.suffix}`, read.message);
  return [{ id, criterionId, labels: read.labels, line: location.line }];
}

/** Streams the labels of a file, one record per (item, criterion) entry; bad lines come through as `invalid`. */
export async function* readLabels(file: string): AsyncGenerator<LabelReadRecord> {
  for await (const { line, text, error: lineError } of readLines(file)) {
    const parsed = parseLineJson(text, lineError);
    if (!parsed.ok) {
      yield { kind: 'invalid', line, error: new RubricateError('INPUT_INVALID', parsed.error, { file, line }) };
      continue;
    }
    const labels = parseLabelLine(parsed.value, { file, line });
    if (RubricateError.isInstance(labels)) {
      yield { kind: 'invalid', line, error: labels };
      continue;
    }
    for (const label of labels) yield { kind: 'label', label };
  }
}

/** Labels by item id, then criterion id. */
export interface LabelIndex {
  byItem: Map<string, Map<string, boolean[]>>;
  /** Distinct (item, criterion) pairs. */
  pairs: number;
  /** Individual rater labels. */
  ratings: number;
  /** Lines that could not be read (skipped), with the reasons. */
  invalid: RubricateError[];
  /**
   * Pairs given on more than one line. Their labels are pooled as extra raters, the way
   * per-rater files (one line per annotator) are meant to be read.
   */
  pooled: number;
}

/**
 * Reads a whole labels file into an index. The index is what a join needs in memory; the
 * file itself is read line by line. `onInvalid` hears about each bad line as it is met.
 */
export async function loadLabels(file: string, options: { onInvalid?: (error: RubricateError) => void } = {}): Promise<LabelIndex> {
  const index: LabelIndex = { byItem: new Map(), pairs: 0, ratings: 0, invalid: [], pooled: 0 };
  const pooledKeys = new Set<string>();
  for await (const record of readLabels(file)) {
    if (record.kind === 'invalid') {
      index.invalid.push(record.error);
      options.onInvalid?.(record.error);
      continue;
    }
    addLabel(index, record.label, pooledKeys);
  }
  index.pooled = pooledKeys.size;
  return index;
}

function addLabel(index: LabelIndex, label: CriterionLabel, pooledKeys: Set<string>): void {
  let criteria = index.byItem.get(label.id);
  if (!criteria) {
    criteria = new Map();
    index.byItem.set(label.id, criteria);
  }
  const existing = criteria.get(label.criterionId);
  if (existing) {
    existing.push(...label.labels);
    pooledKeys.add(`${label.id}\u0000${label.criterionId}`);
  } else {
    criteria.set(label.criterionId, [...label.labels]);
    index.pairs += 1;
  }
  index.ratings += label.labels.length;
}

/** Builds an index from labels already in memory (tests, library callers). */
export function indexLabels(labels: Iterable<CriterionLabel>): LabelIndex {
  const index: LabelIndex = { byItem: new Map(), pairs: 0, ratings: 0, invalid: [], pooled: 0 };
  const pooledKeys = new Set<string>();
  for (const label of labels) addLabel(index, label, pooledKeys);
  index.pooled = pooledKeys.size;
  return index;
}
