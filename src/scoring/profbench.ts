/**
 * ProfBench report score (NVlabs/ProfBench, `score_report_generation.py`,
 * `get_predicted_score_per_task_id_e2e`), step for step:
 *   1. per (task, report text): Σ weight of fulfilled criteria ÷ Σ weight (Critical 4, Major 3,
 *      Minor 2, Additional 1); identical report texts within a task are one report, their
 *      criteria pooled (the reference keys by (task_id, response));
 *   2. per task: np.mean of its reports' scores; per domain: np.mean of its tasks;
 *   3. each domain mean rounded to 3 decimals, then Overall = mean of the rounded domain
 *      means, rounded to 3 decimals;
 *   4. per criterion type: share of fulfilled (report, criterion) rows, rounded to 3 decimals;
 *   5. every figure × 100, rounded to 1 decimal.
 * The reference's rounding before averaging is reproduced here, and only here.
 */
import { bootstrap, defaultBootstrapSamples, defaultBootstrapSeed } from '../statistics/bootstrap.js';
import { mean } from '../statistics/descriptive.js';
import { numpyMean, numpyRound } from '../statistics/reference-math.js';
import { createStatusTally } from '../statistics/status-tally.js';
import type { AggregateOptions, Aggregator, Metrics, ScoredItem, Scoring, TagMetric } from './types.js';
import { dictionary } from '../util/dictionary.js';

/** Criterion tags naming ProfBench criterion types (`criterion_type:Reasoning`). */
export const criterionTypeTagPrefix = 'criterion_type:';

function domainOf(item: ScoredItem): string {
  const tag = item.tags?.find((entry) => entry.startsWith('domain:'));
  if (tag) return tag.slice('domain:'.length);
  const domain = item.metadata?.domain;
  return typeof domain === 'string' ? domain : 'all';
}

function taskOf(item: ScoredItem): string {
  const task = item.metadata?.task_id ?? item.metadata?.task;
  if (typeof task === 'string' || typeof task === 'number') return String(task);
  const tag = item.tags?.find((entry) => entry.startsWith('task:'));
  return tag ? tag.slice('task:'.length) : item.id;
}

/** Weighted fulfilment of one report (null without weight to score against). */
function reportTotals(item: ScoredItem): { achieved: number; max: number } {
  let achieved = 0;
  let max = 0;
  for (const criterion of item.criteria) {
    if (criterion.status !== 'ok' || criterion.points <= 0) continue;
    max += criterion.points;
    if (criterion.met === true) achieved += criterion.points;
  }
  return { achieved, max };
}

export const profbenchScoring: Scoring = {
  name: 'profbench',
  description: 'ProfBench: per report achieved ÷ max weight (identical reports merged); per task mean; per domain mean (rounded); overall = mean of domains; criterion-type fulfilment',
  itemScore(item) {
    if (item.status !== 'ok') return null;
    const totals = reportTotals(item);
    return totals.max === 0 ? null : totals.achieved / totals.max;
  },
  createAggregator(options: AggregateOptions = {}): Aggregator {
    // Insertion orders follow the reference's dicts: reports, tasks and domains by first appearance.
    const state: ProfBenchState = { reports: new Map(), taskDomain: new Map(), typeFulfilment: new Map(), lastLength: new Map(), tally: createStatusTally() };
    return {
      add(item) {
        addReport(state, item);
      },
      finish: () => profbenchMetrics(state, options),
    };
  },
};

/** What the aggregator gathers as items come, in the reference's dict orders. */
interface ProfBenchState {
  /** Per (task, report text): weights achieved and possible, identical reports pooled. */
  reports: Map<string, { task: string; achieved: number; max: number }>;
  taskDomain: Map<string, string>;
  /** Per criterion type: 1 or 0 per fulfilled or unfulfilled (report, criterion) row. */
  typeFulfilment: Map<string, number[]>;
  /** The reference's `{task_id: len(response)}`: the last non-empty report of each task. */
  lastLength: Map<string, number>;
  tally: ReturnType<typeof createStatusTally>;
}

function addReport(state: ProfBenchState, item: ScoredItem): void {
  const { reports, taskDomain, typeFulfilment, lastLength, tally } = state;
  if (!tally.admit(item.status)) return;
  const totals = reportTotals(item);
  if (totals.max === 0) return tally.unscorable();
  const task = taskOf(item);
  const key = `${task}\u0000${item.responseDigest ?? `id:${item.id}`}`;
  const report = reports.get(key);
  if (report) {
    report.achieved += totals.achieved;
    report.max += totals.max;
  } else reports.set(key, { task, ...totals });
  taskDomain.set(task, domainOf(item));
  if (item.responseCharacters !== undefined && item.responseCharacters > 0) lastLength.set(task, item.responseCharacters);
  for (const criterion of item.criteria) {
    if (criterion.status !== 'ok' || criterion.points <= 0) continue;
    for (const tag of criterion.tags) {
      if (!tag.startsWith(criterionTypeTagPrefix)) continue;
      const type = tag.slice(criterionTypeTagPrefix.length);
      let list = typeFulfilment.get(type);
      if (!list) typeFulfilment.set(type, (list = []));
      list.push(criterion.met === true ? 1 : 0);
    }
  }
}

