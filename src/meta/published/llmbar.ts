/**
 * LLMBar's published judge outputs: `evaluators/<judge>/<strategy>/result.json` holds the
 * dataset rows, each with `results`, whose last entry has the judge's verdict for
 * `swap = False` and `swap = True`. LLMBar already maps the swapped verdict back to the
 * original numbering (`winner` "1" = output_1), and scores only the last entry (for
 * swap-and-synthesize strategies, the synthesis step). `statistics.json` next to it holds
 * LLMBar's own figures.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { RubricateError } from '../../errors.js';
import { safeParseJson } from '../../util/json.js';
import type { PairLabel } from '../../rubric/schema.js';
import type { PairVerdict, PairwiseMetaRecord, PairwiseMetrics } from '../../scoring/pairwise-metrics.js';
import { llmbarSubsetFromPath, readJsonArrayFile } from '../../formats/source-files.js';
import { pythonFloatRepr } from '../../statistics/reference-math.js';
import type { PublishedJudgeRun } from './types.js';
import { isRecord } from '../../util/is-record.js';

/** LLMBar's `winner`: "1", "2", or null when its parser found no verdict. */
export function llmbarWinnerToVerdict(winner: unknown): PairVerdict {
  if (winner === '1' || winner === 1) return 'A';
  if (winner === '2' || winner === 2) return 'B';
  return 'invalid';
}

export function llmbarLabelToGold(label: unknown): PairLabel | null {
  if (label === 1 || label === '1') return 'A';
  if (label === 2 || label === '2') return 'B';
  return null;
}

/** Judge and strategy from `…/evaluators/<judge>/<strategy>/result.json`. */
function judgeAndStrategy(file: string): { judge: string | null; strategy: string | null } {
  const segments = path.resolve(file).split(path.sep);
  const evaluatorsAt = segments.lastIndexOf('evaluators');
  if (evaluatorsAt < 0 || evaluatorsAt + 3 !== segments.length - 1) return { judge: null, strategy: null };
  return { judge: segments[evaluatorsAt + 1], strategy: segments[evaluatorsAt + 2] };
}

export async function readLlmbarResults(file: string): Promise<PublishedJudgeRun> {
  const rows = await readJsonArrayFile(file);
  const subset = llmbarSubsetFromPath(file);
  const records: PairwiseMetaRecord[] = [];
  const invalid: RubricateError[] = [];
  rows.forEach((row, index) => {
    const line = index + 1;
    const fail = (field: string, message: string) => invalid.push(new RubricateError('INPUT_INVALID', message, { file, line, field }));
    if (!isRecord(row)) return fail('', 'record must be an object');
    const gold = llmbarLabelToGold(row.label);
    if (gold === null) return fail('label', 'label must be 1 or 2');
    const results = row.results;
    if (!Array.isArray(results) || results.length === 0) return fail('results', 'results must be a non-empty array');
    const final = results[results.length - 1];
    if (!isRecord(final) || !isRecord(final['swap = False'])) {
      return fail(`results[${results.length - 1}]`, 'last result must hold the "swap = False" verdict');
    }
    const swappedEntry = final['swap = True'];
    records.push({
      id: `${subset}/${line}`,
      gold,
      original: llmbarWinnerToVerdict(final['swap = False'].winner),
      ...(isRecord(swappedEntry) ? { swapped: llmbarWinnerToVerdict(swappedEntry.winner) } : {}),
      source: subset,
    });
  });
  return { format: 'llmbar', file, ...judgeAndStrategy(file), records, invalid };
}

export interface LlmbarCount {
  count: number;
  total: number;
  percent: number;
}

/** The figures of an LLMBar `statistics.json`; κ fields are null where Python wrote NaN, undefined when absent. */
export interface LlmbarStatistics {
  correctFalse: LlmbarCount;
  correctTrue: LlmbarCount;
  correctBoth?: LlmbarCount;
  correctAverage: number;
  equal: LlmbarCount;
  kappaFalse?: number | null;
  kappaTrue?: number | null;
  kappaAverage?: number | null;
  kappaAgreement?: number | null;
  raw: Record<string, unknown>;
}

