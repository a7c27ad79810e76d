/**
 * Judge verdicts from a rubricate results file against human labels: joins the two on
 * (item id, criterion id) and hands the pairs to `computeBinaryMeta`. The results file is
 * streamed; only the labels index and the joined records are held in memory.
 */
import { RubricateError, type SerializedError } from '../errors.js';
import { readResults, type GradedCriterion, type ResultRecord } from '../results/results.js';
import { MadeUpTally, madeUpFields } from '../util/made-up.js';
import type { BootstrapOptions } from '../statistics/bootstrap.js';
import { computeBinaryMeta, type BinaryMetaRecord, type BinaryMetaReport } from './binary-metrics.js';
import { cannotAssessLabel, loadLabels, type LabelIndex } from './labels.js';
import { isRecord } from '../util/is-record.js';

/** Group names with a meaning of their own; anything else in `groupBy` is a tag prefix. */
export const reservedGroups = {
  /** Criterion id (ids derived from criterion text are equal for equal text, so this pools a shared criterion across items). */
  criterion: 'criterion',
  /** Every tag of the criterion and of its item, as written. */
  tag: 'tag',
  /** The response source named by `sourceField` (ProfBench's bias index uses it). */
  source: 'source',
} as const;

export interface ResultsMetaOptions extends BootstrapOptions {
  /**
   * Breakdowns: `criterion`, `tag`, or a tag prefix such as `axis` (criterion tags
   * `axis:accuracy` → group `axis` = `accuracy`; item tags are matched the same way).
   */
  groupBy?: readonly string[];
  /** Dot path in each results line naming the response's source, e.g. `metadata.model`. */
  sourceField?: string;
  /** Also compare deterministic checks with the labels; by default only judge verdicts are. */
  includeChecks?: boolean;
}

/** How the join went: every verdict and label is accounted for. */
export interface JoinSummary {
  resultLines: number;
  /** Lines of the results file that could not be read. */
  invalidResultLines: number;
  /** Items whose id appeared again later in the results file; later copies are ignored. */
  duplicateResultIds: number;
  labelPairs: number;
  labelRatings: number;
  invalidLabelLines: number;
  /** (item, criterion) pairs labelled on several lines, pooled as extra raters. */
  pooledLabelPairs: number;
  /** Verdicts with labels: the records the metrics are computed on. */
  joined: number;
  /** Labelled criteria with no verdict: the criterion errored, was skipped, or has no boolean verdict. */
  labelledWithoutVerdict: number;
  /** Labelled criteria decided by a deterministic check (left out unless `includeChecks`). */
  labelledChecks: number;
  /** Labels whose item is not in the results file. */
  labelsForMissingItems: number;
  /** Labels whose item is there but has no criterion with that id. */
  labelsForMissingCriteria: number;
  /** A few of the unmatched labels, as `item/criterion`, to help fix id mismatches. */
  unmatchedExamples: string[];
  /** Judge verdicts nobody labelled (normal when only a sample was annotated). */
  verdictsWithoutLabel: number;
  /** Joined records whose results line has no usable value at `sourceField`. */
  recordsWithoutSource: number;
  /** Rater labels that said cannot_assess (never compared with a verdict). */
  cannotAssessRatings: number;
  /** Labelled pairs every rater left as cannot_assess: counted here, not in any metric. */
  labelledOnlyCannotAssess: number;
  /** Labelled criteria the judge answered cannot_assess on (`--abstain`): not compared, whatever the policy scored them. */
  judgeCannotAssess: number;
}

export interface ResultsMetaReport extends BinaryMetaReport {
  inputs: { results: string; labels: string | null; sourceField: string | null; groupBy: string[] };
  join: JoinSummary;
  /** Unreadable lines of either file (each also counted in `join`). */
  problems: SerializedError[];
  /** Present when the results' verdicts are made up (a scripted judge, `rubricate fake-judge`): the agreement measured is with a script. */
  scripted?: true;
  scripted_by?: string;
}

const maximumExamples = 10;
const maximumProblems = 100;

/** The value at a dot path (`metadata.model`) as a source name, when it is a string or number. */
export function valueAtPath(record: unknown, path: string): string | undefined {
  let current: unknown = record;
  for (const segment of path.split('.')) {
    if (!isRecord(current)) return undefined;
    current = current[segment];
  }
  if (typeof current === 'string' && current !== '') return current;
  if (typeof current === 'number' && Number.isFinite(current)) return String(current);
  return undefined;
}

