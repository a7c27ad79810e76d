/**
 * How rubric results predict a task outcome recorded beside each item (τ-bench's reward,
 * kept by the importer as `metadata.outcome_reward`): AUROC of the item score, accuracy at
 * the best score threshold, agreement of "every deterministic check passed" with the
 * outcome, and per criterion group how its failure goes with the outcome's failure.
 */
import { kendallTauB, spearmanCorrelation } from '../statistics/correlation.js';
import type { SerializedError } from '../errors.js';
import { readResults, type ResultRecord } from '../results/results.js';

export interface OutcomeCriterionAssociation {
  /** Criterion group: its first tag, else its id. */
  group: string;
  source: 'judge' | 'check';
  /** Items where the criterion was decided, split by verdict. */
  met: number;
  notMet: number;
  /** Outcome failure rate among items where it was met / not met (null when there are none). */
  failureRateWhenMet: number | null;
  failureRateWhenNotMet: number | null;
  /** failureRateWhenNotMet − failureRateWhenMet: how much more often the task failed when the criterion did. */
  failureLift: number | null;
  /** Phi coefficient between "criterion not met" and "outcome failed". */
  phi: number | null;
}

export interface OutcomeReport {
  kind: 'outcome';
  outcomeField: string;
  items: { total: number; withOutcome: number; positive: number; negative: number; scored: number; errors: number; invalidLines: number };
  /** Area under the ROC curve of item scores against the outcome (ties count half); null without both classes. */
  auroc: number | null;
  /** Rank correlation of the item score with the outcome (1 success, 0 failure): Spearman's ρ and Kendall's τ-b, ties averaged. */
  rankCorrelation: { spearman: number | null; kendallTauB: number | null };
  /** Best accuracy of "score ≥ threshold ⇒ success" over every threshold, and that threshold (null: predicting failure for all is best). */
  bestThreshold: { threshold: number | null; accuracy: number } | null;
  /** "Every deterministic check passed" against the outcome, on items whose checks all ran. */
  checks: { items: number; agreement: number | null; checksPassedOutcomeFailed: string[]; checksFailedOutcomeSucceeded: string[] } | null;
  criteria: OutcomeCriterionAssociation[];
  problems: SerializedError[];
}

