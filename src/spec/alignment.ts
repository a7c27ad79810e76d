/**
 * An alignment: what `rubricate align` learnt from human labels about one judge, applied with
 * `--alignment FILE` (the run spec's `plan.alignment`). It holds only what changes a verdict:
 *
 * - `examples`: labelled responses shown to the judge beside a criterion (its own, else those of
 *   its tags), balanced between met and not met, drawn from the training split only;
 * - `rewordings`: criterion texts the judge is shown instead of the rubric's, by criterion id;
 * - `calibrator`: for probability verdicts, a monotone map from the judge's P(met) to the
 *   labels' rate, and the decision threshold chosen on the training split.
 *
 * `hash` is the sha256 of the canonical JSON of those three: it goes into every cache key and
 * every result's judge provenance. The file `align` writes adds `fit` (split, figures), which is
 * not part of the alignment and is dropped when it is read.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import { hashValue } from '../util/hash.js';
import { parseInputJson } from '../util/json.js';

export const alignmentFormat = 'rubricate-alignment/v1';

const unit = z.number().min(0).max(1);

export const alignmentExampleSchema = z.strictObject({
  /** The reviewers' verdict: true = the response meets the criterion. */
  label: z.boolean(),
  /** The criterion as the reviewers judged it. */
  criterion: z.string().min(1),
  /** The last user turn of the conversation (shortened when long). */
  prompt: z.string(),
  /** The response (shortened when long). */
  response: z.string(),
  /** A reviewer's note, when the label carried one. */
  note: z.string().optional(),
  /** Digest of the item the example comes from: an item is never shown as its own example. */
  source: z.string().min(1),
});

const examplesByKey = z.record(z.string(), z.array(alignmentExampleSchema));

export const alignmentContentSchema = z.strictObject({
  /** Examples by criterion id, and by tag for criteria without examples of their own. */
  examples: z.strictObject({ criteria: examplesByKey, tags: examplesByKey }),
  rewordings: z.record(z.string(), z.strictObject({ text: z.string().trim().min(1), original: z.string() })),
  /** Probability verdicts only: P(met) → calibrated P(met) by linear interpolation between points (sorted by P), and the threshold on the calibrated value. */
  calibrator: z.strictObject({ kind: z.literal('isotonic'), points: z.array(z.tuple([unit, unit])).min(1), threshold: unit }).nullable(),
});

export const alignmentSchema = alignmentContentSchema.extend({
  format: z.literal(alignmentFormat),
  /** sha256 of the canonical JSON of examples, rewordings and calibrator. */
  hash: z.string().regex(/^[0-9a-f]{64}$/),
});

export type AlignmentExample = z.infer<typeof alignmentExampleSchema>;
export type AlignmentContent = z.infer<typeof alignmentContentSchema>;
export type Alignment = z.infer<typeof alignmentSchema>;

export function alignmentHash(content: AlignmentContent): string {
  return hashValue({ examples: content.examples, rewordings: content.rewordings, calibrator: content.calibrator });
}

/** An alignment from its content, with its format and hash. */
export function sealAlignment(content: AlignmentContent): Alignment {
  return { format: alignmentFormat, hash: alignmentHash(content), examples: content.examples, rewordings: content.rewordings, calibrator: content.calibrator };
}

/** The verdict-changing part of an alignment value (a file's `fit` left out), checked against its own hash. */
export function parseAlignment(value: unknown, source: string): Alignment {
  const record = value !== null && typeof value === 'object' && !Array.isArray(value) ? { ...(value as Record<string, unknown>) } : value;
  if (record !== null && typeof record === 'object') delete (record as Record<string, unknown>).fit;
  const parsed = alignmentSchema.safeParse(record);
  if (!parsed.success) {
    throw zodIssueError(parsed.error, { code: 'CONFIG_INVALID', prefix: `${source}: not an alignment written by rubricate align: `, pathInMessage: true, details: { file: source } });
  }
  const alignment = parsed.data;
  if (alignmentHash(alignment) !== alignment.hash) {
    throw new RubricateError('CONFIG_INVALID', `${source}: its hash does not match its examples, rewordings and calibrator (the file was edited): run rubricate align again`, { file: source, field: 'hash' });
  }
  return alignment;
}

/** `--alignment FILE`: read and checked when the flags are parsed, so the run spec carries the alignment itself. */
export function readAlignmentFile(file: string): Alignment {
  return parseAlignment(readJson(file), file);
}

/** The ids of the items an alignment file held out for testing (`fit.split.test`): the only ones its judge may be scored on. */
export function readHeldOutItems(file: string): string[] {
  const value = readJson(file) as { fit?: { split?: { test?: unknown } } } | null;
  const test = value?.fit?.split?.test;
  if (!Array.isArray(test) || !test.every((id) => typeof id === 'string')) {
    throw new RubricateError('CONFIG_INVALID', `${file}: no held-out items (fit.split.test): not an alignment file written by rubricate align`, { file, field: 'fit.split.test' });
  }
  return test as string[];
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new RubricateError('INPUT_UNREADABLE', `${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message}`, { file, field: 'alignment' });
  }
  const parsed = parseInputJson(text);
  if (!parsed.ok) throw new RubricateError('CONFIG_INVALID', `${file}: not JSON: ${parsed.error}`, { file, field: 'alignment' });
  return parsed.value;
}
