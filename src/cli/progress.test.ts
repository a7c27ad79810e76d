import { describe, expect, it } from 'vitest';
import type { EngineEvent } from '../engine/engine.js';
import { createScriptedJudge } from '../judges/scripted.js';
import type { Judge, JudgeReply } from '../judges/types.js';
import { Grader, type GraderOptions } from '../pipeline/grader.js';
import type { ImportRecord } from '../rubric/records.js';
import { normalizeItem } from '../rubric/normalize.js';
import type { Item } from '../rubric/schema.js';
import type { ReplyStore } from '../store/types.js';
import { ProgressReporter, type ProgressDisplay } from './progress.js';

const terminal = { isTTY: true } as NodeJS.WriteStream;
const pipe = { isTTY: false } as NodeJS.WriteStream;

/** A reporter printing into an array, on a clock the test moves (milliseconds). */
function reporterWith(display: ProgressDisplay, criteriaPerLine?: number) {
  const lines: string[] = [];
  let clock = 5_000;
  const progress = new ProgressReporter(display, 'grading (local: per criterion, short)', { criteriaPerLine, print: (line) => lines.push(line), now: () => clock });
  return { lines, progress, advance: (milliseconds: number) => (clock += milliseconds) };
}

const settled = (count: number): EngineEvent => ({ type: 'criteria', count });
const itemDone: EngineEvent = { type: 'item', status: 'ok' };

function makeItem(id: string, criteria: number): Item {
  return normalizeItem({ id, prompt: 'question', response: `response ${id}`, rubric: { criteria: Array.from({ length: criteria }, (_, index) => ({ id: `c${index}`, text: `criterion ${index}`, points: 1 })) } });
}

async function* records(items: Item[]): AsyncGenerator<ImportRecord> {
  for (const [index, item] of items.entries()) yield { kind: 'item', item, line: index + 1 };
}

function mapStore(): ReplyStore {
  const entries = new Map<string, string>();
  return { get: (key) => (entries.has(key) ? (JSON.parse(entries.get(key)!) as JudgeReply) : undefined), put: (key, reply) => void entries.set(key, JSON.stringify(reply)), close: () => undefined };
}

/** Grades the items through a real Grader, counting into a `lines` reporter; returns its counters and lines. */
async function gradeCounting(judge: Judge, items: Item[], options: Partial<GraderOptions>, criteriaPerLine: number) {
  const { lines, progress } = reporterWith('lines', criteriaPerLine);
  progress.setTotal(items.length);
  const grader = new Grader({ judge, calls: { concurrency: 1, retryBaseDelayMs: 1 }, ...options, onEvent: progress.onEvent });
  for await (const result of grader.gradeStream(records(items))) expect(result.status).toBe('ok');
  return { counters: progress.counters, printedAt: lines.map((line) => Number(/: (\d+) criteria,/.exec(line)![1])) };
}

