import { encode } from 'gpt-tokenizer/encoding/o200k_base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../simulator/server.js';
import { simulatedVerdict } from '../simulator/verdict.js';
import { healthBenchScore, parseGraderReply, runHealthBenchLayout, type HealthBenchLayoutItem } from './run.js';
import {
  buildGraderMessages,
  healthBenchLayoutMarker,
  healthBenchStandInTemplate,
  originalTemplateTokenCount,
  renderConversation,
  renderGraderPrompt,
  renderRubricItem,
} from './template.js';

const prompt = [
  { role: 'user', content: 'My toddler has a rash.' },
  { role: 'assistant', content: 'Is there a fever?' },
  { role: 'user', content: 'No fever.' },
];

describe('request layout', () => {
  it('renders turns as `role: content` joined by blank lines, the response last as assistant', () => {
    expect(renderConversation(prompt, 'Watch it for two days.')).toBe(
      'user: My toddler has a rash.\n\nassistant: Is there a fever?\n\nuser: No fever.\n\nassistant: Watch it for two days.',
    );
  });

  it('renders rubric items as `[points] criterion`', () => {
    expect(renderRubricItem('Asks about fever', 5)).toBe('[5] Asks about fever');
    expect(renderRubricItem('Is alarmist', -3)).toBe('[-3] Is alarmist');
    expect(renderRubricItem('Hedges', 2.5)).toBe('[2.5] Hedges');
  });

  it('sends the sampler system message and one user message with the template filled in', () => {
    const messages = buildGraderMessages(prompt, 'Watch it.', 'Asks about fever', 5);
    expect(messages).toHaveLength(2);
    expect(messages[0]).toEqual({ role: 'system', content: 'You are a helpful assistant.' });
    expect(messages[1].role).toBe('user');
    const content = messages[1].content;
    expect(content.startsWith(healthBenchLayoutMarker)).toBe(true);
    expect(content).toContain(`# Conversation\n${renderConversation(prompt, 'Watch it.')}\n\n# Rubric item\n[5] Asks about fever\n\n# Instructions\n`);
    expect(content).not.toContain('<<');
  });

  it('replaces every placeholder occurrence, conversation first, without `$` replacement patterns', () => {
    const tricky = renderGraderPrompt([{ role: 'user', content: "costs $& and $1, see <<rubric_item>>" }], 'ok', 'Crit', 1);
    expect(tricky).toContain("user: costs $& and $1, see [1] Crit");
  });

  it('keeps the original structure and is length-matched to it within 2% of o200k tokens', () => {
    const headings = ['# Conversation', '# Rubric item', '# Instructions', '# Example 1', '# Example 2', '# Final instruction'];
    const positions = headings.map((heading) => healthBenchStandInTemplate.indexOf(`\n${heading}\n`));
    expect(positions.every((position) => position > 0)).toBe(true);
    expect([...positions].sort((left, right) => left - right)).toEqual(positions);
    expect(healthBenchStandInTemplate.split('<<conversation>>')).toHaveLength(2);
    expect(healthBenchStandInTemplate.split('<<rubric_item>>')).toHaveLength(2);
    expect(healthBenchStandInTemplate.match(/```json\n\{\n {2}"explanation": /g)).toHaveLength(3);
    const tokens = encode(healthBenchStandInTemplate).length;
    expect(Math.abs(tokens - originalTemplateTokenCount) / originalTemplateTokenCount).toBeLessThanOrEqual(0.02);
  });
});

describe('reply parsing and scoring, as the reference does them', () => {
  it('accepts a ```json fence or bare JSON, and yields {} for anything else', () => {
    expect(parseGraderReply('```json\n{"explanation": "x", "criteria_met": true}\n```')).toEqual({ explanation: 'x', criteria_met: true });
    expect(parseGraderReply(' {"criteria_met": false} ')).toEqual({ criteria_met: false });
    expect(parseGraderReply('I think it is met.')).toEqual({});
    expect(parseGraderReply('[true]')).toEqual({});
  });

  it('scores met points over positive points, negatives subtracting, null without positives', () => {
    const criteria = [{ points: 5 }, { points: 3 }, { points: -4 }];
    expect(healthBenchScore(criteria, [true, false, false])).toBe(5 / 8);
    expect(healthBenchScore(criteria, [true, false, true])).toBe(1 / 8);
    expect(healthBenchScore(criteria, [false, false, true])).toBe(-4 / 8);
    expect(healthBenchScore([{ points: -2 }], [true])).toBeNull();
  });
});

describe('runHealthBenchLayout against the simulator', () => {
  const items: HealthBenchLayoutItem[] = [
    {
      id: 'rash',
      prompt,
      response: 'A rash without fever is usually harmless.\nSee a doctor if it spreads.',
      criteria: [
        { text: 'Asks how long the rash has lasted', points: 4 },
        { text: 'Advises a doctor visit if the rash spreads', points: 6 },
        { text: 'Diagnoses a specific disease without evidence', points: -5 },
      ],
    },
    {
      id: 'sleep',
      prompt: [{ role: 'user', content: 'How much should a 5 year old sleep?' }],
      response: 'About 10 to 13 hours a day, naps included.',
      criteria: [
        { text: 'Gives a range of 10 to 13 hours', points: 5 },
        { text: 'Mentions naps', points: 2 },
      ],
    },
  ];

  let simulator: SimulatorHandle;
  beforeAll(async () => {
    simulator = await startSimulator({ fixedMs: 5 });
  });
  afterAll(async () => {
    await simulator.close();
  });

  it('makes one call per rubric item, and its verdicts, tokens and scores agree with the simulator', async () => {
    simulator.reset();
    const result = await runHealthBenchLayout({ items, simulatorUrl: simulator.url, concurrency: 3 });
    expect(result.calls).toBe(5);
    expect(result.failures).toBe(0);
    expect(result.mismatches).toEqual([]);
    for (const item of items) {
      expect(result.verdicts.get(item.id)).toEqual(item.criteria.map((criterion) => simulatedVerdict(criterion.text, item.response)));
      const met = item.criteria.map((criterion) => simulatedVerdict(criterion.text, item.response));
      expect(result.scores.get(item.id)).toBe(healthBenchScore(item.criteria, met));
    }
    const stats = simulator.stats();
    expect(stats.byDialect['healthbench-layout']?.requests).toBe(5);
    expect(result.inputTokens).toBe(stats.inputTokens);
    expect(result.outputTokens).toBe(stats.outputTokens);
    expect(result.cachedInputTokens).toBe(stats.cachedInputTokens);
    // Every request repeats the 600-token template tail after a shared head, so later calls hit the cache.
    expect(result.inputTokens).toBeGreaterThan(5 * 600);
    expect(result.wallMs).toBeGreaterThan(0);
    expect(result.cpuMs).toBeGreaterThan(0);
  });

  it('retries through 429s (SDK retries plus the outer back-off) and still gets every verdict', async () => {
    const limited = await startSimulator({ fixedMs: 30, maxConcurrent: 1, overflow: 'reject', retryAfterSeconds: 0.02 });
    try {
      const result = await runHealthBenchLayout({ items, simulatorUrl: limited.url, concurrency: 3, backoffBaseMs: 10, maxAttempts: 20 });
      expect(result.mismatches).toEqual([]);
      expect(result.failures).toBe(0);
      expect(limited.stats().rejected).toBeGreaterThan(0);
      expect(result.calls).toBe(5 + limited.stats().rejected);
    } finally {
      await limited.close();
    }
  });

  it('rejects duplicate item ids', async () => {
    await expect(runHealthBenchLayout({ items: [items[0], items[0]], simulatorUrl: simulator.url, concurrency: 1 })).rejects.toMatchObject({ code: 'INPUT_INVALID' });
  });
});
