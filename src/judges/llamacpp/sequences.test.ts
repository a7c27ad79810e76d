import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { writeTinyGguf } from '../../testing/tiny-gguf.js';
import type { ChatMessage, JudgeRequest } from '../types.js';
import { createLlamaCppJudge, type InferenceProfile, type LlamaCppJudge } from './llamacpp-judge.js';
import { test } from '../../testing/vitest-fixtures.js';

const verdictOutput = { name: 'verdict', schema: z.toJSONSchema(z.object({ explanation: z.string(), criteria_met: z.boolean() })) as Record<string, unknown> };

/** A long conversation every criterion shares, the criterion last: the shape of our grading prompts. */
const sharedConversation = 'Patient: I have had a dry cough for three weeks and a mild fever in the evenings. What should I do? '.repeat(3);

function itemMessages(criterion: string): ChatMessage[] {
  return [
    { role: 'system', content: 'You grade a response against one rubric criterion. Reply in JSON.' },
    { role: 'user', content: `${sharedConversation}\nResponse: See a doctor if it lasts, drink water and rest.\nCriterion: ${criterion}` },
  ];
}

const criteria = ['mentions water', 'mentions rest', 'is polite', 'is short', 'cites a source', 'uses metric units', 'names a doctor'];

function requests(): JudgeRequest[] {
  // Sampled at a temperature with a seed per call, so the explanations differ and are reproducible.
  return criteria.map((criterion, index) => ({ messages: itemMessages(criterion), output: verdictOutput, temperature: 1.2, seed: 100 + index, maxTokens: 48 }));
}

const signal = () => new AbortController().signal;

describe('several sequences of one context', () => {
  let one: LlamaCppJudge;
  let three: LlamaCppJudge;
  const oneProfiles: InferenceProfile[] = [];
  const threeProfiles: InferenceProfile[] = [];

  test.beforeAll(async ({ fileTempDir }) => {
    const model = await writeTinyGguf({ path: path.join(fileTempDir, 'tiny.gguf'), bias: 'none' });
    one = await createLlamaCppJudge({ model, threads: 1, sequences: 1, contextSize: 1024, onInference: (profile) => void oneProfiles.push(profile) });
    three = await createLlamaCppJudge({ model, threads: 1, sequences: 3, contextSize: 1024, onInference: (profile) => void threeProfiles.push(profile) });
  });

  afterAll(async () => {
    await one?.close();
    await three?.close();
  });

  it('answers calls made at once on three sequences byte for byte as one sequence answers them in turn', async () => {
    const sequential = [];
    for (const request of requests()) sequential.push(await one.complete(request, { signal: signal() }));
    const parallel = await Promise.all(requests().map((request) => three.complete(request, { signal: signal() })));
    expect(parallel.map((reply) => reply.text)).toEqual(sequential.map((reply) => reply.text));
    expect(parallel.map((reply) => reply.usage.outputTokens)).toEqual(sequential.map((reply) => reply.usage.outputTokens));
    expect(new Set(sequential.map((reply) => reply.text)).size).toBeGreaterThan(1);
  });

  it('evaluates the shared prefix once: the other sequences load its saved state', () => {
    const prefix = Math.min(...threeProfiles.map((profile) => profile.promptTokens + profile.reusedTokens)) - 40;
    const evaluatedThePrefix = threeProfiles.filter((profile) => profile.promptTokens >= prefix);
    expect(evaluatedThePrefix).toHaveLength(1);
    expect(threeProfiles.filter((profile) => profile.copiedTokens > 0).length).toBe(2);
    // About the tokens one sequence evaluates in turn (tails can share a few more tokens with the
    // previous criterion than with the saved prefix), and far from a second prefix.
    const evaluated = (profiles: InferenceProfile[]) => profiles.reduce((sum, profile) => sum + profile.promptTokens, 0);
    expect(evaluated(threeProfiles)).toBeGreaterThanOrEqual(evaluated(oneProfiles));
    expect(evaluated(threeProfiles)).toBeLessThan(evaluated(oneProfiles) + criteria.length * 8);
    expect(oneProfiles.every((profile) => profile.copiedTokens === 0)).toBe(true);
  });

  it('sends a call to the sequence that already holds its prefix', async () => {
    threeProfiles.length = 0;
    const reply = await three.complete(requests()[0], { signal: signal() });
    expect(reply.usage.cachedInputTokens).toBeGreaterThan(sharedConversation.length);
    expect(threeProfiles[0].copiedTokens).toBe(0);
  });
});
