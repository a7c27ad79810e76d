/**
 * Progress on stderr: a live bar (done/total, rate, ETA, errors, cache hits) when stderr is a
 * terminal. Elsewhere nothing, so logs and pipes stay clean, except for a local (embedded
 * llama.cpp) judge: its runs take minutes to hours, so a log gets one plain line every N
 * criteria the judge settled, and one when the run ends.
 */
import { createReadStream } from 'node:fs';
import { createRequire } from 'node:module';
import type cliProgress from 'cli-progress';
import type { EngineEvent } from '../engine/engine.js';
import { formatDuration } from './local-judge-forecast.js';

export interface ProgressCounters {
  done: number;
  ok: number;
  errors: number;
  invalid: number;
  calls: number;
  cacheHits: number;
  retries: number;
  /** Criteria the judge settled (a verdict or a final error), cache hits included. */
  criteria: number;
}

/** `bar`: the live bar (a terminal); `lines`: plain lines every N criteria (a local judge off a terminal); `none`. */
export type ProgressDisplay = 'bar' | 'lines' | 'none';

/** Plain progress lines come every this many settled criteria unless told otherwise. */
export const defaultCriteriaPerLine = 10;

export interface ProgressLineOptions {
  /** One line every this many settled criteria: counted, never timed, so a log grows with the work done. */
  criteriaPerLine?: number;
  /** Where the lines go (default stderr). */
  print?: (line: string) => void;
  /** Milliseconds, for the rate and the time left; injectable so tests need no clock. */
  now?: () => number;
  /** Where the bar is drawn (default stderr). */
  stream?: NodeJS.WriteStream;
  /** The bar shows done/total, rate and time left only: work that makes no model call (no errors, cache hits or calls to show). */
  itemsOnly?: boolean;
}

/**
 * The progress-bar package, required when a bar is first drawn (a terminal): commands in logs,
 * pipes and tests, and every `--help`, never load it (issue #49, start-up per command).
 */
export function loadProgressBars(): typeof cliProgress {
  return createRequire(import.meta.url)('cli-progress') as typeof cliProgress;
}

export class ProgressReporter {
  readonly counters: ProgressCounters = { done: 0, ok: 0, errors: 0, invalid: 0, calls: 0, cacheHits: 0, retries: 0, criteria: 0 };
  private bar: cliProgress.SingleBar | undefined;
  private lines: { every: number; print: (line: string) => void; now: () => number; started: number; printed: number; ended: boolean } | undefined;
  /** Items the run will grade, once counted. */
  private total: number | undefined;

  constructor(
    display: ProgressDisplay,
    private readonly label = 'grading',
    lineOptions: ProgressLineOptions = {},
  ) {
    if (display === 'lines') {
      const every = lineOptions.criteriaPerLine ?? defaultCriteriaPerLine;
      if (!Number.isInteger(every) || every < 1) throw new RangeError(`criteriaPerLine must be a positive integer, got ${every}`);
      const now = lineOptions.now ?? (() => performance.now());
      this.lines = { every, print: lineOptions.print ?? ((line) => process.stderr.write(`${line}\n`)), now, started: now(), printed: 0, ended: false };
      return;
    }
    if (display !== 'bar') return;
    const bars = loadProgressBars();
    this.bar = new bars.SingleBar(
      {
        // `?` until the input is counted: never a full bar at 0/0.
        format: `${label} {bar} {value}/{totalShown} | {rate}/s | ETA {eta_formatted}${lineOptions.itemsOnly ? '' : ' | errors {errors} | cache hits {cacheHits} | calls {calls}'}`,
        hideCursor: true,
        clearOnComplete: false,
        emptyOnZero: true,
        etaBuffer: 200,
        fps: 5,
        stream: lineOptions.stream ?? process.stderr,
      },
      bars.Presets.shades_classic,
    );
    this.bar.start(0, 0, this.payload());
  }

