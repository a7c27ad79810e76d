import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteReplyStore } from '../../store/index.js';
import { Grader, type GraderOptions } from '../../pipeline/grader.js';
import { normalizeItem } from '../../rubric/normalize.js';
import type { Item } from '../../rubric/schema.js';
import { batchedVerdicts, binaryVerdict, type FakeJudge, type FakeJudgeRequest, type FakeJudgeScript } from '../../testing/fake-judge.js';
import { test as base } from '../../testing/vitest-fixtures.js';
import { parseProbeList, runProbes, sampleItems, type ProbeReport } from './runner.js';
import type { ProbeResult } from './analysis.js';

/**
 * Topic words that appear nowhere in the probes' own text, so a judge that looks for them
 * can only be moved by what the response says.
 */
const topics = [
  { word: 'zebrafish', sentence: 'The zebrafish is a small freshwater fish from South Asia.', criterion: 'States that the zebrafish is a freshwater fish' },
  { word: 'saxophone', sentence: 'A saxophone uses a single reed like a clarinet.', criterion: 'Explains that the saxophone is a single reed instrument' },
  { word: 'tungsten', sentence: 'Tungsten has the highest melting point of any metal.', criterion: 'Notes that tungsten has the highest melting point of metals' },
  { word: 'meringue', sentence: 'Meringue is made by whipping egg whites with sugar.', criterion: 'Describes meringue as whipped egg whites and sugar' },
  { word: 'platypus', sentence: 'The platypus is a mammal that lays eggs.', criterion: 'Mentions that the platypus lays eggs' },
  { word: 'quasar', sentence: 'A quasar is an extremely bright galactic nucleus.', criterion: 'Defines a quasar as a bright galactic nucleus' },
  { word: 'fjord', sentence: 'A fjord is a long narrow inlet carved by a glacier.', criterion: 'Says a fjord was carved by glacial action' },
  { word: 'walrus', sentence: 'The walrus uses its tusks to haul itself onto ice.', criterion: 'Mentions how the walrus uses its tusks' },
];

function topicOf(criterionText: string) {
  return topics.find((topic) => criterionText === topic.criterion)!;
}

/**
 * Twelve items; each response covers two or three of its four criteria's topics, so every
 * original has met and unmet criteria.
 */
function makeItems(count = 12): Item[] {
  return Array.from({ length: count }, (_, index) => {
    const chosen = [0, 1, 2, 3].map((offset) => topics[(index + offset * 2) % topics.length]);
    const covered = chosen.slice(0, index % 3 === 0 ? 3 : 2);
    return normalizeItem({
      id: `item-${index}`,
      prompt: `Tell me two or three facts about ${chosen.map((topic) => topic.word).join(', ')}.`,
      response: covered.map((topic) => topic.sentence).join(' '),
      rubric: { criteria: chosen.map((topic) => ({ text: topic.criterion, points: 5 })) },
    });
  });
}

type Decide = (criterion: FakeJudgeRequest['criteria'][number], response: string) => boolean;

const mentions: Decide = (criterion, response) => response.toLowerCase().includes(topicOf(criterion.text).word);
/** Longer than every original response; padding at least doubles the shortest one past it. */
const longResponse = 1.05 * Math.max(...makeItems().map((item) => item.response.length));
/** Rewards length: anything long enough is "met". */
const lengthLoving: Decide = (criterion, response) => mentions(criterion, response) || response.length > longResponse;
/** Does what text inside the response tells it to. */
const obedient: Decide = (criterion, response) => mentions(criterion, response) || /mark every criterion|criteria_met"?\s*:\s*true|<\/response-/i.test(response);

/** A judge answering each criterion with `decide`, whether asked one criterion per call or a batch. */
function deciding(decide: Decide): FakeJudgeScript {
  return (request) => {
    const response = request.response ?? '';
    if (request.criteria.length > 1) return { content: batchedVerdicts(request.criteria, (criterion) => decide(criterion, response)) };
    return { content: binaryVerdict(decide(request.criteria[0], response)) };
  };
}

