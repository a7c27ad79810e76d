import { describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import type { PairwiseItem } from '../rubric/schema.js';
import { runPairwiseMeta, type JudgePairs, type PairJudgment } from './pairwise-run.js';

function pair(id: string, label: PairwiseItem['label'], source = 'set-1'): PairwiseItem {
  return { id, prompt: [{ role: 'user', content: `question ${id}` }], responseA: `good ${id}`, responseB: `bad ${id}`, ...(label ? { label } : {}), source };
}

async function* records(entries: Array<PairwiseItem | RubricateError>): AsyncGenerator<PairwiseImportRecord> {
  for (const [index, entry] of entries.entries()) {
    if (entry instanceof RubricateError) yield { kind: 'invalid', error: entry, line: index + 1 };
    else yield { kind: 'pair', pair: entry, line: index + 1 };
  }
}

/** A stand-in judge that always prefers whichever response it is shown first. */
const firstShownWins: JudgePairs = async (pairs) => pairs.map((entry): PairJudgment => ({ id: entry.id, original: 'A', swapped: 'B' }));

/** A stand-in judge that finds the response whose text starts with "good", in both orders. */
const readsContent: JudgePairs = async function* (pairs) {
  for (const entry of [...pairs].reverse()) yield { id: entry.id, original: entry.responseA.startsWith('good') ? 'A' : 'B', swapped: entry.responseA.startsWith('good') ? 'A' : 'B' };
};

describe('runPairwiseMeta', () => {
  it('scores a position-biased judge: right only when gold is A, and never consistent across orders', async () => {
    const pairs = [pair('p1', 'A'), pair('p2', 'B'), pair('p3', 'A'), pair('p4', 'B', 'set-2')];
    const report = await runPairwiseMeta('toy', 'toy.json', records(pairs), firstShownWins, { resamples: 100 });
    expect(report.overall.accuracy.original).toBe(0.5);
    expect(report.overall.accuracy.swapped).toBe(0.5);
    expect(report.overall.positionalAgreement).toBe(0);
    expect(report.overall.judgeBench.tie).toBe(4);
    expect(Object.keys(report.bySource)).toEqual(['set-1', 'set-2']);
    expect(report.run).toMatchObject({ pairs: 4, judged: 4, unlabelled: 0, invalidRows: 0, missingJudgments: 0, invalidVerdicts: 0 });
    expect(report.verdicts[1]).toEqual({ id: 'p2', gold: 'B', original: 'A', swapped: 'B', source: 'set-1' });
  });

  it('accepts streamed judgments in any order and scores a content-reading judge perfectly', async () => {
    const pairs = [pair('p1', 'A'), pair('p2', 'A'), pair('p3', 'A')];
    const report = await runPairwiseMeta('toy', 'toy.json', records(pairs), readsContent, { resamples: 0 });
    expect(report.overall.accuracy).toMatchObject({ original: 1, swapped: 1, both: 1 });
    expect(report.overall.positionalAgreement).toBe(1);
  });

  it('does not send unlabelled pairs, counts unreadable rows, and treats missing judgments as invalid', async () => {
    const sent: string[] = [];
    const partial: JudgePairs = async (pairs) => {
      sent.push(...pairs.map((entry) => entry.id));
      return [{ id: 'p1', original: 'A', swapped: 'A' }, { id: 'p3', original: 'invalid', swapped: 'A', errors: [{ code: 'JUDGE_UNPARSEABLE', message: 'no verdict' }] }];
    };
    const heard: RubricateError[] = [];
    const broken = new RubricateError('INPUT_INVALID', 'bad row', { file: 'toy.json', line: 2, field: 'label' });
    const report = await runPairwiseMeta('toy', 'toy.json', records([pair('p1', 'A'), broken, pair('p2', undefined), pair('p3', 'B'), pair('p4', 'B')]), partial, {
      resamples: 0,
      onInvalid: (error) => heard.push(error),
    });
    expect(sent).toEqual(['p1', 'p3', 'p4']);
    expect(heard).toEqual([broken]);
    expect(report.run).toMatchObject({ pairs: 4, unlabelled: 1, invalidRows: 1, judged: 3, missingJudgments: 1, invalidVerdicts: 2 });
    expect(report.run.problems.map((problem) => problem.code)).toEqual(['INPUT_INVALID', 'JUDGE_UNPARSEABLE']);
    expect(report.overall.verdicts.original).toEqual({ A: 1, B: 0, tie: 0, invalid: 2 });
  });

  it('rejects judgments it cannot place and data it cannot judge', async () => {
    const stranger: JudgePairs = async () => [{ id: 'who', original: 'A', swapped: 'A' }];
    await expect(runPairwiseMeta('toy', 'toy.json', records([pair('p1', 'A')]), stranger)).rejects.toThrow(/unknown pair "who"/);
    const nonsense: JudgePairs = async () => [{ id: 'p1', original: 'C' as never, swapped: 'A' }];
    await expect(runPairwiseMeta('toy', 'toy.json', records([pair('p1', 'A')]), nonsense)).rejects.toThrow(/"C" as the original verdict/);
    await expect(runPairwiseMeta('toy', 'toy.json', records([pair('p1', undefined)]), firstShownWins)).rejects.toMatchObject({ code: 'INPUT_INVALID', message: 'no labelled pairs to judge' });
    await expect(runPairwiseMeta('toy', 'toy.json', records([pair('p1', 'A'), pair('p1', 'B')]), firstShownWins)).rejects.toThrow(/appears twice/);
  });
});
