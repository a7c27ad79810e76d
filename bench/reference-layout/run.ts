/**
 * A client that grades items the way OpenAI simple-evals' HealthBench grader does: one chat
 * call per rubric item, with the reference's request shape (see template.ts), its sampling
 * parameters, its reply parsing (strip a ```json fence, parse, retry while `criteria_met` is
 * not a boolean) and its per-item score (met points over positive points).
 *
 * Transport: the official `openai` SDK with its default of 2 automatic retries, as the
 * reference's Python SDK has, and the reference's own outer retry with 2^trial second
 * back-off on any other failure (bounded here, where the reference loops forever).
 *
 * One divergence, on purpose: the reference nests thread pools (n_threads examples, each
 * grading up to 50 rubric items at once); here a single pool of `concurrency` workers runs
 * all (item, rubric item) calls in item order, so every harness runs at the same judge
 * concurrency.
 */
import OpenAI from 'openai';
import { RubricateError } from '../../src/errors.js';
import { safeParseJson } from '../../src/util/json.js';
import { simulatedVerdict } from '../simulator/verdict.js';
import {
  buildGraderMessages,
  healthBenchGraderModel,
  healthBenchMaxTokens,
  healthBenchTemperature,
  type ConversationTurn,
} from './template.js';

export interface HealthBenchLayoutItem {
  id: string;
  prompt: ConversationTurn[];
  response: string;
  criteria: Array<{ text: string; points: number }>;
}

export interface RunHealthBenchLayoutOptions {
  items: readonly HealthBenchLayoutItem[];
  /** Base URL of an OpenAI-compatible server, ending in `/v1`. */
  simulatorUrl: string;
  /** Judge calls in flight at once. */
  concurrency: number;
  /** Grader model name sent in requests (default the reference's gpt-4.1-2025-04-14). */
  model?: string;
  /** Outer attempts per rubric item before giving up (the reference never gives up). Default 6. */
  maxAttempts?: number;
  /** Base of the outer back-off in ms (the reference waits 2^trial seconds: base 1000). */
  backoffBaseMs?: number;
  apiKey?: string;
}

export interface HealthBenchLayoutMismatch {
  itemId: string;
  criterionIndex: number;
  expected: boolean;
  actual: boolean | null;
}

export interface HealthBenchLayoutResult {
  wallMs: number;
  /** CPU (user + system) of this process during the run; run via main.ts to isolate it. */
  cpuMs: number;
  /** HTTP requests sent, retries included. */
  calls: number;
  inputTokens: number;
  cachedInputTokens: number;
  outputTokens: number;
  /** Per item, per rubric item: criteria_met, or null when grading gave up. */
  verdicts: Map<string, Array<boolean | null>>;
  /** Per item: the reference's overall score (may be negative; clipping happens on the mean). */
  scores: Map<string, number | null>;
  /** Verdicts that differ from `simulatedVerdict` (only meaningful against the simulator). */
  mismatches: HealthBenchLayoutMismatch[];
  /** Rubric items abandoned after `maxAttempts`. */
  failures: number;
}

/** Reply parsing as the reference does it: drop a surrounding ```json fence, then parse. */
export function parseGraderReply(text: string): Record<string, unknown> {
  const cleaned = text.trim().replace(/^```json\s*|\s*```$/g, '');
  const parsed = safeParseJson(cleaned);
  return parsed.ok && parsed.value && typeof parsed.value === 'object' && !Array.isArray(parsed.value) ? (parsed.value as Record<string, unknown>) : {};
}

/** The reference's calculate_score: points of met criteria over the sum of positive points. */
export function healthBenchScore(criteria: ReadonlyArray<{ points: number }>, met: ReadonlyArray<boolean>): number | null {
  const possible = criteria.reduce((total, criterion) => (criterion.points > 0 ? total + criterion.points : total), 0);
  if (possible === 0) return null;
  const achieved = criteria.reduce((total, criterion, index) => (met[index] ? total + criterion.points : total), 0);
  return achieved / possible;
}

const sleep = (milliseconds: number) => new Promise((resolve) => setTimeout(resolve, milliseconds));

