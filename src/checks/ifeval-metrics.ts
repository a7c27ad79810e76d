/**
 * IFEval's accuracy metrics, as its `print_report` defines them:
 * prompt-level = share of prompts whose instructions were all followed;
 * instruction-level = share of all instructions followed, pooled over prompts;
 * plus the same instruction-level share per instruction id and per group (the part
 * of the id before the colon, e.g. `detectable_format`).
 */
import { RubricateError } from '../errors.js';

export interface IfevalPromptResult {
  /** IFEval instruction ids in prompt order (a `#2` criterion suffix is ignored). */
  instructionIds: readonly string[];
  /** Whether each instruction was followed, aligned with `instructionIds`. */
  followed: readonly boolean[];
}

export interface AccuracyCount {
  correct: number;
  total: number;
  accuracy: number;
}

export interface IfevalMetrics {
  prompt_level_accuracy: number;
  instruction_level_accuracy: number;
  prompts: AccuracyCount;
  instructions: AccuracyCount;
  /** By full instruction id, e.g. `keywords:existence`; keys sorted. */
  per_instruction: Record<string, AccuracyCount>;
  /** By group, e.g. `keywords`; keys sorted. */
  per_group: Record<string, AccuracyCount>;
}

/** `keywords:existence#2` → `keywords:existence`. */
export function instructionIdOf(criterionId: string): string {
  const hash = criterionId.lastIndexOf('#');
  return hash > 0 && /^\d+$/.test(criterionId.slice(hash + 1)) ? criterionId.slice(0, hash) : criterionId;
}

export function instructionGroupOf(instructionId: string): string {
  const colon = instructionId.indexOf(':');
  return colon < 0 ? instructionId : instructionId.slice(0, colon);
}

function tally(counts: Map<string, { correct: number; total: number }>, key: string, followed: boolean): void {
  const entry = counts.get(key) ?? { correct: 0, total: 0 };
  entry.total += 1;
  if (followed) entry.correct += 1;
  counts.set(key, entry);
}

function toRecord(counts: Map<string, { correct: number; total: number }>): Record<string, AccuracyCount> {
  const record: Record<string, AccuracyCount> = {};
  for (const key of [...counts.keys()].sort()) {
    const { correct, total } = counts.get(key)!;
    record[key] = { correct, total, accuracy: correct / total };
  }
  return record;
}

/** Throws INPUT_INVALID for no prompts, a prompt without instructions, or misaligned lists. */
export function ifevalMetrics(results: readonly IfevalPromptResult[]): IfevalMetrics {
  if (results.length === 0) throw new RubricateError('INPUT_INVALID', 'IFEval metrics need at least one prompt');
  let promptsCorrect = 0;
  let instructionsCorrect = 0;
  let instructionsTotal = 0;
  const perInstruction = new Map<string, { correct: number; total: number }>();
  const perGroup = new Map<string, { correct: number; total: number }>();
  results.forEach((result, index) => {
    if (result.instructionIds.length !== result.followed.length) {
      throw new RubricateError('INPUT_INVALID', 'instructionIds and followed differ in length', { field: `results[${index}]` });
    }
    if (result.followed.length === 0) {
      throw new RubricateError('INPUT_INVALID', 'a prompt has no instructions', { field: `results[${index}]` });
    }
    if (result.followed.every(Boolean)) promptsCorrect += 1;
    result.followed.forEach((followed, position) => {
      const id = instructionIdOf(result.instructionIds[position]);
      instructionsTotal += 1;
      if (followed) instructionsCorrect += 1;
      tally(perInstruction, id, followed);
      tally(perGroup, instructionGroupOf(id), followed);
    });
  });
  const prompts = { correct: promptsCorrect, total: results.length, accuracy: promptsCorrect / results.length };
  const instructions = { correct: instructionsCorrect, total: instructionsTotal, accuracy: instructionsCorrect / instructionsTotal };
  return {
    prompt_level_accuracy: prompts.accuracy,
    instruction_level_accuracy: instructions.accuracy,
    prompts,
    instructions,
    per_instruction: toRecord(perInstruction),
    per_group: toRecord(perGroup),
  };
}
