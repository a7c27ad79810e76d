/**
 * ResearchRubrics' judge meta-evaluation (scaleapi/researchrubrics, `src/calculate_metrics/`):
 *
 * - `calculate_F1_score.py`: per task (one response of one system to one prompt), scikit-learn's
 *   `f1_score(human, judge, labels=[Satisfied, Partially Satisfied, Not Satisfied],
 *   average='macro', zero_division=0)` — a listed class absent from both sides scores 0 and
 *   still counts in the average — then `np.mean` over the tasks of each system. The binary
 *   view maps Partially → Not and uses the two classes [Satisfied, Not Satisfied].
 * - `calculate_failure_breakdown.py`: per task, each category's share of the task's "Not
 *   Satisfied" verdicts, averaged over the tasks where that category failed at least once
 *   (with the number of such tasks), plus the aggregate share over all failures.
 *
 * Verdicts and labels are joined by (item id, criterion id); the reference aligns lists by
 * position, which is the same thing when both come from one rubric.
 */
import { RubricateError } from '../errors.js';
import { readResults, type ResultRecord } from '../results/results.js';
import { numpyMean } from '../statistics/reference-math.js';
import { safeParseJson } from '../util/json.js';
import { readLines } from '../util/jsonl.js';
import { valueAtPath } from './results-meta.js';
import { isRecord } from '../util/is-record.js';

export const ternaryLabels = ['Satisfied', 'Partially Satisfied', 'Not Satisfied'] as const;
export type TernaryLabel = (typeof ternaryLabels)[number];
const binaryLabels: readonly TernaryLabel[] = ['Satisfied', 'Not Satisfied'];

function toBinary(label: TernaryLabel): TernaryLabel {
  return label === 'Partially Satisfied' ? 'Not Satisfied' : label;
}

/** A ternary label as written (case and spacing forgiven); undefined for anything else. */
export function readTernaryLabel(value: unknown): TernaryLabel | undefined {
  if (typeof value !== 'string') return undefined;
  const normalized = value.trim().toLowerCase().replace(/\s+/g, ' ');
  return ternaryLabels.find((label) => label.toLowerCase() === normalized);
}

/** scikit-learn `f1_score(..., labels, average='macro', zero_division=0)`. */
export function sklearnMacroF1(truth: readonly string[], predicted: readonly string[], labels: readonly string[]): number {
  let total = 0;
  for (const label of labels) {
    let truePositive = 0;
    let falsePositive = 0;
    let falseNegative = 0;
    for (let index = 0; index < truth.length; index += 1) {
      const isTrue = truth[index] === label;
      const isPredicted = predicted[index] === label;
      if (isTrue && isPredicted) truePositive += 1;
      else if (isPredicted) falsePositive += 1;
      else if (isTrue) falseNegative += 1;
    }
    const denominator = 2 * truePositive + falsePositive + falseNegative;
    total += denominator === 0 ? 0 : (2 * truePositive) / denominator;
  }
  return total / labels.length;
}

export interface AgreementTask {
  /** The results line (one response of one system to one prompt). */
  id: string;
  source: string;
  criteria: Array<{ id: string; category: string | undefined; judge: TernaryLabel; human?: TernaryLabel }>;
}

export interface SourceAgreement {
  tasks: number;
  /** Mean over tasks of the per-task macro F1 (the reference's figure). */
  macroF1Ternary: number | null;
  macroF1Binary: number | null;
  /** The same F1 pooled over every labelled criterion (what a plain meta-evaluation gives). */
  pooledMacroF1Ternary: number | null;
  pooledMacroF1Binary: number | null;
}

export interface CategoryFailure {
  averageRatio: number;
  tasks: number;
  aggregateRatio: number;
  count: number;
}

export interface FailureBreakdown {
  categories: Record<string, CategoryFailure>;
  tasksWithFailures: number;
  totalTasks: number;
  totalFailures: number;
}

