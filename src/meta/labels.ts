/**
 * Human labels for judged criteria: "was criterion C of item I met?", one or several raters.
 *
 * A labels file is JSONL; each line is either
 *   {"id": ITEM, "criterion_id": CRITERION, "label": true | false | "cannot_assess" | [true, false, …]}
 * or, for all of an item's criteria at once,
 *   {"id": ITEM, "labels": {CRITERION: true | false | "cannot_assess" | [true, false, …], …}}.
 * An array holds one label per rater. "cannot_assess" is a rater who could not tell; it is
 * counted apart and never read as met or not met. Either shape may carry `reviewer` (who
 * labelled), `time` (ISO 8601, when) and `note` (free text); they apply to every label of the
 * line and change no metric. Lines are read one at a time; a bad line is reported (file,
 * line, field) and skipped, never fatal.
 */
import { RubricateError } from '../errors.js';
import { parseLineJson, readLines } from '../util/jsonl.js';
import { isRecord } from '../util/is-record.js';
import type { InvalidRecord } from '../rubric/records.js';

/** The word a rater writes instead of true or false when the response does not let them tell. */
export const cannotAssessLabel = 'cannot_assess';

/** The labels of one criterion of one item, from one line. */
export interface CriterionLabel {
  /** Item id, as in the results file (numbers are read as their decimal string). */
  id: string;
  criterionId: string;
  /** One entry per rater who assessed it: true = met. Empty when every rater answered cannot_assess. */
  labels: boolean[];
  /** Raters who answered cannot_assess (absent when none did). */
  cannotAssess?: number;
  /** Who labelled, when and why, as the line gives them (absent when not given). */
  reviewer?: string;
  time?: string;
  note?: string;
  line: number;
}

export type LabelReadRecord = { kind: 'label'; label: CriterionLabel } | InvalidRecord;

function readIdentifier(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

const isRaterLabel = (entry: unknown): entry is boolean | typeof cannotAssessLabel => typeof entry === 'boolean' || entry === cannotAssessLabel;

/** A label value: a rater label, or a non-empty array of them. Returns the field suffix at fault otherwise. */
function readLabelValue(value: unknown): { ok: true; labels: boolean[]; cannotAssess: number } | { ok: false; suffix: string; message: string } {
  const entries = Array.isArray(value) ? value : [value];
  if (entries.length === 0) return { ok: false, suffix: '', message: 'a list of labels must not be empty' };
  const wrong = entries.findIndex((entry) => !isRaterLabel(entry));
  if (wrong >= 0) {
    return Array.isArray(value)
      ? { ok: false, suffix: `[${wrong}]`, message: `each rater label must be true, false or "${cannotAssessLabel}"` }
      : { ok: false, suffix: '', message: `label must be true, false, "${cannotAssessLabel}" or a list of them (one per rater)` };
  }
  const labels = entries.filter((entry): entry is boolean => typeof entry === 'boolean');
  return { ok: true, labels, cannotAssess: entries.length - labels.length };
}

const isoTime = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** The optional `reviewer`, `time` and `note` of a line, or the field at fault. */
function readReview(value: Record<string, unknown>): { ok: true; review: Pick<CriterionLabel, 'reviewer' | 'time' | 'note'> } | { ok: false; field: string; message: string } {
  const review: Pick<CriterionLabel, 'reviewer' | 'time' | 'note'> = {};
  if (value.reviewer !== undefined) {
    if (typeof value.reviewer !== 'string' || value.reviewer === '') return { ok: false, field: 'reviewer', message: 'reviewer must be a non-empty string' };
    review.reviewer = value.reviewer;
  }
  if (value.time !== undefined) {
    if (typeof value.time !== 'string' || !isoTime.test(value.time) || Number.isNaN(Date.parse(value.time))) {
      return { ok: false, field: 'time', message: 'time must be an ISO 8601 date or date-time such as 2025-03-01T12:00:00Z' };
    }
    review.time = value.time;
  }
  if (value.note !== undefined) {
    if (typeof value.note !== 'string') return { ok: false, field: 'note', message: 'note must be a string' };
    review.note = value.note;
  }
  return { ok: true, review };
}

function criterionLabel(id: string, criterionId: string, read: { labels: boolean[]; cannotAssess: number }, review: Pick<CriterionLabel, 'reviewer' | 'time' | 'note'>, line: number): CriterionLabel {
  return { id, criterionId, labels: read.labels, ...(read.cannotAssess > 0 ? { cannotAssess: read.cannotAssess } : {}), ...review, line };
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
  const review = readReview(value);
  if (!review.ok) return fail(review.field, review.message);
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
      result.push(criterionLabel(id, criterionId, read, review.review, location.line));
    }
    return result;
  }
  if (!single) return fail('label', 'missing label: give criterion_id with label, or labels');
  const criterionId = readIdentifier(value.criterion_id);
  if (criterionId === undefined) return fail('criterion_id', 'criterion_id must be a non-empty string or a number');
  if (!('label' in value)) return fail('label', `missing label (true, false, "${cannotAssessLabel}" or a list of them)`);
  const read = readLabelValue(value.label);
  if (!read.ok) return fail(`label${read.suffix}`, read.message);
  return [criterionLabel(id, criterionId, read, review.review, location.line)];
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
  /** Met / not met labels; a pair every rater left as cannot_assess is not here but in `cannotAssess`. */
  byItem: Map<string, Map<string, boolean[]>>;
  /** Raters who answered cannot_assess, by item id, then criterion id (only pairs with at least one). */
  cannotAssess: Map<string, Map<string, number>>;
  /**
   * Who gave each label of `byItem`, in the same order: the line's `reviewer` when the line holds
   * one label, else null (a list on one line names no one per label). The human baseline's
   * per-rater figures use it when every label of a pair has a name.
   */
  raters: Map<string, Map<string, Array<string | null>>>;
  /** Reviewers' notes, by item id, then criterion id (only pairs with a note). */
  notes: Map<string, Map<string, string[]>>;
  /** Distinct (item, criterion) pairs with at least one met / not met label. */
  pairs: number;
  /** Individual met / not met rater labels. */
  ratings: number;
  /** Individual cannot_assess rater labels. */
  cannotAssessRatings: number;
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
  const index = emptyIndex();
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

