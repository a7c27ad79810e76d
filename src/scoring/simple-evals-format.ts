import type { Metrics, TagMetric } from './types.js';
import { dictionary } from '../util/dictionary.js';

/**
 * The flat metrics dict simple-evals writes for HealthBench: `overall_score`, then each
 * tag, each with `:n_samples` and `:bootstrap_std` companions. Drop-in for its consumers.
 */
export function toSimpleEvalsMetrics(metrics: Metrics): Record<string, number> {
  const flat = dictionary<number>();
  const put = (name: string, metric: { score: number; n_samples: number; bootstrap_std: number }) => {
    flat[name] = metric.score;
    flat[`${name}:n_samples`] = metric.n_samples;
    flat[`${name}:bootstrap_std`] = metric.bootstrap_std;
  };
  // A length-adjusted scoring: upstream writes the unadjusted score and the adjusted one side by side.
  const unadjusted = lengthUnadjusted(metrics);
  if (unadjusted) {
    put('overall_score', unadjusted);
    if (metrics.overall) put('overall_score_length_adjusted', metrics.overall);
  } else if (metrics.overall) put('overall_score', metrics.overall);
  for (const [tag, metric] of Object.entries(metrics.by_tag)) put(tag, metric);
  const headline = unadjusted ?? metrics.overall;
  if (headline) {
    // simple-evals pops the headline `score` out of the dict but leaves its two companions in.
    flat['score:n_samples'] = headline.n_samples;
    flat['score:bootstrap_std'] = headline.bootstrap_std;
  }
  return flat;
}

function lengthUnadjusted(metrics: Metrics): TagMetric | undefined {
  if (!metrics.scoring.startsWith('healthbench_length_adjusted')) return undefined;
  const unadjusted = metrics.extra?.unadjusted as TagMetric | null | undefined;
  return unadjusted ?? undefined;
}