/** Per-task macro F1 averaged per source, ternary and binary, with the pooled figure beside it. */
export function agreementBySource(tasks: readonly AgreementTask[]): Record<string, SourceAgreement> {
  const bySource = new Map<string, AgreementTask[]>();
  for (const task of tasks) {
    let list = bySource.get(task.source);
    if (!list) bySource.set(task.source, (list = []));
    list.push(task);
  }
  const report: Record<string, SourceAgreement> = {};
  for (const [source, list] of bySource) {
    const labelled = list
      .map((task) => task.criteria.filter((criterion) => criterion.human !== undefined))
      .filter((criteria) => criteria.length > 0);
    const ternary = labelled.map((criteria) => sklearnMacroF1(criteria.map((criterion) => criterion.human!), criteria.map((criterion) => criterion.judge), ternaryLabels));
    const binary = labelled.map((criteria) =>
      sklearnMacroF1(criteria.map((criterion) => toBinary(criterion.human!)), criteria.map((criterion) => toBinary(criterion.judge)), binaryLabels),
    );
    const pooled = labelled.flat();
    report[source] = {
      tasks: labelled.length,
      macroF1Ternary: ternary.length > 0 ? numpyMean(ternary) : null,
      macroF1Binary: binary.length > 0 ? numpyMean(binary) : null,
      pooledMacroF1Ternary: pooled.length > 0 ? sklearnMacroF1(pooled.map((criterion) => criterion.human!), pooled.map((criterion) => criterion.judge), ternaryLabels) : null,
      pooledMacroF1Binary:
        pooled.length > 0 ? sklearnMacroF1(pooled.map((criterion) => toBinary(criterion.human!)), pooled.map((criterion) => toBinary(criterion.judge)), binaryLabels) : null,
    };
  }
  return report;
}

/** Failure breakdown by category of the labels chosen (`judge` or `human`), per source. */
export function failureBreakdownBySource(tasks: readonly AgreementTask[], options: { labels: 'judge' | 'human'; binary?: boolean }): Record<string, FailureBreakdown> {
  const report: Record<string, FailureBreakdown> = {};
  const state = new Map<string, { ratios: Map<string, number[]>; counts: Map<string, number>; tasksWithFailures: number; totalTasks: number; totalFailures: number }>();
  for (const task of tasks) {
    let entry = state.get(task.source);
    if (!entry) state.set(task.source, (entry = { ratios: new Map(), counts: new Map(), tasksWithFailures: 0, totalTasks: 0, totalFailures: 0 }));
    entry.totalTasks += 1;
    const failures = new Map<string, number>();
    let taskFailures = 0;
    for (const criterion of task.criteria) {
      const raw = options.labels === 'judge' ? criterion.judge : criterion.human;
      if (raw === undefined) continue;
      const label = options.binary ? toBinary(raw) : raw;
      if (label !== 'Not Satisfied') continue;
      const category = criterion.category ?? 'uncategorized';
      failures.set(category, (failures.get(category) ?? 0) + 1);
      entry.counts.set(category, (entry.counts.get(category) ?? 0) + 1);
      taskFailures += 1;
    }
    if (taskFailures === 0) continue;
    entry.tasksWithFailures += 1;
    entry.totalFailures += taskFailures;
    for (const [category, count] of failures) {
      let list = entry.ratios.get(category);
      if (!list) entry.ratios.set(category, (list = []));
      list.push(count / taskFailures);
    }
  }
  for (const [source, entry] of state) {
    const categories: Record<string, CategoryFailure> = {};
    for (const [category, ratios] of entry.ratios) {
      let sum = 0;
      for (const ratio of ratios) sum += ratio;
      const count = entry.counts.get(category) ?? 0;
      categories[category] = { averageRatio: sum / ratios.length, tasks: ratios.length, aggregateRatio: count / entry.totalFailures, count };
    }
    report[source] = { categories, tasksWithFailures: entry.tasksWithFailures, totalTasks: entry.totalTasks, totalFailures: entry.totalFailures };
  }
  return report;
}