function emptyIndex(): LabelIndex {
  return { byItem: new Map(), raters: new Map(), cannotAssess: new Map(), notes: new Map(), pairs: 0, ratings: 0, cannotAssessRatings: 0, invalid: [], pooled: 0 };
}

function criteriaOf<T>(map: Map<string, Map<string, T>>, itemId: string): Map<string, T> {
  let criteria = map.get(itemId);
  if (!criteria) {
    criteria = new Map();
    map.set(itemId, criteria);
  }
  return criteria;
}

function addLabel(index: LabelIndex, label: CriterionLabel, pooledKeys: Set<string>): void {
  const key = `${label.id}\u0000${label.criterionId}`;
  const seen = index.byItem.get(label.id)?.has(label.criterionId) === true || index.cannotAssess.get(label.id)?.has(label.criterionId) === true;
  if (seen) pooledKeys.add(key);
  if (label.labels.length > 0) {
    const criteria = criteriaOf(index.byItem, label.id);
    const existing = criteria.get(label.criterionId);
    if (existing) existing.push(...label.labels);
    else {
      criteria.set(label.criterionId, [...label.labels]);
      index.pairs += 1;
    }
    index.ratings += label.labels.length;
    const rater = label.labels.length === 1 && label.reviewer !== undefined ? label.reviewer : null;
    const raters = criteriaOf(index.raters, label.id);
    raters.set(label.criterionId, [...(raters.get(label.criterionId) ?? []), ...label.labels.map(() => rater)]);
  }
  if (label.note !== undefined && label.note.trim() !== '') {
    const criteria = criteriaOf(index.notes, label.id);
    criteria.set(label.criterionId, [...(criteria.get(label.criterionId) ?? []), label.note]);
  }
  if (label.cannotAssess) {
    const criteria = criteriaOf(index.cannotAssess, label.id);
    criteria.set(label.criterionId, (criteria.get(label.criterionId) ?? 0) + label.cannotAssess);
    index.cannotAssessRatings += label.cannotAssess;
  }
}

/** Builds an index from labels already in memory (tests, library callers). */
export function indexLabels(labels: Iterable<CriterionLabel>): LabelIndex {
  const index = emptyIndex();
  const pooledKeys = new Set<string>();
  for (const label of labels) addLabel(index, label, pooledKeys);
  index.pooled = pooledKeys.size;
  return index;
}

/** The labels of some items only (an alignment's held-out items): every count is of what is kept. */
export function restrictLabels(index: LabelIndex, itemIds: ReadonlySet<string>): LabelIndex {
  const restricted = emptyIndex();
  restricted.invalid = index.invalid;
  for (const [itemId, criteria] of index.byItem) {
    if (!itemIds.has(itemId)) continue;
    restricted.byItem.set(itemId, criteria);
    const raters = index.raters.get(itemId);
    if (raters) restricted.raters.set(itemId, raters);
    restricted.pairs += criteria.size;
    for (const raters of criteria.values()) restricted.ratings += raters.length;
  }
  for (const [itemId, criteria] of index.cannotAssess) {
    if (!itemIds.has(itemId)) continue;
    restricted.cannotAssess.set(itemId, criteria);
    for (const raters of criteria.values()) restricted.cannotAssessRatings += raters;
  }
  for (const [itemId, notes] of index.notes) if (itemIds.has(itemId)) restricted.notes.set(itemId, notes);
  return restricted;
}