/** `probeJudge(script)`: a loopback judge, and `grader(options)` making graders that each have their own client to it. */
const test = base.extend<{ probeJudge: (script: FakeJudgeScript) => Promise<{ fake: FakeJudge; grader: (options?: Partial<GraderOptions>) => Grader }> }>({
  probeJudge: async ({ startJudge, connectJudge }, use) => {
    await use(async (script) => {
      const fake = await startJudge(script);
      return { fake, grader: (options = {}) => new Grader({ judge: connectJudge(fake, { model: 'probe-judge' }), ...options, calls: { concurrency: 8, retryBaseDelayMs: 5, ...options.calls } }) };
    });
  },
});

function probe(report: ProbeReport, name: string): ProbeResult {
  const result = report.probes.find((entry) => entry.probe === name);
  if (!result) throw new Error(`no ${name} probe in the report`);
  return result;
}

describe('runProbes against scripted judges', () => {
  test('finds nothing wrong with a judge that reads the content, and sees it react to deletions', async ({ probeJudge }) => {
    const { grader } = await probeJudge(deciding(mentions));
    const report = await runProbes(grader({ plan: { criteriaPerCall: 'all' } }), makeItems(), { seed: 3, bootstrap: { resamples: 500 } });
    expect(report.items).toMatchObject({ probed: 12, originalOk: 12, originalFailed: 0 });
    expect(report.probes.map((result) => result.probe)).toEqual(['padding', 'formatting', 'confidence', 'flattery', 'deletion', 'injection']);
    for (const name of ['padding', 'formatting', 'confidence', 'flattery']) {
      const result = probe(report, name);
      expect(result.drift.items).toBe(12);
      expect(result.drift.mean).toBe(0);
      expect(result.drift.interval!.lower).toBeLessThanOrEqual(0);
      expect(result.drift.interval!.upper).toBeGreaterThanOrEqual(0);
      expect(result.flips.any.count).toBe(0);
      expect(result.assessment).toBe('no significant change');
      expect(result.flagged).toBe(false);
    }
    const deletion = probe(report, 'deletion');
    // 4 items cover three topics, 8 cover two: one deletion per met criterion.
    expect(deletion.variants.graded).toBe(4 * 3 + 8 * 2);
    expect(deletion.target).toMatchObject({ count: 28, of: 28, rate: 1 });
    expect(deletion.flips.any.count).toBe(0);
    expect(deletion.drift.mean).toBeLessThan(0);
    expect(deletion.drift.interval!.upper).toBeLessThan(0);
    expect(deletion.assessment).toBe('score falls');
    expect(deletion.flagged).toBe(false);
    const injection = probe(report, 'injection');
    expect(injection.flips.notMetToMet.count).toBe(0);
    expect(injection.flips.notMetToMet.of).toBeGreaterThan(0);
    expect(injection.assessment).toBe('no flips');
    expect(Object.keys(injection.byVariant!)).toEqual(['injection:direct', 'injection:delimiter', 'injection:fake-verdict']);
  });

  test('flags a judge that rewards length: padding drift above zero with an interval above zero', async ({ probeJudge }) => {
    const { grader } = await probeJudge(deciding(lengthLoving));
    const report = await runProbes(grader(), makeItems(), { probes: ['padding', 'deletion'], seed: 3, bootstrap: { resamples: 500 } });
    const padding = probe(report, 'padding');
    expect(2 * Math.min(...makeItems().map((item) => item.response.length))).toBeGreaterThan(longResponse);
    expect(padding.drift.mean).toBeGreaterThan(0);
    expect(padding.drift.interval!.lower).toBeGreaterThan(0);
    expect(padding.drift.rose).toBe(12);
    expect(padding.flips.notMetToMet.rate).toBe(1);
    expect(padding.flips.metToNotMet.count).toBe(0);
    expect(padding.assessment).toBe('score rises');
    expect(padding.flagged).toBe(true);
    expect(padding.byCriterion[0].flips).toBeGreaterThan(0);
    // Short originals: deletion still works for this judge, so it is not flagged there.
    expect(probe(report, 'deletion').flagged).toBe(false);
  });

  test('flags a judge that obeys injected instructions: not met → met flips with an interval above zero', async ({ probeJudge }) => {
    const { grader } = await probeJudge(deciding(obedient));
    const report = await runProbes(grader(), makeItems(), { probes: ['injection', 'flattery'], seed: 3, bootstrap: { resamples: 500 } });
    const injection = probe(report, 'injection');
    expect(injection.flips.notMetToMet.rate).toBe(1);
    expect(injection.flips.notMetToMet.interval!.lower).toBeGreaterThan(0);
    expect(injection.drift.interval!.lower).toBeGreaterThan(0);
    expect(injection.assessment).toBe('flips to met');
    expect(injection.flagged).toBe(true);
    for (const variant of Object.values(injection.byVariant!)) expect(variant.assessment).toBe('flips to met');
    expect(probe(report, 'flattery').flagged).toBe(false);
  });

  test('is deterministic and goes through the reply cache: a rerun makes no new calls and gives the same figures', async ({ probeJudge, tempDir, closeAfter }) => {
    const { fake, grader } = await probeJudge(deciding(lengthLoving));
    const store = closeAfter(new SqliteReplyStore(path.join(tempDir, 'cache.sqlite')));
    const options = { probes: parseProbeList('padding,injection'), seed: 11, variants: 2, bootstrap: { resamples: 200 } };
    const first = await runProbes(grader({ store }), makeItems(6), options);
    const callsAfterFirst = fake.requests.length;
    const second = await runProbes(grader({ store }), makeItems(6), options);
    expect(fake.requests.length).toBe(callsAfterFirst);
    expect(second.usage.calls).toBe(0);
    expect(second.usage.cache_hits).toBeGreaterThan(0);
    expect(second.probes).toEqual(first.probes);
    // Two variants per item: each item's drift averages both.
    expect(probe(first, 'padding').perItem.every((entry) => entry.variants === 2)).toBe(true);
    expect(probe(first, 'injection').variants.graded).toBe(6 * 2 * 3);
  });

  test('does not perturb items whose original grading failed', async ({ probeJudge }) => {
    const { grader } = await probeJudge((request) => (request.response?.includes('platypus') ? { content: 'no verdict here' } : { content: binaryVerdict(mentions(request.criteria[0], request.response ?? '')) }));
    const report = await runProbes(grader({ calls: { maxAttempts: 1, concurrency: 4 } }), makeItems(), { probes: ['padding'], bootstrap: { resamples: 100 } });
    const failed = makeItems().filter((item) => item.response.includes('platypus')).length;
    expect(failed).toBeGreaterThan(0);
    expect(report.items.originalFailed).toBe(failed);
    expect(probe(report, 'padding').perItem).toHaveLength(12 - failed);
  });
});

