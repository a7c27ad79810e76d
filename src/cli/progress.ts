/**
 * Progress on stderr: a live bar (done/total, rate, ETA, errors, cache hits) when stderr
 * is a terminal; nothing at all otherwise, so logs and pipes stay clean.
 */
import { createReadStream } from 'node:fs';
import cliProgress from 'cli-progress';
import type { EngineEvent } from '../engine/engine.js';

export interface ProgressCounters {
  done: number;
  ok: number;
  errors: number;
  invalid: number;
  calls: number;
  cacheHits: number;
  retries: number;
}

export class ProgressReporter {
  readonly counters: ProgressCounters = { done: 0, ok: 0, errors: 0, invalid: 0, calls: 0, cacheHits: 0, retries: 0 };
  private bar: cliProgress.SingleBar | undefined;
  private total = 0;

  constructor(enabled: boolean, label = 'grading') {
    if (!enabled) return;
    this.bar = new cliProgress.SingleBar(
      {
        format: `${label} {bar} {value}/{total} | {rate}/s | ETA {eta_formatted} | errors {errors} | cache hits {cacheHits} | calls {calls}`,
        hideCursor: true,
        clearOnComplete: false,
        etaBuffer: 200,
        fps: 5,
        stream: process.stderr,
      },
      cliProgress.Presets.shades_classic,
    );
    this.bar.start(0, 0, this.payload());
  }

  static enabledFor(stream: NodeJS.WriteStream, quiet: boolean): boolean {
    return !quiet && Boolean(stream.isTTY);
  }

  setTotal(total: number): void {
    this.total = total;
    this.bar?.setTotal(Math.max(total, this.counters.done));
  }

  readonly onEvent = (event: EngineEvent): void => {
    const counters = this.counters;
    if (event.type === 'item') {
      counters.done += 1;
      if (event.status === 'ok') counters.ok += 1;
      else if (event.status === 'error') counters.errors += 1;
      else counters.invalid += 1;
      if (counters.done > this.total) this.bar?.setTotal(counters.done);
      this.bar?.update(counters.done, this.payload());
    } else if (event.type === 'call') {
      if (event.cached) counters.cacheHits += 1;
      else counters.calls += 1;
    } else if (event.type === 'retry') {
      counters.retries += 1;
    }
  };

  private payload() {
    const elapsed = this.bar ? (Date.now() - (this.bar as unknown as { startTime: number }).startTime) / 1000 : 0;
    return {
      errors: this.counters.errors + this.counters.invalid,
      cacheHits: this.counters.cacheHits,
      calls: this.counters.calls,
      rate: elapsed > 0 ? (this.counters.done / elapsed).toFixed(1) : '0.0',
    };
  }

  stop(): void {
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