function readPath(record: Record<string, unknown>, path: string): unknown {
  let current: unknown = record;
  for (const key of path.split('.')) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** AUROC by the Mann–Whitney statistic with average ranks for ties. */
export function auroc(scores: readonly number[], positives: readonly boolean[]): number | null {
  const order = scores.map((score, index) => ({ score, positive: positives[index] })).sort((left, right) => left.score - right.score);
  const positiveCount = order.filter((entry) => entry.positive).length;
  const negativeCount = order.length - positiveCount;
  if (positiveCount === 0 || negativeCount === 0) return null;
  let rankSum = 0;
  for (let start = 0; start < order.length; ) {
    let end = start;
    while (end + 1 < order.length && order[end + 1].score === order[start].score) end += 1;
    const averageRank = (start + end) / 2 + 1;
    for (let index = start; index <= end; index += 1) if (order[index].positive) rankSum += averageRank;
    start = end + 1;
  }
  return (rankSum - (positiveCount * (positiveCount + 1)) / 2) / (positiveCount * negativeCount);
}

export function bestThresholdAccuracy(scores: readonly number[], positives: readonly boolean[]): { threshold: number | null; accuracy: number } | null {
  if (scores.length === 0) return null;
  const thresholds: Array<number | null> = [...new Set(scores)].sort((left, right) => left - right);
  thresholds.push(null);
  let best: { threshold: number | null; accuracy: number } = { threshold: thresholds[0], accuracy: -1 };
  for (const threshold of thresholds) {
    let correct = 0;
    for (let index = 0; index < scores.length; index += 1) if ((threshold !== null && scores[index] >= threshold) === positives[index]) correct += 1;
    const accuracy = correct / scores.length;
    if (accuracy > best.accuracy) best = { threshold, accuracy };
  }
  return best;
}

function phi(a: number, b: number, c: number, d: number): number | null {
  const denominator = Math.sqrt((a + b) * (c + d) * (a + c) * (b + d));
  return denominator === 0 ? null : (a * d - b * c) / denominator;
}

export async function outcomeMeta(file: string, options: { outcomeField?: string } = {}): Promise<OutcomeReport> {
  const outcomeField = options.outcomeField ?? 'metadata.outcome_reward';
  const problems: SerializedError[] = [];
  const items = { total: 0, withOutcome: 0, positive: 0, negative: 0, scored: 0, errors: 0, invalidLines: 0 };
  const scores: number[] = [];
  const scoredPositives: boolean[] = [];
  let checkItems = 0;
  let checkAgree = 0;
  const passedButFailed: string[] = [];
  const failedButPassed: string[] = [];
  const groups = new Map<string, { source: 'judge' | 'check'; metFail: number; metOk: number; notMetFail: number; notMetOk: number }>();
  for await (const entry of readResults(file)) {
    if (entry.kind === 'invalid') {
      items.invalidLines += 1;
      problems.push(entry.error.toJSON());
      continue;
    }
    const record: ResultRecord = entry.record;
    items.total += 1;
    const outcome = readPath(record as unknown as Record<string, unknown>, outcomeField);
    const value = typeof outcome === 'boolean' ? (outcome ? 1 : 0) : outcome;
    if (typeof value !== 'number' || !Number.isFinite(value)) continue;
    items.withOutcome += 1;
    const success = value > 0.5;
    if (success) items.positive += 1;
    else items.negative += 1;
    if (record.status === 'ok' && typeof record.score === 'number') {
      items.scored += 1;
      scores.push(record.score);
      scoredPositives.push(success);
    } else if (record.status !== 'ok') items.errors += 1;
    const checks = record.criteria.filter((criterion) => criterion.source === 'check');
    if (checks.length > 0 && checks.every((criterion) => criterion.status === 'ok')) {
      checkItems += 1;
      const passed = checks.every((criterion) => criterion.met === true);
      if (passed === success) checkAgree += 1;
      else (passed ? passedButFailed : failedButPassed).push(record.id);
    }
    for (const criterion of record.criteria) {
      if (criterion.status !== 'ok' || typeof criterion.met !== 'boolean') continue;
      const group = criterion.tags?.[0] ?? criterion.id;
      let counts = groups.get(group);
      if (!counts) groups.set(group, (counts = { source: criterion.source, metFail: 0, metOk: 0, notMetFail: 0, notMetOk: 0 }));
      if (criterion.met) {
        if (success) counts.metOk += 1;
        else counts.metFail += 1;
      } else if (success) counts.notMetOk += 1;
      else counts.notMetFail += 1;
    }
  }
  const rate = (fail: number, ok: number) => (fail + ok === 0 ? null : fail / (fail + ok));
  const criteria = [...groups.entries()]
    .map(([group, counts]): OutcomeCriterionAssociation => {
      const whenMet = rate(counts.metFail, counts.metOk);
      const whenNotMet = rate(counts.notMetFail, counts.notMetOk);
      return {
        group,
        source: counts.source,
        met: counts.metFail + counts.metOk,
        notMet: counts.notMetFail + counts.notMetOk,
        failureRateWhenMet: whenMet,
        failureRateWhenNotMet: whenNotMet,
        failureLift: whenMet === null || whenNotMet === null ? null : whenNotMet - whenMet,
        phi: phi(counts.notMetFail, counts.notMetOk, counts.metFail, counts.metOk),
      };
    })
    .sort((left, right) => left.group.localeCompare(right.group));
  return {
    kind: 'outcome',
    outcomeField,
    items,
    auroc: auroc(scores, scoredPositives),
    bestThreshold: bestThresholdAccuracy(scores, scoredPositives),
    rankCorrelation: { spearman: spearmanCorrelation(scores, scoredPositives.map(Number)), kendallTauB: kendallTauB(scores, scoredPositives.map(Number)) },
    checks: checkItems === 0 ? null : { items: checkItems, agreement: checkAgree / checkItems, checksPassedOutcomeFailed: passedButFailed, checksFailedOutcomeSucceeded: failedButPassed },
    criteria,
    problems,
  };
}

const percent = (value: number | null) => (value === null ? '—' : `${(value * 100).toFixed(1)}%`);
const fixed = (value: number | null) => (value === null ? '—' : value.toFixed(3));

export function formatOutcomeReport(report: OutcomeReport): string {
  const lines = [
    `outcome ${report.outcomeField}: ${report.items.withOutcome} items (${report.items.positive} success, ${report.items.negative} failure); ${report.items.scored} scored, ${report.items.errors} in error`,
    `AUROC of the score: ${fixed(report.auroc)}; Spearman ρ ${fixed(report.rankCorrelation.spearman)}, Kendall τ-b ${fixed(report.rankCorrelation.kendallTauB)}; best-threshold accuracy: ${report.bestThreshold ? `${percent(report.bestThreshold.accuracy)} ${report.bestThreshold.threshold === null ? 'predicting failure for all' : `at score ≥ ${report.bestThreshold.threshold}`}` : '—'}`,
  ];
  if (report.checks) {
    lines.push(
      `deterministic checks vs outcome: ${percent(report.checks.agreement)} agreement on ${report.checks.items} items (${report.checks.checksPassedOutcomeFailed.length} passed but failed, ${report.checks.checksFailedOutcomeSucceeded.length} failed but succeeded)`,
    );
  }
  lines.push('criterion group                     source  met  not met  fail|met  fail|not met  lift    phi');
  for (const row of report.criteria) {
    lines.push(
      `${row.group.padEnd(36)}${row.source.padEnd(8)}${String(row.met).padStart(4)}${String(row.notMet).padStart(9)}${percent(row.failureRateWhenMet).padStart(10)}${percent(row.failureRateWhenNotMet).padStart(14)}${fixed(row.failureLift).padStart(7)}${fixed(row.phi).padStart(7)}`,
    );
  }
  return lines.join('\n');
}
