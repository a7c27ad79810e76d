/**
 * JudgeBench's published judge outputs (`outputs/*.jsonl`): the dataset rows plus `judgments`,
 * one per game. The first game shows the responses as (A, B); the second, when present, shows
 * them as (B, A), so its `decision` is read with A and B exchanged. A judgment that failed is
 * null, and a judgment whose verdict could not be parsed has `decision: null`.
 */
import { RubricateError } from '../../errors.js';
import { parseLineJson, readLines } from '../../util/jsonl.js';
import type { PairLabel } from '../../rubric/schema.js';
import type { PairVerdict, PairwiseMetaRecord } from '../../scoring/pairwise-metrics.js';

import type { PublishedJudgeRun } from './types.js';
import { isRecord } from '../../util/is-record.js';

/** The groups JudgeBench's `run_judge.py` reports, matched as prefixes of `source`, in its order. */
export const judgeBenchCategories = ['mmlu-pro', 'livebench-reasoning', 'livebench-math', 'livecodebench'] as const;

/** JudgeBench's reporting group of a source (`mmlu-pro-law` → `mmlu-pro`); other sources stand alone. */
export function judgeBenchCategory(source: string): string {
  return judgeBenchCategories.find((prefix) => source.startsWith(prefix)) ?? source;
}

/** A JudgeBench decision string in the labelling of the game it was made in. */
function decisionToVerdict(decision: unknown): PairVerdict {
  if (decision === 'A>B') return 'A';
  if (decision === 'B>A') return 'B';
  if (decision === 'A=B') return 'tie';
  return 'invalid';
}

/** The swapped game's decision, mapped back to the original labelling. */
function swappedDecisionToVerdict(decision: unknown): PairVerdict {
  const verdict = decisionToVerdict(decision);
  return verdict === 'A' ? 'B' : verdict === 'B' ? 'A' : verdict;
}

export function judgeBenchLabelToGold(label: unknown): PairLabel | null {
  if (label === 'A>B') return 'A';
  if (label === 'B>A') return 'B';
  if (label === 'A=B') return 'tie';
  return null;
}

function decisionOf(judgment: unknown): unknown {
  return isRecord(judgment) ? judgment.decision : null;
}

function judgeModelOf(judgment: unknown): string | null {
  if (!isRecord(judgment) || !isRecord(judgment.judgment)) return null;
  const model = judgment.judgment.judge_model;
  return typeof model === 'string' ? model : null;
}

export async function readJudgeBenchOutputs(file: string): Promise<PublishedJudgeRun> {
  const records: PairwiseMetaRecord[] = [];
  const invalid: RubricateError[] = [];
  let judgeName: string | null = null;
  let judgeModel: string | null = null;
  for await (const { line, text, error: lineError } of readLines(file)) {
    const fail = (field: string, message: string, id?: string) =>
      invalid.push(new RubricateError('INPUT_INVALID', message, { file, line, field, ...(id ? { id } : {}) }));
    const parsed = parseLineJson(text, lineError);
    if (!parsed.ok) {
      fail('', parsed.error);
      continue;
    }
    const row = parsed.value;
    if (!isRecord(row)) {
      fail('', 'record must be an object');
      continue;
    }
    const id = typeof row.pair_id === 'string' || typeof row.pair_id === 'number' ? String(row.pair_id) : `line-${line}`;
    const gold = judgeBenchLabelToGold(row.label);
    if (gold === null) {
      fail('label', 'label must be "A>B" or "B>A"', id);
      continue;
    }
    if (typeof row.source !== 'string') {
      fail('source', 'source must be a string', id);
      continue;
    }
    const judgments = row.judgments;
    if (!Array.isArray(judgments) || judgments.length < 1 || judgments.length > 2) {
      fail('judgments', 'judgments must be an array of one or two games', id);
      continue;
    }
    judgeName ??= typeof row.judge_name === 'string' ? row.judge_name : null;
    judgeModel ??= judgeModelOf(judgments[0]) ?? judgeModelOf(judgments[1]);
    records.push({
      id,
      gold,
      original: decisionToVerdict(decisionOf(judgments[0])),
      ...(judgments.length === 2 ? { swapped: swappedDecisionToVerdict(decisionOf(judgments[1])) } : {}),
      source: row.source,
      category: judgeBenchCategory(row.source),
    });
  }
  const judge = judgeName === null && judgeModel === null ? null : [judgeName, judgeModel].filter((part) => part !== null).join(':');
  return { format: 'judgebench', file, judge, strategy: null, records, invalid };
}