describe('progress display', () => {
  it('is a bar on a terminal, lines off one only for a local judge, and nothing with --quiet', () => {
    expect(ProgressReporter.displayFor(terminal, false)).toBe('bar');
    expect(ProgressReporter.displayFor(terminal, false, true)).toBe('bar');
    expect(ProgressReporter.displayFor(pipe, false, true)).toBe('lines');
    // An HTTP judge off a terminal: its logs stay clean.
    expect(ProgressReporter.displayFor(pipe, false, false)).toBe('none');
    expect(ProgressReporter.displayFor(pipe, true, true)).toBe('none');
    expect(ProgressReporter.displayFor(terminal, true, true)).toBe('none');
  });

  it('prints one line every 10 settled criteria by default, with items, rate, time left and errors', () => {
    const { lines, progress, advance } = reporterWith('lines');
    progress.setTotal(12);
    for (let item = 0; item < 3; item += 1) {
      for (let criterion = 0; criterion < 9; criterion += 1) {
        advance(2_000);
        progress.onEvent(settled(1));
      }
      progress.onEvent(item === 1 ? { type: 'item', status: 'error' } : itemDone);
    }
    // Lines at the 10th criterion (20 s, 1 item done: 11 left at 20 s each, 220 s) and the 20th (40 s, 2 done: 10 × 20 s).
    expect(lines).toEqual([
      'grading (local: per criterion, short): 10 criteria, 1/12 items, 0.50 criteria/s, about 4 min left, 0 errors',
      'grading (local: per criterion, short): 20 criteria, 2/12 items, 0.50 criteria/s, about 3 min left, 1 error',
    ]);
    advance(6_000);
    progress.stop();
    progress.stop();
    // The end: the time taken instead of the time left, printed once however often the run stops the display.
    expect(lines.slice(2)).toEqual(['grading (local: per criterion, short): 27 criteria, 3/12 items in 60 s, 0.45 criteria/s, 1 error']);
  });

  it('counts batches of criteria: one line per multiple of N crossed, however many criteria a call settles', () => {
    const { lines, progress, advance } = reporterWith('lines', 4);
    advance(1_000);
    for (const count of [3, 3, 3, 9, 1]) progress.onEvent(settled(count));
    // 3, 6 (crosses 4), 9 (crosses 8), 18 (crosses 12 and 16: one line), 19. The total is not known yet.
    expect(lines.map((line) => line.replace(/, [\d.]+ criteria\/s/, ''))).toEqual([
      'grading (local: per criterion, short): 6 criteria, 0 items, 0 errors',
      'grading (local: per criterion, short): 9 criteria, 0 items, 0 errors',
      'grading (local: per criterion, short): 18 criteria, 0 items, 0 errors',
    ]);
  });

  it('prints nothing for a bar-less display (an HTTP judge off a terminal, or --quiet), not even at the end', () => {
    const { lines, progress } = reporterWith('none', 1);
    for (let index = 0; index < 30; index += 1) progress.onEvent(settled(1));
    progress.onEvent(itemDone);
    progress.stop();
    expect(lines).toEqual([]);
    expect(progress.counters.criteria).toBe(30);
  });

  it('the end line waits for something graded: a run that graded nothing ends silently', () => {
    const { lines, progress } = reporterWith('lines');
    progress.stop();
    expect(lines).toEqual([]);
  });
});

// The engine's `criteria` events, through a real Grader: what the lines count.
describe('criteria counted from the engine', () => {
  const items = [makeItem('a', 5), makeItem('b', 3)];

  it('per criterion, batched, and from the cache: each criterion once', async () => {
    const judge = createScriptedJudge('met');
    const perCriterion = await gradeCounting(judge, items, {}, 3);
    expect(perCriterion.counters).toMatchObject({ criteria: 8, calls: 8, cacheHits: 0, done: 2 });
    expect(perCriterion.printedAt).toEqual([3, 6]);

    // Two criteria per call: a's 5 criteria in calls of 2, 2, 1; b's 3 in 2, 1.
    const store = mapStore();
    const batched = await gradeCounting(judge, items, { plan: { criteriaPerCall: 2 }, store }, 3);
    expect(batched.counters).toMatchObject({ criteria: 8, calls: 5, cacheHits: 0 });
    // A line where a call crosses a multiple of 3: 2, 4 (a line), 5, then b's 7 (a line), 8.
    expect(batched.printedAt).toEqual([4, 7]);

    // The same run again: every reply from the store, every criterion still counted.
    const cached = await gradeCounting(judge, items, { plan: { criteriaPerCall: 2 }, store }, 3);
    expect(cached.counters).toMatchObject({ criteria: 8, calls: 0, cacheHits: 5 });
  });

  it('a criterion asked again after an unreadable reply counts once, when it settles', async () => {
    const scripted = createScriptedJudge('met');
    let replies = 0;
    const judge: Judge = {
      ...scripted,
      // The first reply does not parse: the engine asks again for that criterion.
      complete: async (request, options) => (replies++ === 0 ? { text: 'not json', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0 }, finishReason: 'stop' } : scripted.complete(request, options)),
    };
    const { counters } = await gradeCounting(judge, items, {}, 10);
    expect(counters).toMatchObject({ criteria: 8, calls: 9, retries: 1 });
  });
});

describe('the terminal bar', () => {
  it('opens empty, with "?" for the total until the input is counted (never full at 0/0)', () => {
    const written: string[] = [];
    const stream = {
      isTTY: true,
      columns: 160,
      write: (chunk: unknown) => (written.push(String(chunk)), true),
      on: () => stream,
      once: () => stream,
      removeListener: () => stream,
    } as unknown as NodeJS.WriteStream;
    const progress = new ProgressReporter('bar', 'grading', { stream });
    try {
      // What the terminal shows: the text without its cursor and colour escapes.
      // eslint-disable-next-line no-control-regex -- the escapes are what is removed
      const shown = written.join('').replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
      expect(shown).toMatch(/grading \u2591{10,} 0\/\? \|/);
      expect(shown).not.toContain('\u2588');
    } finally {
      progress.stop();
    }
  });
});