function profbenchMetrics(state: ProfBenchState, options: AggregateOptions): Metrics {
  const { reports, taskDomain, typeFulfilment, lastLength, tally } = state;
  const taskScores = new Map<string, number[]>();
  for (const report of reports.values()) {
    let list = taskScores.get(report.task);
    if (!list) taskScores.set(report.task, (list = []));
    list.push(report.achieved / report.max);
  }
  const domainTasks = new Map<string, number[]>();
  for (const [task, scores] of taskScores) {
    const domain = taskDomain.get(task)!;
    let list = domainTasks.get(domain);
    if (!list) domainTasks.set(domain, (list = []));
    list.push(numpyMean(scores));
  }
  const { printed, byTag, overall } = domainFigures(domainTasks, taskScores.size, options);
  const types = dictionary<number>();
  for (const [type, values] of typeFulfilment) {
    const rounded = numpyRound(numpyMean(values), 3);
    types[type] = rounded;
    printed[type] = numpyRound(rounded * 100, 1);
  }
  return {
    scoring: 'profbench',
    overall,
    by_tag: byTag,
    ...tally.counts(),
    extra: {
      profbench: {
        ...printed,
        // Token counts of the report generation are not in a results file; the length is.
        ...(lastLength.size > 0 ? { response_len_chars: numpyRound(numpyMean([...lastLength.values()]), 0) } : {}),
      },
      criterion_type_fulfilment: types,
      tasks: taskScores.size,
      reports: reports.size,
    },
  };
}

/** Each domain's rounded mean (with its bootstrap over tasks) and Overall, the mean of the rounded domain means; `printed` as the reference prints them (× 100). */
function domainFigures(domainTasks: Map<string, number[]>, taskCount: number, options: AggregateOptions): { printed: Record<string, number>; byTag: Record<string, TagMetric>; overall: TagMetric | null } {
  const domainRounded = new Map<string, number>();
  for (const [domain, scores] of domainTasks) domainRounded.set(domain, numpyRound(numpyMean(scores), 3));
  const printed = dictionary<number>();
  const byTag = dictionary<TagMetric>();
  if (domainRounded.size === 0) return { printed, byTag, overall: null };
  const overallRounded = numpyRound(numpyMean([...domainRounded.values()]), 3);
  for (const [domain, value] of domainRounded) printed[domain] = numpyRound(value * 100, 1);
  printed.Overall = numpyRound(overallRounded * 100, 1);
  for (const [domain, value] of domainRounded) {
    const tasks = domainTasks.get(domain)!;
    const spread = bootstrap(tasks, mean, options.bootstrapSamples ?? defaultBootstrapSamples, options.seed ?? defaultBootstrapSeed);
    byTag[`domain:${domain}`] = { score: value, n_samples: tasks.length, bootstrap_std: spread.std, ci95: spread.ci95 };
  }
  const spread = stratifiedOverallSpread(domainTasks, options);
  return { printed, byTag, overall: { score: overallRounded, n_samples: taskCount, bootstrap_std: spread.std, ci95: spread.ci95 } };
}

/** Stratified bootstrap of the unrounded statistic: resample tasks within each domain. */
function stratifiedOverallSpread(domainTasks: Map<string, number[]>, options: AggregateOptions): ReturnType<typeof bootstrap> {
  const domains = [...domainTasks.keys()];
  const flat: number[] = [];
  const offsets: number[] = [];
  for (const domain of domains) {
    offsets.push(flat.length);
    flat.push(...domainTasks.get(domain)!);
  }
  const sizes = domains.map((domain) => domainTasks.get(domain)!.length);
  return bootstrap(
    flat,
    (resample) => mean(sizes.map((size, index) => mean(resample.slice(offsets[index], offsets[index] + size)))),
    options.bootstrapSamples ?? defaultBootstrapSamples,
    options.seed ?? defaultBootstrapSeed,
    (random, _length, index) => {
      const domain = offsets.findLastIndex((offset) => offset <= index);
      return offsets[domain] + Math.floor(random() * sizes[domain]);
    },
  );
}