const countPattern = /^(\d+) \/ (\d+) = (.+)%$/;

function parseCount(file: string, raw: Record<string, unknown>, field: string): LlmbarCount {
  const value = raw[field];
  const match = typeof value === 'string' ? countPattern.exec(value) : null;
  if (!match) throw new RubricateError('INPUT_INVALID', `expected "<count> / <total> = <percent>%"`, { file, field });
  return { count: Number(match[1]), total: Number(match[2]), percent: parsePythonFloat(match[3]) };
}

function parsePythonFloat(text: string): number {
  if (text === 'nan') return Number.NaN;
  if (text === 'inf') return Number.POSITIVE_INFINITY;
  if (text === '-inf') return Number.NEGATIVE_INFINITY;
  return Number(text);
}

function optionalKappa(file: string, raw: Record<string, unknown>, field: string): number | null | undefined {
  if (!(field in raw)) return undefined;
  const value = raw[field];
  if (value === null) return null;
  if (typeof value !== 'number') throw new RubricateError('INPUT_INVALID', 'κ must be a number', { file, field });
  return value;
}

/** Reads an LLMBar `statistics.json` (Python's json module writes NaN for an undefined κ). */
export async function readLlmbarStatistics(file: string): Promise<LlmbarStatistics> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    throw new RubricateError('INPUT_INVALID', 'file not found or unreadable', { file }, { cause: error });
  }
  // Python emits bare NaN / Infinity tokens, which JSON does not allow; the file holds only
  // short strings and numbers, so replacing the tokens after a colon is safe.
  const normalised = text.replace(/:\s*(-?Infinity|NaN)\b/g, ': null');
  const parsed = safeParseJson(normalised);
  if (!parsed.ok || !isRecord(parsed.value)) throw new RubricateError('INPUT_INVALID', 'not a JSON object', { file });
  const raw = parsed.value;
  const average = typeof raw.correct_average === 'string' ? /^(.+)%$/.exec(raw.correct_average) : null;
  if (!average) throw new RubricateError('INPUT_INVALID', 'expected "<percent>%"', { file, field: 'correct_average' });
  return {
    correctFalse: parseCount(file, raw, 'correct_False'),
    correctTrue: parseCount(file, raw, 'correct_True'),
    ...('correct_both' in raw ? { correctBoth: parseCount(file, raw, 'correct_both') } : {}),
    correctAverage: parsePythonFloat(average[1]),
    equal: parseCount(file, raw, 'equal'),
    kappaFalse: optionalKappa(file, raw, 'kappa_False'),
    kappaTrue: optionalKappa(file, raw, 'kappa_True'),
    kappaAverage: optionalKappa(file, raw, 'kappa_average'),
    kappaAgreement: optionalKappa(file, raw, 'kappa_agreement'),
    raw,
  };
}

/**
 * The percentage strings LLMBar writes, formatted as its Python code does
 * (`"{} / {} = {}%"` with the float's repr), from our recomputed counts.
 */
export function llmbarStatisticStrings(metrics: PairwiseMetrics): {
  correct_False: string;
  correct_True: string;
  correct_average: string;
  correct_both: string;
  equal: string;
} {
  const total = metrics.pairs;
  const { correctOriginal, correctSwapped, correctBoth, equal } = metrics.counts;
  const fraction = (count: number) => `${count} / ${total} = ${pythonFloatRepr((count / total) * 100)}%`;
  return {
    correct_False: fraction(correctOriginal),
    correct_True: fraction(correctSwapped),
    correct_average: `${pythonFloatRepr(((correctOriginal + correctSwapped) / 2 / total) * 100)}%`,
    correct_both: fraction(correctBoth),
    equal: fraction(equal),
  };
}
