/**
 * What went wrong in a run, by error code: counts and one example message per code, for the
 * end-of-run summary. "20 error" alone sends the user digging through the results file; "20 ×
 * JUDGE_REQUEST_REJECTED: judge rejected the request (404): model not found" says what to fix.
 */
import type { SerializedError } from '../errors.js';
import { redactText } from '../util/redact.js';
import type { ResultRecord } from '../results/results.js';

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