export function validateGroupBy(groupBy: readonly string[], sourceField: string | undefined): string[] {
  const keys: string[] = [];
  for (const raw of groupBy) {
    const key = raw.trim();
    if (key === '') continue;
    if (key === reservedGroups.source) {
      throw new RubricateError('CONFIG_INVALID', '"source" is reserved for --source-field; name the source with --source-field instead', { field: 'group-by' });
    }
    if (key.includes(':')) throw new RubricateError('CONFIG_INVALID', `group "${key}": give a tag prefix without the colon (e.g. "axis" for axis:accuracy)`, { field: 'group-by' });
    if (!keys.includes(key)) keys.push(key);
  }
  if (sourceField !== undefined && sourceField.trim() === '') throw new RubricateError('CONFIG_INVALID', 'source field must be a dot path such as metadata.model', { field: 'source-field' });
  return keys;
}

function tagValues(tags: readonly string[], prefix: string): string[] {
  const marker = `${prefix}:`;
  const values: string[] = [];
  for (const tag of tags) if (tag.startsWith(marker) && tag.length > marker.length) values.push(tag.slice(marker.length));
  return values;
}

function groupsFor(record: ResultRecord, criterion: GradedCriterion, groupKeys: readonly string[], source: string | undefined): BinaryMetaRecord['groups'] {
  const groups: Record<string, string | string[]> = {};
  const tags = [...(criterion.tags ?? []), ...(record.tags ?? [])];
  for (const key of groupKeys) {
    if (key === reservedGroups.criterion) groups[key] = criterion.id;
    else if (key === reservedGroups.tag) groups[key] = [...new Set(tags)];
    else groups[key] = [...new Set(tagValues(tags, key))];
  }
  if (source !== undefined) groups[reservedGroups.source] = source;
  return groups;
}

/** Every criterion of an item that some label names, met / not met or cannot_assess. */
function labelledCriteria(labels: LabelIndex, itemId: string): Set<string> {
  return new Set([...(labels.byItem.get(itemId)?.keys() ?? []), ...(labels.cannotAssess.get(itemId)?.keys() ?? [])]);
}

export interface JoinResult {
  records: BinaryMetaRecord[];
  join: JoinSummary;
  problems: RubricateError[];
  /** Who made the results' verdicts up, if anyone did (see `madeUpBy`). */
  madeUpBy?: string;
}

/**
 * Joins the verdicts of a results file with an index of labels. A verdict counts when the
 * criterion's status is ok and `met` is a boolean; by default only judge verdicts count.
 */
export async function joinResultsWithLabels(resultsFile: string, labels: LabelIndex, options: ResultsMetaOptions = {}): Promise<JoinResult> {
  const state: JoinState = {
    labels,
    options,
    groupKeys: validateGroupBy(options.groupBy ?? [], options.sourceField),
    join: emptyJoinSummary(labels),
    problems: [...labels.invalid],
    records: [],
    seenItems: new Set<string>(),
  };
  const madeUp = new MadeUpTally();
  for await (const entry of readResults(resultsFile)) {
    state.join.resultLines += 1;
    if (entry.kind === 'invalid') {
      state.join.invalidResultLines += 1;
      state.problems.push(entry.error);
      continue;
    }
    const record = entry.record;
    madeUp.add(record);
    if (state.seenItems.has(record.id)) {
      state.join.duplicateResultIds += 1;
      state.problems.push(new RubricateError('INPUT_INVALID', `item id "${record.id}" appears again; only its first line is joined with labels`, { file: resultsFile, line: entry.line, field: 'id' }));
      continue;
    }
    state.seenItems.add(record.id);
    joinRecord(state, record);
  }
  for (const itemId of new Set([...labels.byItem.keys(), ...labels.cannotAssess.keys()])) {
    if (state.seenItems.has(itemId)) continue;
    const criteria = labelledCriteria(labels, itemId);
    state.join.labelsForMissingItems += criteria.size;
    for (const criterionId of criteria) noteUnmatched(state.join, `${itemId}/${criterionId}`);
  }
  return { records: state.records, join: state.join, problems: state.problems, madeUpBy: madeUp.by };
}

/** The join as it goes: the summary's counts, the records joined so far and the items seen. */
interface JoinState {
  labels: LabelIndex;
  options: ResultsMetaOptions;
  groupKeys: readonly string[];
  join: JoinSummary;
  problems: RubricateError[];
  records: BinaryMetaRecord[];
  seenItems: Set<string>;
}

function emptyJoinSummary(labels: LabelIndex): JoinSummary {
  return {
    resultLines: 0,
    invalidResultLines: 0,
    duplicateResultIds: 0,
    labelPairs: labels.pairs,
    labelRatings: labels.ratings,
    invalidLabelLines: labels.invalid.length,
    pooledLabelPairs: labels.pooled,
    joined: 0,
    labelledWithoutVerdict: 0,
    labelledChecks: 0,
    labelsForMissingItems: 0,
    labelsForMissingCriteria: 0,
    unmatchedExamples: [],
    verdictsWithoutLabel: 0,
    recordsWithoutSource: 0,
    cannotAssessRatings: labels.cannotAssessRatings,
    labelledOnlyCannotAssess: 0,
    judgeCannotAssess: 0,
  };
}

