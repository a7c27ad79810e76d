/**
 * BiGGen-Bench report (prometheus-eval, `BiGGen-Bench/make_report.py`): each instance's
 * 1–5 score; per capability the mean of its instances; Overall = the mean of the capability
 * means (not of all instances), both with Python's `sum / len`, printed with 3 decimals.
 * Capabilities are visited in the reference's fixed order.
 */
import { bootstrap, defaultBootstrapSamples, defaultBootstrapSeed } from '../statistics/bootstrap.js';
import { mean } from '../statistics/descriptive.js';
import { pythonFixed } from '../statistics/reference-math.js';
import { createStatusTally } from '../statistics/status-tally.js';
import type { AggregateOptions, Aggregator, Metrics, ScoredItem, Scoring, TagMetric } from './types.js';
import { dictionary } from '../util/dictionary.js';

export const biggenCapabilities = ['grounding', 'instruction_following', 'planning', 'reasoning', 'refinement', 'safety', 'theory_of_mind', 'tool_usage', 'multilingual'] as const;

/** The instance's 1–5 score: the label of its one graded ordinal criterion, or its expected score (`--verdict expected-score`). */
function likertScore(item: ScoredItem): number | null {
  if (item.status !== 'ok') return null;
  const graded = item.criteria.filter((criterion) => criterion.status === 'ok');
  if (graded.length !== 1) return null;
  const expected = graded[0].expectedScore;
  if (expected !== undefined) return Number.isFinite(expected) ? expected : null;
  const label = graded[0].label;
  const score = label === undefined ? Number.NaN : Number(label);
  return Number.isInteger(score) ? score : null;
}

function capabilityOf(item: ScoredItem): string {
  const tag = item.tags?.find((entry) => entry.startsWith('capability:'));
  if (tag) return tag.slice('capability:'.length);
  const capability = item.metadata?.capability;
  return typeof capability === 'string' ? capability : 'unknown';
}

export const biggenScoring: Scoring = {
  name: 'biggen',
  description: 'BiGGen-Bench: 1–5 score per instance; per capability mean; Overall = mean of the capability means',
  itemScore: likertScore,
  createAggregator(options: AggregateOptions = {}): Aggregator {
    const byCapability = new Map<string, number[]>(biggenCapabilities.map((capability) => [capability, []]));
    const tally = createStatusTally();
    return {
      add(item) {
        if (!tally.admit(item.status)) return;
        const score = likertScore(item);
        if (score === null) return tally.unscorable();
        const capability = capabilityOf(item);
        let list = byCapability.get(capability);
        if (!list) byCapability.set(capability, (list = []));
        list.push(score);
      },
      finish(): Metrics {
        const byTag = dictionary<TagMetric>();
        const report = dictionary<number | null>();
        const printed = dictionary<string>();
        const means: number[] = [];
        const samples = options.bootstrapSamples ?? defaultBootstrapSamples;
        const seed = options.seed ?? defaultBootstrapSeed;
        for (const [capability, scores] of byCapability) {
          if (scores.length === 0) {
            report[capability] = null;
            printed[capability] = 'N/A';
            continue;
          }
          const average = mean(scores);
          means.push(average);
          report[capability] = average;
          printed[capability] = pythonFixed(average, 3);
          const spread = bootstrap(scores, mean, samples, seed);
          byTag[`capability:${capability}`] = { score: average, n_samples: scores.length, bootstrap_std: spread.std, ci95: spread.ci95 };
        }
        const overallScore = means.length > 0 ? mean(means) : 0;
        report.Overall = overallScore;
        printed.Overall = pythonFixed(overallScore, 3);
        const instances = means.length > 0 ? [...byCapability.values()].reduce((sum, list) => sum + list.length, 0) : 0;
        const overall: TagMetric | null = means.length > 0 ? { score: overallScore, n_samples: instances, bootstrap_std: Number.NaN, ci95: [Number.NaN, Number.NaN] } : null;
        if (overall) {
          // Resample instances within each capability, keeping the capabilities equally weighted.
          const lists = [...byCapability.values()].filter((list) => list.length > 0);
          const flat = lists.flat();
          const offsets: number[] = [];
          let offset = 0;
          for (const list of lists) {
            offsets.push(offset);
            offset += list.length;
          }
          const spread = bootstrap(
            flat,
            (resample) => mean(lists.map((list, index) => mean(resample.slice(offsets[index], offsets[index] + list.length)))),
            samples,
            seed,
            (random, _length, index) => {
              const group = offsets.findLastIndex((start) => start <= index);
              return offsets[group] + Math.floor(random() * lists[group].length);
            },
          );
          overall.bootstrap_std = spread.std;
          overall.ci95 = spread.ci95;
        }
        return {
          scoring: 'biggen',
          overall,
          by_tag: byTag,
          ...tally.counts(),
          extra: { biggen: report, biggen_printed: printed },
        };
      },
    };
  },
};
