/**
 * The shapes scoring works on: the criterion and item parts of a results line. Scoring is
 * pure: it never calls a judge, so any results file can be re-scored any number of times.
 */
import type { StatusCounts } from '../statistics/status-tally.js';

export interface ScoredCriterion {
  id: string;
  points: number;
  tags: string[];
  kind?: 'principle' | 'hard_rule';
  source?: 'judge' | 'check';
  status: 'ok' | 'error' | 'skipped';
  met: boolean | null;
  /** Fraction in [0, 1] (binary 1/0, ordinal value, probability); falls back to `met`. */
  value?: number | null;
  label?: string;
  /** The criterion's text, when the results carry it (scorings that key by text, DRB II). */
  text?: string;
  /** `--verdict expected-score`: the expectation of the scale's numeric labels (3.7 on 1–5), for scorings of Likert scores. */
  expectedScore?: number;
  /** The judge could not assess it (`--abstain`); status, met and value are the policy's. */
  cannotAssess?: boolean;
}

export interface ScoredItem {
  id: string;
  status: 'ok' | 'error' | 'invalid';
  gated?: boolean;
  /** Item-level tags (HealthBench example tags): they inherit the item's score. */
  tags?: string[];
  criteria: ScoredCriterion[];
  metadata?: Record<string, unknown>;
  /** Response length in characters, for length-adjusted scores. */
  responseCharacters?: number;
  /** Digest of the response text, when the results carry it (ProfBench merges identical reports). */
  responseDigest?: string;
}

export interface TagMetric {
  score: number;
  n_samples: number;
  bootstrap_std: number;
  /** 95% percentile bootstrap interval of the aggregate. */
  ci95: [number, number];
}

/** The figures, then the items read by status (`n`, `n_ok`, `n_error`, `n_invalid`, `n_unscorable`). */
export interface Metrics extends StatusCounts {
  scoring: string;
  overall: TagMetric | null;
  by_tag: Record<string, TagMetric>;
  /** Scoring-specific extra figures (IFEval accuracies, ProfBench domains, …). */
  extra?: Record<string, unknown>;
  /** Present when failed judge calls were counted as "not met" (`--failed-as-zero`): how many. */
  failed_as_zero?: { items: number; criteria: number };
  /** Present when the judge abstained (`--abstain`): criteria it could not assess and the items holding them, apart from errors. */
  cannot_assess?: { items: number; criteria: number };
}

export interface Scoring {
  name: string;
  description: string;
  /** Score of one item, or null when it has nothing to score against. */
  itemScore(item: ScoredItem): number | null;
  /** Streaming aggregation: memory grows with the number of scores, not with item size. */
  createAggregator(options?: AggregateOptions): Aggregator;
}

export interface Aggregator {
  add(item: ScoredItem): void;
  finish(): Metrics;
}

export interface AggregateOptions {
  bootstrapSamples?: number;
  seed?: number;
}
