/**
 * Parity on the real benchmark files in the shared data folder: the reference's aggregation is
 * re-implemented here from its code (Python semantics spelled out), fed the same verdicts as
 * rubricate's scoring, and the two must agree exactly. Verdicts are synthetic but deterministic
 * (no judge is called); the rubrics, repeats and weights are the benchmarks' own.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { drb2Importer } from '../formats/drb2.js';
import { researchrubricsImporter } from '../formats/researchrubrics.js';
import type { Item } from '../rubric/schema.js';
import { sharedData } from '../testing/shared-data.js';
import { test } from '../testing/vitest-fixtures.js';
import { aggregate, getScoring } from './registry.js';
import type { ScoredItem } from './types.js';

/** A deterministic pseudo-verdict in {−1, 0, 1} (or {0, 0.5, 1}) for a position in a task. */
function pick<T>(options: readonly T[], ...parts: Array<string | number>): T {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  return options[digest[0] % options.length];
}

async function importAll(read: AsyncIterable<{ kind: string; item?: Item }>): Promise<Item[]> {
  const list: Item[] = [];
  for await (const record of read) if (record.kind === 'item' && record.item) list.push(record.item);
  return list;
}

const drb2Data = sharedData('deepresearch_bench_ii/tasks_and_rubrics.jsonl');
describe.skipIf(!drb2Data.available)('DeepResearch Bench II on the real 132 tasks', () => {
  test('matches the reference aggregation, repeated texts (task 45) counted once', async ({ tempDir }) => {
    const rows = readFileSync(drb2Data.path, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { id: string; idx: number; content: { rubric: Record<string, string[]> } });
    const dims = ['info_recall', 'analysis', 'presentation'] as const;
    const score = (task: string, position: number) => pick([1, 0, -1] as const, task, position);

    // The reference, step by step (run_evaluation.process_one_with_chunking, then
    // aggregate_scores.compute_dimension_averages and the per-task / per-model means):
    const referencePerTask = rows.map((row) => {
      const allItems: string[] = [];
      const dimensionOf = new Map<string, string>(); // dimension_map[item] = dim, later dims overwrite
      for (const dim of dims) for (const text of row.content.rubric[dim] ?? []) {
        allItems.push(text);
        dimensionOf.set(text, dim);
      }
      const scores: Record<string, Map<string, number>> = { info_recall: new Map(), analysis: new Map(), presentation: new Map() };
      allItems.forEach((text, position) => scores[dimensionOf.get(text)!].set(text, score(row.id, position))); // dict assignment: last wins
      let ones = 0;
      let minus = 0;
      let total = 0;
      const out: Record<string, number | null> = {};
      for (const [dim, key] of [['info_recall', 'inforecall'], ['analysis', 'analysis'], ['presentation', 'presentation']] as const) {
        const values = [...scores[dim].values()];
        const dimOnes = values.filter((value) => value === 1).length;
        out[key] = values.length > 0 ? dimOnes / values.length : null;
        ones += dimOnes;
        minus += values.filter((value) => value === -1).length;
        total += values.length;
      }
      out.total = total > 0 ? ones / total : null;
      out.blocked_rate = total > 0 ? minus / total : null;
      return out;
    });
    const meanOrNone = (values: Array<number | null>) => {
      const numbers = values.filter((value): value is number => value !== null);
      let sum = 0;
      for (const value of numbers) sum += value;
      return numbers.length > 0 ? sum / numbers.length : null;
    };
    const reference = Object.fromEntries(['inforecall', 'analysis', 'presentation', 'total', 'blocked_rate'].map((key) => [key, meanOrNone(referencePerTask.map((task) => task[key]))]));

    // rubricate: the drb2 importer, the same verdicts per position, the drb2 scoring.
    const imported = await importAll(withResponses(drb2Data.path, tempDir));
    expect(imported).toHaveLength(rows.length);
    const scored: ScoredItem[] = imported.map((entry) => ({
      id: entry.id,
      status: 'ok',
      metadata: entry.metadata,
      criteria: entry.rubric.criteria.map((criterion, position) => {
        const value = score(entry.id, position);
        return { id: criterion.id, text: criterion.text, points: criterion.points, tags: criterion.tags, status: 'ok' as const, met: value === 1, label: value === -1 ? 'blocked' : value === 1 ? 'satisfied' : 'not satisfied' };
      }),
    }));
    const task45 = imported.find((entry) => entry.id === 'task45+')!;
    const texts = task45.rubric.criteria.map((criterion) => criterion.text);
    expect(texts.length - new Set(texts).size).toBe(6);
    const metrics = aggregate(getScoring('drb2'), scored);
    const ours = metrics.extra?.drb2 as Record<string, number>;
    for (const key of Object.keys(reference)) expect(ours[key], key).toBe(reference[key]);
    expect(metrics.extra?.tasks).toBe(132);
  });
});