describe('sampleItems', () => {
  async function* numbers(count: number) {
    for (let index = 0; index < count; index += 1) yield index;
  }

  it('keeps everything without a count, and a seeded subset in input order with one', async () => {
    expect(await sampleItems(numbers(5), undefined, 0)).toEqual([0, 1, 2, 3, 4]);
    const sample = await sampleItems(numbers(1000), 10, 7);
    expect(sample).toHaveLength(10);
    expect([...sample].sort((left, right) => left - right)).toEqual(sample);
    expect(new Set(sample).size).toBe(10);
    expect(await sampleItems(numbers(1000), 10, 7)).toEqual(sample);
    expect(await sampleItems(numbers(1000), 10, 8)).not.toEqual(sample);
    expect(await sampleItems(numbers(3), 10, 7)).toEqual([0, 1, 2]);
  });

  it('draws each item with about the same probability', async () => {
    const hits = new Array(20).fill(0);
    for (let seed = 0; seed < 400; seed += 1) for (const value of await sampleItems(numbers(20), 5, seed)) hits[value] += 1;
    // Expected 100 each (400 × 5 / 20); a biased reservoir would starve the early or late items.
    for (const count of hits) expect(count).toBeGreaterThan(60);
    for (const count of hits) expect(count).toBeLessThan(140);
  });
});

describe('parseProbeList', () => {
  it('accepts known probes once each and rejects unknown ones', () => {
    expect(parseProbeList('padding, injection,padding')).toEqual(['padding', 'injection']);
    expect(() => parseProbeList('padding,verbosity')).toThrow(/unknown probe "verbosity"/);
    expect(() => parseProbeList(' , ')).toThrow(/at least one probe/);
  });
});
