import type { Metrics } from './types.js';

/**
 * The flat metrics dict simple-evals writes for HealthBench: `overall_score`, then each
 * tag, each with `:n_samples` and `:bootstrap_std` companions. Drop-in for its consumers.
 */
export function toSimpleEvalsMetrics(metrics: Metrics): Record<string, number> {
  const flat: Record<string, number> = {};
  const put = (name: string, metric: { score: number; n_samples: number; bootstrap_std: number }) => {
    flat[name] = metric.score;
    flat[`${name}:n_samples`] = metric.n_samples;
    flat[`${name}:bootstrap_std`] = metric.bootstrap_std;
  };
  if (metrics.overall) put('overall_score', metrics.overall);
  for (const [tag, metric] of Object.entries(metrics.by_tag)) put(tag, metric);
  if (metrics.overall) {
    // simple-evals pops the headline `score` out of the dict but leaves its two companions in.
    flat['score:n_samples'] = metrics.overall.n_samples;
    flat['score:bootstrap_std'] = metrics.overall.bootstrap_std;
  }
  return flat;
}
