/**
 * Token counts as providers report them, checked before anything is counted or billed. A count
 * that cannot be true (negative, fractional, not a number, or more tokens than any model reads
 * or writes in one call) is not counted: the reply's usage names it instead (`implausible`), the
 * run's usage counts such replies, and the run says so, rather than billing $3e+295 or $0.
 */
import type { JudgeUsage } from './types.js';

/** More tokens than any model reads or writes in one call (context windows are at most a few million). */
export const maxPlausibleTokens = 100_000_000;

/** Reads a reply's token counts by field name; `usage()` gives them with the implausible ones named. */
export class TokenCountReader {
  private readonly implausible: string[] = [];

  /** The count a provider reported in `field`: absent (undefined, null) is 0, an implausible value is 0 and noted. */
  count(field: string, value: unknown): number {
    if (value === undefined || value === null) return 0;
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= maxPlausibleTokens) return value;
    this.implausible.push(`${field} ${typeof value === 'string' ? JSON.stringify(value) : String(value)}`);
    return 0;
  }

  /** The usage with the implausible counts it left out, if any. */
  usage(counts: Omit<JudgeUsage, 'implausible'>): JudgeUsage {
    return this.implausible.length > 0 ? { ...counts, implausible: this.implausible } : counts;
  }
}