/** A label with no verdict to join, kept as one of the few examples the summary shows. */
function noteUnmatched(join: JoinSummary, key: string): void {
  if (join.unmatchedExamples.length < maximumExamples) join.unmatchedExamples.push(key);
}

/** One item's first line: each labelled criterion with a judge verdict joined, the rest counted by why not. */
function joinRecord(state: JoinState, record: ResultRecord): void {
  const { labels, options, join } = state;
  const itemLabels = labels.byItem.get(record.id);
  const itemCannotAssess = labels.cannotAssess.get(record.id);
  const source = options.sourceField ? valueAtPath(record, options.sourceField) : undefined;
  const criterionIds = new Set<string>();
  for (const criterion of record.criteria) {
    criterionIds.add(criterion.id);
    const counted = criterion.source !== 'check' || options.includeChecks === true;
    const verdict = criterion.status === 'ok' && typeof criterion.met === 'boolean' ? criterion.met : undefined;
    const label = itemLabels?.get(criterion.id);
    if (label === undefined) {
      if (itemCannotAssess?.has(criterion.id) === true) join.labelledOnlyCannotAssess += 1;
      else if (counted && verdict !== undefined) join.verdictsWithoutLabel += 1;
      continue;
    }
    if (!counted) {
      join.labelledChecks += 1;
      continue;
    }
    if (criterion.cannot_assess) {
      join.judgeCannotAssess += 1;
      continue;
    }
    if (verdict === undefined) {
      join.labelledWithoutVerdict += 1;
      continue;
    }
    if (options.sourceField && source === undefined) join.recordsWithoutSource += 1;
    const raters = labels.raters.get(record.id)?.get(criterion.id);
    const named = raters !== undefined && raters.length === label.length && raters.every((rater) => rater !== null) ? { raters: raters as string[] } : {};
    state.records.push({ id: `${record.id}/${criterion.id}`, prediction: verdict, label, ...named, groups: groupsFor(record, criterion, state.groupKeys, source) });
    join.joined += 1;
  }
  for (const criterionId of labelledCriteria(labels, record.id)) {
    if (criterionIds.has(criterionId)) continue;
    join.labelsForMissingCriteria += 1;
    noteUnmatched(join, `${record.id}/${criterionId}`);
  }
}

/**
 * Meta-evaluation of a results file against a labels file: `computeBinaryMeta` over the
 * joined verdicts, with breakdowns per `groupBy` key and ProfBench's bias index across the
 * sources named by `sourceField`.
 */
export async function metaFromResults(resultsFile: string, labelsFile: string | LabelIndex, options: ResultsMetaOptions = {}): Promise<ResultsMetaReport> {
  const labels = typeof labelsFile === 'string' ? await loadLabels(labelsFile) : labelsFile;
  const groupKeys = validateGroupBy(options.groupBy ?? [], options.sourceField);
  const { records, join, problems, madeUpBy } = await joinResultsWithLabels(resultsFile, labels, { ...options, groupBy: groupKeys });
  if (records.length === 0) {
    const reason =
      join.resultLines === 0
        ? 'the results file has no lines'
        : labels.pairs === 0
          ? labels.cannotAssessRatings > 0
            ? `every label in the labels file is ${cannotAssessLabel}`
            : 'the labels file has no usable labels'
          : `no labelled criterion has a verdict (${join.labelsForMissingItems} labels name items not in the results, ${join.labelsForMissingCriteria} name unknown criteria, ${join.labelledWithoutVerdict} criteria have no verdict${join.labelledChecks > 0 ? `, ${join.labelledChecks} are checks` : ''})`;
    throw new RubricateError('INPUT_INVALID', `nothing to compare: ${reason}`, { file: resultsFile });
  }
  const breakdown = options.sourceField ? [...groupKeys, reservedGroups.source] : groupKeys;
  const report = computeBinaryMeta(records, {
    resamples: options.resamples,
    seed: options.seed,
    confidence: options.confidence,
    sourceKey: reservedGroups.source,
    groupBy: breakdown,
  });
  return {
    ...madeUpFields(madeUpBy),
    ...report,
    inputs: { results: resultsFile, labels: typeof labelsFile === 'string' ? labelsFile : null, sourceField: options.sourceField ?? null, groupBy: groupKeys },
    join,
    problems: problems.slice(0, maximumProblems).map((error) => error.toJSON()),
  };
}