/** Feeds the importer a response per task (the real file has none), from a responses file written in `directory`. */
async function* withResponses(file: string, directory: string): AsyncGenerator<{ kind: string; item?: Item }> {
  const ids = readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => (JSON.parse(line) as { id: string }).id);
  const responses = join(directory, 'responses.jsonl');
  writeFileSync(responses, ids.map((id) => JSON.stringify({ id, response: 'A report.' })).join('\n'));
  yield* drb2Importer.read(file, { responses });
}

const researchData = sharedData('researchrubrics/researchrubrics-sample-100.jsonl');
describe.skipIf(!researchData.available)('ResearchRubrics compliance on the real 100-row sample', () => {
  test('matches calculate_final_score.calculate_weighted_score and its average, ternary and binary', async ({ tempDir }) => {
    const rows = readFileSync(researchData.path, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as { sample_id: string; rubrics: Array<{ weight: number }> });
    const labels = ['Satisfied', 'Partially Satisfied', 'Not Satisfied'] as const;
    const verdict = (sample: string, position: number) => pick(labels, sample, position);
    // Reference: numerator = Σ weight × {1, 0.5, 0}[label]; denominator = Σ positive weights; 0 if none; sum / len.
    const reference = (binary: boolean) => {
      const scores = rows.map((row) => {
        let numerator = 0;
        let denominator = 0;
        row.rubrics.forEach((rubric, position) => {
          let label: string = verdict(row.sample_id, position);
          if (binary && label === 'Partially Satisfied') label = 'Not Satisfied';
          numerator += rubric.weight * ({ Satisfied: 1, 'Partially Satisfied': 0.5, 'Not Satisfied': 0 } as Record<string, number>)[label];
        });
        for (const rubric of row.rubrics) if (rubric.weight > 0) denominator += rubric.weight;
        return denominator > 0 ? numerator / denominator : 0;
      });
      let sum = 0;
      for (const value of scores) sum += value;
      return sum / scores.length;
    };
    const responses = join(tempDir, 'responses.jsonl');
    writeFileSync(responses, rows.map((row) => JSON.stringify({ sample_id: row.sample_id, response: 'A report.' })).join('\n'));
    const imported = await importAll(researchrubricsImporter.read(researchData.path, { responses }));
    expect(imported).toHaveLength(100);
    const scored: ScoredItem[] = imported.map((entry) => ({
      id: entry.id,
      status: 'ok',
      criteria: entry.rubric.criteria.map((criterion, position) => {
        const label = verdict(String(entry.metadata?.sample_id), position);
        const value = label === 'Satisfied' ? 1 : label === 'Partially Satisfied' ? 0.5 : 0;
        return { id: criterion.id, points: criterion.points, tags: criterion.tags, status: 'ok' as const, met: value === 1, value, label };
      }),
    }));
    expect(aggregate(getScoring('compliance'), scored).overall!.score).toBe(reference(false));
    expect(aggregate(getScoring('compliance_binary'), scored).overall!.score).toBe(reference(true));
  });
});