  /**
   * The bar on a terminal unless `--quiet`. Off a terminal, lines for a local judge only:
   * an HTTP judge's run is short enough that its logs stay clean.
   */
  static displayFor(stream: NodeJS.WriteStream, quiet: boolean, localJudge = false): ProgressDisplay {
    if (quiet) return 'none';
    if (stream.isTTY) return 'bar';
    return localJudge ? 'lines' : 'none';
  }

  setTotal(total: number): void {
    this.total = total;
    this.bar?.setTotal(Math.max(total, this.counters.done));
    this.bar?.update(this.counters.done, this.payload());
  }

  readonly onEvent = (event: EngineEvent): void => {
    const counters = this.counters;
    if (event.type === 'item') {
      counters.done += 1;
      if (event.status === 'ok') counters.ok += 1;
      else if (event.status === 'error') counters.errors += 1;
      else counters.invalid += 1;
      if (counters.done > (this.total ?? 0)) this.bar?.setTotal(counters.done);
      this.bar?.update(counters.done, this.payload());
    } else if (event.type === 'call') {
      if (event.cached) counters.cacheHits += 1;
      else counters.calls += 1;
    } else if (event.type === 'retry') {
      counters.retries += 1;
    } else if (event.type === 'criteria') {
      counters.criteria += event.count;
      const lines = this.lines;
      // A batch can settle several criteria at once: one line when it crosses a multiple of N.
      if (lines && Math.floor(counters.criteria / lines.every) > Math.floor(lines.printed / lines.every)) {
        lines.printed = counters.criteria;
        lines.print(this.line(false));
      }
    }
  };

  /** `LABEL: 30 criteria, 3/12 items, 0.41 criteria/s, about 21 min left, 0 errors`; at the end, the time taken instead of the time left. */
  private line(end: boolean): string {
    const { criteria, done, errors, invalid } = this.counters;
    const lines = this.lines!;
    const seconds = (lines.now() - lines.started) / 1000;
    const total = this.total;
    const parts = [`${criteria} ${criteria === 1 ? 'criterion' : 'criteria'}`, total === undefined ? `${done} items` : `${done}/${total} items`];
    if (end) parts[1] += ` in ${formatDuration(seconds)}`;
    if (seconds > 0) parts.push(`${(criteria / seconds).toFixed(2)} criteria/s`);
    // Items are what the run's total counts, so the time left is projected per item.
    if (!end && total !== undefined && done > 0 && total > done) parts.push(`about ${formatDuration((seconds / done) * (total - done))} left`);
    parts.push(`${errors + invalid} ${errors + invalid === 1 ? 'error' : 'errors'}`);
    return `${this.label}: ${parts.join(', ')}`;
  }

  private payload() {
    const elapsed = this.bar ? (Date.now() - (this.bar as unknown as { startTime: number }).startTime) / 1000 : 0;
    return {
      errors: this.counters.errors + this.counters.invalid,
      cacheHits: this.counters.cacheHits,
      calls: this.counters.calls,
      rate: elapsed > 0 ? (this.counters.done / elapsed).toFixed(1) : '0.0',
      totalShown: this.total === undefined ? '?' : String(Math.max(this.total, this.counters.done)),
    };
  }

  /** Ends the display; callable more than once (a run stops it on every way out), the last line printed once. */
  stop(): void {
    if (this.lines && !this.lines.ended) {
      this.lines.ended = true;
      if (this.counters.criteria > 0 || this.counters.done > 0) this.lines.print(this.line(true));
    }
    if (!this.bar) return;
    this.bar.update(this.counters.done, this.payload());
    this.bar.stop();
  }
}

/** Counts lines with something on them (records of a JSONL file), for "N of M" after an interrupt. */
export async function countRecords(file: string): Promise<number> {
  let count = 0;
  let content = false;
  for await (const chunk of createReadStream(file) as AsyncIterable<Buffer>) {
    for (const byte of chunk) {
      if (byte === 10) {
        if (content) count += 1;
        content = false;
      } else if (byte !== 32 && byte !== 9 && byte !== 13) content = true;
    }
  }
  return content ? count + 1 : count;
}