/** A ternary labels file: {id, criterion_id, label} or {id, labels: {criterion_id: label}} per line. */
export async function loadTernaryLabels(file: string, onInvalid?: (error: RubricateError) => void): Promise<Map<string, Map<string, TernaryLabel>>> {
  const labels = new Map<string, Map<string, TernaryLabel>>();
  const add = (id: string, criterionId: string, value: unknown, line: number, field: string) => {
    const label = readTernaryLabel(value);
    if (!label) {
      onInvalid?.(new RubricateError('INPUT_INVALID', `label must be one of ${ternaryLabels.map((entry) => `"${entry}"`).join(', ')}`, { file, line, field }));
      return;
    }
    let item = labels.get(id);
    if (!item) labels.set(id, (item = new Map()));
    item.set(criterionId, label);
  };
  for await (const { line, text } of readLines(file)) {
    const parsed = safeParseJson(text);
    if (!parsed.ok || !isRecord(parsed.value)) {
      onInvalid?.(new RubricateError('INPUT_INVALID', parsed.ok ? 'a labels line must be a JSON object' : `not valid JSON: ${parsed.error}`, { file, line }));
      continue;
    }
    const value = parsed.value;
    const id = typeof value.id === 'string' || typeof value.id === 'number' ? String(value.id) : undefined;
    if (id === undefined) {
      onInvalid?.(new RubricateError('INPUT_INVALID', 'id must be the item id in the results file', { file, line, field: 'id' }));
      continue;
    }
    if (isRecord(value.labels)) for (const [criterionId, label] of Object.entries(value.labels)) add(id, criterionId, label, line, `labels.${criterionId}`);
    else if (typeof value.criterion_id === 'string' || typeof value.criterion_id === 'number') add(id, String(value.criterion_id), value.label, line, 'label');
    else onInvalid?.(new RubricateError('INPUT_INVALID', 'give criterion_id with label, or labels {criterion_id: label}', { file, line, field: 'labels' }));
  }
  return labels;
}

function judgeLabel(criterion: ResultRecord['criteria'][number]): TernaryLabel | undefined {
  if (criterion.status !== 'ok') return undefined;
  const label = readTernaryLabel(criterion.label);
  if (label) return label;
  if (typeof criterion.met === 'boolean') return criterion.met ? 'Satisfied' : 'Not Satisfied';
  return undefined;
}

/** The tasks of a results file with their human labels joined on. */
export async function researchRubricsTasks(resultsFile: string, labels: Map<string, Map<string, TernaryLabel>> | undefined, options: { sourceField?: string } = {}): Promise<AgreementTask[]> {
  const tasks: AgreementTask[] = [];
  for await (const entry of readResults(resultsFile)) {
    if (entry.kind === 'invalid') continue;
    const record = entry.record;
    const itemLabels = labels?.get(record.id);
    const criteria: AgreementTask['criteria'] = [];
    for (const criterion of record.criteria) {
      const judge = judgeLabel(criterion);
      if (!judge) continue;
      const axis = criterion.tags.find((tag) => tag.startsWith('axis:'));
      const human = itemLabels?.get(criterion.id);
      criteria.push({ id: criterion.id, category: axis?.slice('axis:'.length), judge, ...(human ? { human } : {}) });
    }
    const source = options.sourceField ? (valueAtPath(record, options.sourceField) ?? 'unknown') : 'all';
    tasks.push({ id: record.id, source, criteria });
  }
  return tasks;
}

export interface ResearchRubricsMetaReport {
  agreement: Record<string, SourceAgreement>;
  failureBreakdown: { judge: Record<string, FailureBreakdown>; judgeBinary: Record<string, FailureBreakdown>; human: Record<string, FailureBreakdown> };
}

export function researchRubricsMeta(tasks: readonly AgreementTask[]): ResearchRubricsMetaReport {
  return {
    agreement: agreementBySource(tasks),
    failureBreakdown: {
      judge: failureBreakdownBySource(tasks, { labels: 'judge' }),
      judgeBinary: failureBreakdownBySource(tasks, { labels: 'judge', binary: true }),
      human: failureBreakdownBySource(tasks, { labels: 'human' }),
    },
  };
}