export async function runHealthBenchLayout(options: RunHealthBenchLayoutOptions): Promise<HealthBenchLayoutResult> {
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1) {
    throw new RubricateError('CONFIG_INVALID', 'concurrency must be an integer >= 1', { field: 'concurrency' });
  }
  const maxAttempts = options.maxAttempts ?? 6;
  const backoffBaseMs = options.backoffBaseMs ?? 1000;
  let calls = 0;
  const countingFetch: typeof fetch = (input, init) => {
    calls += 1;
    return fetch(input, init);
  };
  const client = new OpenAI({
    baseURL: options.simulatorUrl,
    apiKey: options.apiKey ?? 'sk-simulated-judge',
    fetch: countingFetch,
  });
  const model = options.model ?? healthBenchGraderModel;

  const tasks: Array<{ item: HealthBenchLayoutItem; criterionIndex: number }> = [];
  const verdicts = new Map<string, Array<boolean | null>>();
  for (const item of options.items) {
    if (verdicts.has(item.id)) throw new RubricateError('INPUT_INVALID', `duplicate item id ${item.id}: ids key the results`, { field: 'items.id' });
    verdicts.set(item.id, new Array<boolean | null>(item.criteria.length).fill(null));
    item.criteria.forEach((_criterion, criterionIndex) => tasks.push({ item, criterionIndex }));
  }

  let inputTokens = 0;
  let cachedInputTokens = 0;
  let outputTokens = 0;
  let failures = 0;

  async function gradeRubricItem(item: HealthBenchLayoutItem, criterionIndex: number): Promise<boolean | null> {
    const criterion = item.criteria[criterionIndex];
    const messages = buildGraderMessages(item.prompt, item.response, criterion.text, criterion.points);
    for (let trial = 0; trial < maxAttempts; trial += 1) {
      try {
        const completion = await client.chat.completions.create({
          model,
          messages,
          temperature: healthBenchTemperature,
          max_tokens: healthBenchMaxTokens,
        });
        inputTokens += completion.usage?.prompt_tokens ?? 0;
        cachedInputTokens += completion.usage?.prompt_tokens_details?.cached_tokens ?? 0;
        outputTokens += completion.usage?.completion_tokens ?? 0;
        const label = parseGraderReply(completion.choices[0]?.message?.content ?? '').criteria_met;
        if (label === true || label === false) return label;
        // Bad JSON: the reference retries at once, without back-off.
      } catch (error) {
        // 400s are final in the reference (it records "No response (bad request)").
        if (error instanceof OpenAI.BadRequestError) return null;
        await sleep(backoffBaseMs * 2 ** trial);
      }
    }
    return null;
  }

  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  let next = 0;
  async function worker(): Promise<void> {
    while (next < tasks.length) {
      const task = tasks[next];
      next += 1;
      const verdict = await gradeRubricItem(task.item, task.criterionIndex);
      if (verdict === null) failures += 1;
      (verdicts.get(task.item.id) as Array<boolean | null>)[task.criterionIndex] = verdict;
    }
  }
  await Promise.all(Array.from({ length: Math.min(options.concurrency, Math.max(1, tasks.length)) }, () => worker()));
  const wallMs = performance.now() - wallStart;
  const cpu = process.cpuUsage(cpuStart);

  const scores = new Map<string, number | null>();
  const mismatches: HealthBenchLayoutMismatch[] = [];
  for (const item of options.items) {
    const itemVerdicts = verdicts.get(item.id) as Array<boolean | null>;
    scores.set(item.id, itemVerdicts.includes(null) ? null : healthBenchScore(item.criteria, itemVerdicts as boolean[]));
    item.criteria.forEach((criterion, criterionIndex) => {
      const expected = simulatedVerdict(criterion.text, item.response);
      if (itemVerdicts[criterionIndex] !== expected) mismatches.push({ itemId: item.id, criterionIndex, expected, actual: itemVerdicts[criterionIndex] });
    });
  }

  return {
    wallMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    calls,
    inputTokens,
    cachedInputTokens,
    outputTokens,
    verdicts,
    scores,
    mismatches,
    failures,
  };
}
