/**
 * DeepResearch Bench II (imlrz/DeepResearch-Bench-II, `run_evaluation.py` and
 * `aggregate_scores.py`, `compute_dimension_averages`). The reference keeps one verdict per
 * rubric *text*: a text repeated within a task counts once, in the last dimension it is
 * listed under, with the last verdict (its results are a dict keyed by text). Per task:
 * each dimension = items scored 1 ÷ items; total = all 1s ÷ all items; blocked_rate = items
 * scored −1 (supported only by a blocked source) ÷ all items. Repeated records of a task are
 * averaged, then tasks are averaged (Python `sum / len`, skipping missing values).
 */
import { bootstrap, defaultBootstrapSamples, defaultBootstrapSeed } from '../statistics/bootstrap.js';
import { mean } from '../statistics/descriptive.js';
import { createStatusTally } from '../statistics/status-tally.js';
import type { AggregateOptions, Aggregator, Metrics, ScoredCriterion, ScoredItem, Scoring, TagMetric } from './types.js';

export const drb2DimensionKeys = [
  ['info_recall', 'inforecall'],
  ['analysis', 'analysis'],
  ['presentation', 'presentation'],
] as const;

const figures = ['inforecall', 'analysis', 'presentation', 'total', 'blocked_rate'] as const;
type Figure = (typeof figures)[number];
type TaskFigures = Record<Figure, number | null>;

/** Labels a judge gives for "mentioned, but only through a blocked source" (score −1). */
const blockedLabels = new Set(['blocked', '-1']);

function verdictScore(criterion: ScoredCriterion): -1 | 0 | 1 {
  if (criterion.label !== undefined && blockedLabels.has(criterion.label.trim().toLowerCase())) return -1;
  return criterion.met === true ? 1 : 0;
}

function dimensionOf(criterion: ScoredCriterion): string | undefined {
  const tag = criterion.tags.find((entry) => entry.startsWith('dimension:'));
  return tag?.slice('dimension:'.length);
}

/** One task record's figures, with repeated rubric texts counted once (last one wins). */
export function drb2TaskFigures(item: ScoredItem): TaskFigures {
  const byText = new Map<string, { dimension: string; score: -1 | 0 | 1 }>();
  for (const criterion of item.criteria) {
    if (criterion.status !== 'ok') continue;
    const dimension = dimensionOf(criterion);
    if (!dimension) continue;
    const key = criterion.text ?? criterion.id;
    byText.delete(key);
    byText.set(key, { dimension, score: verdictScore(criterion) });
  }
  const result: TaskFigures = { inforecall: null, analysis: null, presentation: null, total: null, blocked_rate: null };
  let ones = 0;
  let blocked = 0;
  let items = 0;
  for (const [dimension, figure] of drb2DimensionKeys) {
    const scores = [...byText.values()].filter((entry) => entry.dimension === dimension).map((entry) => entry.score);
    const dimensionOnes = scores.filter((score) => score === 1).length;
    result[figure] = scores.length > 0 ? dimensionOnes / scores.length : null;
    ones += dimensionOnes;
    blocked += scores.filter((score) => score === -1).length;
    items += scores.length;
  }
  if (items > 0) {
    result.total = ones / items;
    result.blocked_rate = blocked / items;
  }
  return result;
}

function taskOf(item: ScoredItem): string {
  const task = item.metadata?.idx ?? item.metadata?.task_id;
  return typeof task === 'string' || typeof task === 'number' ? String(task) : item.id;
}

/** The reference's `mean_or_none`. */
function meanOrNone(values: ReadonlyArray<number | null>): number | null {
  const numbers = values.filter((value): value is number => value !== null);
  return numbers.length > 0 ? mean(numbers) : null;
}

export const drb2Scoring: Scoring = {
  name: 'drb2',
  description: 'DeepResearch Bench II: per task share of rubric texts scored 1 (repeats once), per dimension and in total; blocked_rate; mean over tasks',
  itemScore(item) {
    if (item.status !== 'ok') return null;
    return drb2TaskFigures(item).total;
  },
  createAggregator(options: AggregateOptions = {}): Aggregator {
    const byTask = new Map<string, TaskFigures[]>();
    const tally = createStatusTally();
    return {
      add(item) {
        if (!tally.admit(item.status)) return;
        const taskFigures = drb2TaskFigures(item);
        if (taskFigures.total === null) tally.unscorable();
        const task = taskOf(item);
        let list = byTask.get(task);
        if (!list) byTask.set(task, (list = []));
        list.push(taskFigures);
      },
      finish(): Metrics {
        const perTask = [...byTask.values()].map((records) => Object.fromEntries(figures.map((figure) => [figure, meanOrNone(records.map((record) => record[figure]))])) as TaskFigures);
        const report = Object.fromEntries(figures.map((figure) => [figure, meanOrNone(perTask.map((task) => task[figure]))])) as TaskFigures;
        const byTag: Record<string, TagMetric> = {};
        const samples = options.bootstrapSamples ?? defaultBootstrapSamples;
        const seed = options.seed ?? defaultBootstrapSeed;
        const metric = (figure: Figure): TagMetric | null => {
          const values = perTask.map((task) => task[figure]).filter((value): value is number => value !== null);
          if (values.length === 0) return null;
          const spread = bootstrap(values, mean, samples, seed);
          return { score: mean(values), n_samples: values.length, bootstrap_std: spread.std, ci95: spread.ci95 };
        };
        for (const figure of figures) {
          if (figure === 'total') continue;
          const value = metric(figure);
          if (value) byTag[figure === 'blocked_rate' ? 'blocked_rate' : `dimension:${figure}`] = value;
        }
        return {
          scoring: 'drb2',
          overall: metric('total'),
          by_tag: byTag,
          ...tally.counts(),
          extra: { drb2: report, tasks: perTask.length },
        };
      },
    };
  },
};
