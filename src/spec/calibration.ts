/**
 * A score calibration: what `rubricate calibrate --format results` learnt from labelled results
 * about how a judge's per-criterion verdicts map to the overall score people gave, applied with
 * `grade --calibration FILE` (the run spec's `scoring.calibration`). A ridge model: the overall
 * score is `intercept + Σ coefficient · feature`, one feature per named criterion, the verdict's
 * P(met) where it has one, else its value (1 met, 0 not met, the scale's value for ordinal ones),
 * clipped to `range` when one is given.
 *
 * A result that lacks a usable verdict for one of the criteria gets no calibrated score (null,
 * the missing criteria named), never one computed with a default in its place. `hash` is the
 * sha256 of the canonical JSON of the model: it goes into every result that applies it. The file
 * `calibrate` writes adds `fit` (split, cross-validation, figures), dropped when it is read.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { RubricateError } from '../errors.js';
import { zodIssueError } from '../util/zod-issue.js';
import { hashValue } from '../util/hash.js';
import { parseInputJson } from '../util/json.js';

export const calibrationFormat = 'rubricate-calibration/v1';

const finite = z.number().refine(Number.isFinite, 'must be a finite number');

export const calibrationContentSchema = z.strictObject({
  kind: z.literal('ridge'),
  /** What it predicts, in the labels' own units (e.g. "overall human score"). */
  target: z.string().min(1),
  /** The criteria whose verdicts are the features, in the coefficients' order. */
  criteria: z.array(z.string().min(1)).min(1),
  intercept: finite,
  coefficients: z.array(finite).min(1),
  lambda: z.number().min(0),
  /** Predictions are clipped to this range (the labels' scale); null: not clipped. */
  range: z.tuple([finite, finite]).nullable(),
});

export const calibrationSchema = calibrationContentSchema.extend({
  format: z.literal(calibrationFormat),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
});

export type CalibrationContent = z.infer<typeof calibrationContentSchema>;
export type Calibration = z.infer<typeof calibrationSchema>;

function contentOf(calibration: CalibrationContent): CalibrationContent {
  const { kind, target, criteria, intercept, coefficients, lambda, range } = calibration;
  return { kind, target, criteria, intercept, coefficients, lambda, range };
}

/** A calibration from its content, with its format and hash. */
export function sealCalibration(content: CalibrationContent): Calibration {
  const model = contentOf(content);
  return { format: calibrationFormat, hash: hashValue(model), ...model };
}

/** `--calibration FILE`: read and checked when the flags are parsed, so the run spec carries the calibration itself. */
export function readCalibrationFile(file: string): Calibration {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new RubricateError('INPUT_UNREADABLE', `${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (error as Error).message}`, { file, field: 'calibration' });
  }
  const json = parseInputJson(text);
  if (!json.ok) throw new RubricateError('CONFIG_INVALID', `${file}: not JSON: ${json.error}`, { file, field: 'calibration' });
  const record = json.value !== null && typeof json.value === 'object' && !Array.isArray(json.value) ? { ...(json.value as Record<string, unknown>) } : json.value;
  if (record !== null && typeof record === 'object') delete (record as Record<string, unknown>).fit;
  const parsed = calibrationSchema.safeParse(record);
  if (!parsed.success) {
    throw zodIssueError(parsed.error, { code: 'CONFIG_INVALID', prefix: `${file}: not a calibration written by rubricate calibrate --format results: `, pathInMessage: true, fieldWhenEmpty: 'calibration', details: { file } });
  }
  const calibration = parsed.data;
  if (calibration.coefficients.length !== calibration.criteria.length) throw new RubricateError('CONFIG_INVALID', `${file}: ${calibration.coefficients.length} coefficients for ${calibration.criteria.length} criteria`, { file, field: 'coefficients' });
  if (hashValue(contentOf(calibration)) !== calibration.hash) throw new RubricateError('CONFIG_INVALID', `${file}: its hash does not match its model (the file was edited): run rubricate calibrate again`, { file, field: 'hash' });
  return calibration;
}

/** What a calibration reads of a criterion's result. */
export interface CalibratedCriterion {
  id: string;
  status: string;
  met?: boolean | null;
  value?: number | null;
  probability?: number;
}

/** A criterion's feature: P(met), else its value, else met as 1 or 0; undefined without a usable verdict. */
export function criterionFeature(criterion: CalibratedCriterion): number | undefined {
  if (criterion.status !== 'ok') return undefined;
  if (criterion.probability !== undefined) return criterion.probability;
  if (typeof criterion.value === 'number') return criterion.value;
  if (typeof criterion.met === 'boolean') return criterion.met ? 1 : 0;
  return undefined;
}

/** The calibrated score of one result's criteria, or null with the criteria that had no usable verdict. */
export function calibratedScore(calibration: CalibrationContent, criteria: readonly CalibratedCriterion[]): { score: number | null; missing: string[] } {
  const byId = new Map(criteria.map((criterion) => [criterion.id, criterion]));
  const missing: string[] = [];
  let score = calibration.intercept;
  calibration.criteria.forEach((id, index) => {
    const found = byId.get(id);
    const feature = found ? criterionFeature(found) : undefined;
    if (feature === undefined) missing.push(id);
    else score += calibration.coefficients[index] * feature;
  });
  if (missing.length > 0) return { score: null, missing };
  const range = calibration.range;
  return { score: range ? Math.min(range[1], Math.max(range[0], score)) : score, missing };
}
