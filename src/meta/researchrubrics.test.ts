import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { agreementBySource, failureBreakdownBySource, loadTernaryLabels, researchRubricsTasks, sklearnMacroF1, type AgreementTask } from './researchrubrics.js';

const S = 'Satisfied' as const;
const P = 'Partially Satisfied' as const;
const N = 'Not Satisfied' as const;

// Two tasks of one system. Task 1: human [S, S, N], judge [S, N, N]; task 2: human [S, P], judge [S, P].
const tasks: AgreementTask[] = [
  {
    id: 't1',
    source: 'gemini',
    criteria: [
      { id: 'a', category: 'Explicit Criteria', human: S, judge: S },
      { id: 'b', category: 'Implicit Criteria', human: S, judge: N },
      { id: 'c', category: 'Communication Quality', human: N, judge: N },
    ],
  },
  {
    id: 't2',
    source: 'gemini',
    criteria: [
      { id: 'a', category: 'Explicit Criteria', human: S, judge: S },
      { id: 'b', category: 'Explicit Criteria', human: P, judge: P },
    ],
  },
];

describe('ResearchRubrics judge agreement (calculate_F1_score.py)', () => {
  it('scikit-learn macro F1 with explicit labels: a class absent from both sides scores 0 and still counts', () => {
    // labels [S, P, N], truth [S, S], prediction [S, S]: S → 1, P → 0, N → 0 → 1/3.
    expect(sklearnMacroF1([S, S], [S, S], [S, P, N])).toBeCloseTo(1 / 3, 15);
  });

  it('averages the macro F1 of each task (3-class and binary), not the pooled F1', () => {
    // Task 1, 3-class: S tp 1, fn 1 → 2/3; P absent → 0; N tp 1, fp 1 → 2/3 → (2/3 + 0 + 2/3) / 3 = 4/9.
    // Task 2, 3-class: S 1, P 1, N absent 0 → 2/3. Mean = (4/9 + 2/3) / 2 = 5/9.
    // Binary (P → N): task 1 S 2/3, N 2/3 → 2/3; task 2 S 1, N 1 → 1. Mean = 5/6.
    // Pooled over the five criteria instead: 3-class S 4/5, P 1, N 2/3 → 37/45; binary S 4/5, N 4/5 → 0.8.
    const [report] = Object.values(agreementBySource(tasks));
    expect(report.tasks).toBe(2);
    expect(report.macroF1Ternary).toBeCloseTo(5 / 9, 15);
    expect(report.macroF1Binary).toBeCloseTo(5 / 6, 15);
    expect(report.pooledMacroF1Ternary).toBeCloseTo(37 / 45, 15);
    expect(report.pooledMacroF1Binary).toBeCloseTo(0.8, 15);
  });
});

describe('ResearchRubrics failure breakdown (calculate_failure_breakdown.py)', () => {
  it('per task each category\u2019s share of the Not Satisfied verdicts, averaged over tasks where it failed', () => {
    // Judge, 3-class: only task 1 fails, at Implicit and Communication → 1/2 each, one task each;
    // aggregate 1 of 2 failures each.
    const ternary = failureBreakdownBySource(tasks, { labels: 'judge' }).gemini;
    expect(ternary).toEqual({
      categories: {
        'Implicit Criteria': { averageRatio: 0.5, tasks: 1, aggregateRatio: 0.5, count: 1 },
        'Communication Quality': { averageRatio: 0.5, tasks: 1, aggregateRatio: 0.5, count: 1 },
      },
      tasksWithFailures: 1,
      totalTasks: 2,
      totalFailures: 2,
    });
    // Binary: task 2's Partially becomes a failure (Explicit, ratio 1 in its task); aggregate 1/3 each.
    const binary = failureBreakdownBySource(tasks, { labels: 'judge', binary: true }).gemini;
    expect(binary.categories['Explicit Criteria']).toEqual({ averageRatio: 1, tasks: 1, aggregateRatio: 1 / 3, count: 1 });
    expect([binary.tasksWithFailures, binary.totalFailures]).toEqual([2, 3]);
  });

  test('joins a results file with a ternary labels file by item and criterion id', async ({ tempDir }) => {
    const results = join(tempDir, 'results.jsonl');
    const labels = join(tempDir, 'labels.jsonl');
    const criterion = (id: string, label: string) => ({ id, text: id, points: 1, tags: ['axis:Explicit Criteria'], kind: 'principle', source: 'judge', status: 'ok', met: label === S, value: label === S ? 1 : label === P ? 0.5 : 0, label });
    writeFileSync(results, `${JSON.stringify({ id: 'r1', status: 'ok', score: 0.5, criteria: [criterion('a', S), criterion('b', P)], metadata: { model: 'gemini' }, rubricate_version: '0' })}\n`);
    writeFileSync(labels, `${JSON.stringify({ id: 'r1', labels: { a: 'satisfied', b: 'Not  Satisfied' } })}\n${JSON.stringify({ id: 'r1', criterion_id: 'c', label: 'maybe' })}\n`);
    const problems: string[] = [];
    const loaded = await loadTernaryLabels(labels, (error) => problems.push(`${error.details.line}:${error.details.field}`));
    expect(problems).toEqual(['2:label']);
    const joined = await researchRubricsTasks(results, loaded, { sourceField: 'metadata.model' });
    expect(joined).toEqual([
      {
        id: 'r1',
        source: 'gemini',
        criteria: [
          { id: 'a', category: 'Explicit Criteria', judge: S, human: S },
          { id: 'b', category: 'Explicit Criteria', judge: P, human: N },
        ],
      },
    ]);
  });
});
