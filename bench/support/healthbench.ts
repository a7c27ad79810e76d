/**
 * Benchmark items from HealthBench records (`../shared/data/healthbench/*.jsonl`): the prompt
 * conversation, a response to grade and the rubric. Records carry no model response, so the
 * physician-written ideal completion stands in for one; records without it are skipped.
 */
import { RubricateError } from '../../src/errors.js';
import { safeParseJson } from '../../src/util/json.js';
import { readLines } from '../../src/util/jsonl.js';
import { dataPath } from '../../src/testing/data.js';

export interface BenchConversationTurn {
  role: string;
  content: string;
}

export interface BenchItem {
  id: string;
  prompt: BenchConversationTurn[];
  response: string;
  criteria: Array<{ text: string; points: number }>;
}

/** `../shared/data/healthbench/oss_eval_first100.jsonl`, resolved from the working directory (the project root). */
export function defaultHealthBenchFile(): string {
  return dataPath('healthbench/oss_eval_first100.jsonl');
}

interface HealthBenchRecord {
  prompt_id?: unknown;
  prompt?: unknown;
  rubrics?: unknown;
  ideal_completions_data?: { ideal_completion?: unknown } | null;
}

/** Reads up to `limit` items (records without an ideal completion are skipped). */
export async function loadHealthBenchItems(file: string = defaultHealthBenchFile(), options: { limit?: number } = {}): Promise<BenchItem[]> {
  const items: BenchItem[] = [];
  const limit = options.limit ?? Number.POSITIVE_INFINITY;
  for await (const { line, text } of readLines(file)) {
    if (items.length >= limit) break;
    const parsed = safeParseJson(text);
    if (!parsed.ok) throw new RubricateError('INPUT_INVALID', `not JSON: ${parsed.error}`, { file, line });
    const record = parsed.value as HealthBenchRecord;
    const response = record.ideal_completions_data?.ideal_completion;
    if (typeof response !== 'string' || response.length === 0) continue;
    if (typeof record.prompt_id !== 'string' || !Array.isArray(record.prompt) || !Array.isArray(record.rubrics)) {
      throw new RubricateError('INPUT_INVALID', 'expected prompt_id, prompt[] and rubrics[]', { file, line });
    }
    items.push({
      id: record.prompt_id,
      prompt: (record.prompt as Array<{ role: string; content: string }>).map((turn) => ({ role: String(turn.role), content: String(turn.content) })),
      response,
      criteria: (record.rubrics as Array<{ criterion: string; points: number }>).map((rubric) => ({ text: String(rubric.criterion), points: Number(rubric.points) })),
    });
  }
  return items;
}

/** The same items in the shape the promptfoo harness takes (criterion texts only). */
export function toPromptfooItems(items: readonly BenchItem[]): Array<{ id: string; response: string; criteria: string[] }> {
  return items.map((item) => ({ id: item.id, response: item.response, criteria: item.criteria.map((criterion) => criterion.text) }));
}

/** Total criteria, the number of judge calls a one-call-per-criterion grader makes. */
export function countCriteria(items: readonly { criteria: readonly unknown[] }[]): number {
  return items.reduce((total, item) => total + item.criteria.length, 0);
}
