/**
 * Augmentation pairs for reward-model robustness training, from `rubricate probe --variants-out`:
 * each perturbation beside its original, with how a trustworthy judge relates the two. Deleting
 * the sentence that meets a criterion must lower the response (`original_better`), an injected
 * instruction must earn nothing (`original_better`), and padding, formatting, confident tone or
 * flattery must change nothing (`equal`). As TRL or OpenAI preference rows only the ordered pairs
 * exist; `table` keeps the equal ones too, and whether this judge got each pair right.
 */
import { RubricateError } from '../errors.js';
import { isRecord } from '../util/is-record.js';
import { parseLineJson, readLines } from '../util/jsonl.js';
import type { LeftOut } from './candidates.js';
import type { ExportedRow } from './preference.js';

export const augmentFormats = ['table', 'trl', 'openai'] as const;
export type AugmentFormat = (typeof augmentFormats)[number];

interface Side {
  response: string;
  score: number | null;
  verdicts: Record<string, boolean>;
}

function side(value: unknown): Side | undefined {
  if (!isRecord(value) || typeof value.response !== 'string' || !isRecord(value.verdicts)) return undefined;
  return { response: value.response, score: typeof value.score === 'number' ? value.score : null, verdicts: value.verdicts as Record<string, boolean> };
}

export async function augmentRows(file: string, format: AugmentFormat, leftOut: LeftOut, onInvalid: (error: RubricateError) => void): Promise<ExportedRow[]> {
  const rows: ExportedRow[] = [];
  for await (const { line, text, error: lineError } of readLines(file)) {
    const parsed = parseLineJson(text, lineError);
    const value = parsed.ok ? parsed.value : undefined;
    const original = isRecord(value) ? side(value.original) : undefined;
    const perturbed = isRecord(value) ? side(value.perturbed) : undefined;
    if (!isRecord(value) || !original || !perturbed || typeof value.kind !== 'string' || !Array.isArray(value.prompt)) {
      onInvalid(new RubricateError('INPUT_INVALID', parsed.ok ? 'not a `probe --variants-out` line (item_id, prompt, kind, original, perturbed)' : parsed.error, { file, line }));
      leftOut.add('invalid variants line');
      continue;
    }
    const relation = value.kind === 'spurious' ? 'equal' : 'original_better';
    const target = typeof value.target_criterion === 'string' ? value.target_criterion : undefined;
    // Did this judge relate the pair as it should? (deletion: the targeted criterion; otherwise the score).
    const judgeAgreed =
      target !== undefined
        ? original.verdicts[target] === true && perturbed.verdicts[target] === false
        : original.score !== null && perturbed.score !== null && (relation === 'equal' ? perturbed.score === original.score : perturbed.score <= original.score);
    const rule = { kind: 'augment', probe: value.probe, variant: value.variant, relation, ...(target ? { criterion_id: target } : {}), item_id: value.item_id, source: `${file}:${line}` };
    if (format === 'table') {
      rows.push({ row: { item_id: value.item_id, prompt: value.prompt, response_a: original.response, response_b: perturbed.response, relation, perturbation: `${String(value.probe)}:${String(value.variant)}`, ...(target ? { criterion_id: target } : {}), judge_agreed: judgeAgreed }, rule });
      continue;
    }
    if (relation === 'equal') {
      leftOut.add('spurious perturbation: an equal pair has no preference form (use --format table)');
      continue;
    }
    const chosen = [{ role: 'assistant', content: original.response }];
    const rejected = [{ role: 'assistant', content: perturbed.response }];
    rows.push({ row: format === 'trl' ? { prompt: value.prompt, chosen, rejected } : { input: { messages: value.prompt }, preferred_output: chosen, non_preferred_output: rejected }, rule });
  }
  return rows;
}
