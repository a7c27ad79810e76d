/**
 * The body of `POST /v1/rubrics/:id/observe`, read strictly. Its verdicts decide which
 * evolving criteria are retired, so anything that is not exactly a verdict is refused with
 * the field named: an `id` that is not a string (`{"$ne": 1}`), a `met` that is not a boolean
 * or null (`"yes"`), a `value` that is not a finite number. Other fields of a results line
 * (text, points, explanation…) are allowed and ignored, so a results line fits as it is.
 */
import { RubricateError } from '../errors.js';
import type { ObservedRollout } from '../generation/evolver.js';

const statuses = new Set(['ok', 'error', 'skipped']);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function invalid(field: string, message: string): RubricateError {
  return new RubricateError('INPUT_INVALID', message, { field });
}

function own(record: Record<string, unknown>, key: string): unknown {
  return Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}

export function parseObservedRollouts(body: Record<string, unknown>): ObservedRollout[] {
  const results = own(body, 'results');
  if (!Array.isArray(results)) throw invalid('results', 'results must be a list of graded rollouts {criteria: [{id, met}]}');
  return results.map((result, resultIndex) => {
    const at = `results[${resultIndex}]`;
    if (!isRecord(result)) throw invalid(at, 'a graded rollout must be an object {criteria: [{id, met}]}');
    const criteria = own(result, 'criteria');
    if (!Array.isArray(criteria)) throw invalid(`${at}.criteria`, 'criteria must be a list of {id, met}');
    return {
      criteria: criteria.map((entry, criterionIndex) => {
        const field = `${at}.criteria[${criterionIndex}]`;
        if (!isRecord(entry)) throw invalid(field, 'a verdict must be an object {id, met}');
        const id = own(entry, 'id');
        if (typeof id !== 'string' || id === '') throw invalid(`${field}.id`, `id must be a non-empty string, got ${describe(id)}`);
        const met = own(entry, 'met');
        if (met !== null && typeof met !== 'boolean') throw invalid(`${field}.met`, `met must be true, false or null, got ${describe(met)}`);
        const value = own(entry, 'value');
        if (value !== undefined && value !== null && (typeof value !== 'number' || !Number.isFinite(value))) {
          throw invalid(`${field}.value`, `value must be a finite number or null, got ${describe(value)}`);
        }
        const status = own(entry, 'status');
        if (status !== undefined && (typeof status !== 'string' || !statuses.has(status))) {
          throw invalid(`${field}.status`, `status must be one of ok, error, skipped, got ${describe(status)}`);
        }
        return { id, met, ...(value !== undefined ? { value: value as number | null } : {}), ...(status !== undefined ? { status: status as string } : {}) };
      }),
    };
  });
}

function describe(value: unknown): string {
  if (value === undefined) return 'nothing';
  const json = JSON.stringify(value);
  return json === undefined ? typeof value : json.length > 60 ? `${json.slice(0, 60)}…` : json;
}
