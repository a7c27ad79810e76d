/**
 * What went wrong in a run, by error code: counts and one example message per code, for the
 * end-of-run summary. "20 error" alone sends the user digging through the results file; "20 ×
 * JUDGE_REQUEST_REJECTED: judge rejected the request (404): model not found" says what to fix.
 */
import type { SerializedError } from '../errors.js';
import { redactText } from '../util/redact.js';
import type { ResultRecord } from '../results/results.js';
import type { Metrics } from '../scoring/types.js';

export interface ErrorCodeCount {
  code: string;
  count: number;
  /** The first message seen with this code (redacted, shortened). */
  example: string;
}

const exampleLength = 240;

export class ErrorTally {
  private readonly byCode = new Map<string, ErrorCodeCount>();

  add(error: Pick<SerializedError, 'code' | 'message'> | undefined): void {
    if (!error) return;
    const code = String(error.code);
    const entry = this.byCode.get(code);
    if (entry) {
      entry.count += 1;
      return;
    }
    const message = redactText(String(error.message ?? ''));
    this.byCode.set(code, { code, count: 1, example: message.length > exampleLength ? `${message.slice(0, exampleLength)}…` : message });
  }

  /** Every criterion error of a results line, or the line's own error (invalid records). */
  addResult(record: Pick<ResultRecord, 'status' | 'criteria' | 'error'>): void {
    if (record.status === 'ok') return;
    let counted = false;
    for (const criterion of record.criteria) {
      if (criterion.status === 'error' && criterion.error) {
        this.add(criterion.error);
        counted = true;
      }
    }
    if (!counted) this.add(record.error);
  }

  get size(): number {
    return this.byCode.size;
  }

  /** The most frequent codes first. */
  top(limit = 5): ErrorCodeCount[] {
    return [...this.byCode.values()].sort((first, second) => second.count - first.count || first.code.localeCompare(second.code)).slice(0, limit);
  }
}

/** Summary lines: one per code, most frequent first. */
export function formatErrorCounts(counts: readonly ErrorCodeCount[], more = 0): string[] {
  if (counts.length === 0) return [];
  const lines = ['errors by code:'];
  for (const entry of counts) lines.push(`  ${entry.code} ×${entry.count}: ${entry.example.split('\n')[0]}`);
  if (more > 0) lines.push(`  … ${more} more codes in the results file`);
  return lines;
}

/**
 * What to do about a run's failed items, in one sentence each, for the CLI's summary and the
 * report's banner alike: items in error are graded again by rerunning the same command (every
 * verdict already received comes from the reply cache); invalid records need their input fixed.
 */
export function retryAdvice(counts: { errors: number; invalid: number }): string[] {
  const advice: string[] = [];
  if (counts.errors > 0) {
    advice.push(`rerun the same command to grade the ${counts.errors === 1 ? 'item' : `${counts.errors} items`} in error again: verdicts already received come from the reply cache and are not paid for twice`);
  }
  if (counts.invalid > 0) {
    advice.push(`fix the ${counts.invalid === 1 ? 'invalid input record' : `${counts.invalid} invalid input records`} (each reported with its file, line and field) and rerun`);
  }
  return advice;
}

/**
 * What share of the items a run's score stands for, when some failed: "the score covers 65% of
 * the items (20 of 31): 10 in error, 1 invalid". Null when none failed (the score covers every
 * gradable item).
 */
export function scoreCoverage(metrics: Pick<Metrics, 'n' | 'n_ok' | 'n_error' | 'n_invalid' | 'n_unscorable'>): string | null {
  const failed = metrics.n_error + metrics.n_invalid;
  if (failed === 0) return null;
  const scored = metrics.n_ok - metrics.n_unscorable;
  const parts = [metrics.n_error > 0 ? `${metrics.n_error} in error` : '', metrics.n_invalid > 0 ? `${metrics.n_invalid} invalid` : ''].filter(Boolean);
  return `The score covers ${Math.floor((scored / Math.max(1, metrics.n)) * 100)}% of the items (${scored} of ${metrics.n}): ${parts.join(', ')}.`;
}
