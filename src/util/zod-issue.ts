/**
 * The one conversion from a failed zod parse to our error: its first issue, as the field it names
 * and its message, in the wording of the place that parsed (a setting, a request, a file's line).
 * `parseWith` (`spec/run-spec.ts`) reads settings through it; `zodErrorToInputError`
 * (`rubric/normalize.ts`) is the richer one for items and rubrics (a union's closest branch,
 * the count of further problems).
 */
import type { z } from 'zod';
import { RubricateError, type ErrorCode, type ErrorDetails } from '../errors.js';

export interface ZodIssueErrorOptions {
  /** Default INPUT_INVALID (a record, a request); CONFIG_INVALID for settings and files of settings. */
  code?: Extract<ErrorCode, 'INPUT_INVALID' | 'CONFIG_INVALID'>;
  /** Written before the message (`price table: `). */
  prefix?: string;
  /** Written after the message. */
  suffix?: string;
  /** The field also opens the message (`plan.mode: …`). */
  pathInMessage?: boolean;
  /** Array positions as `[0]` (`criteria[0].id`) rather than `.0`. */
  indexed?: boolean;
  /** Path segments in front of the issue's (the field of the value that was parsed). */
  under?: readonly PropertyKey[];
  /** The field, whatever the issue's path (a value parsed as a whole). */
  field?: string;
  /** The field when the issue has no path (default: none). */
  fieldWhenEmpty?: string;
  /** No `field` at all when the issue has no path (rather than a field that is undefined). */
  omitEmptyField?: boolean;
  /** A key the schema does not know: `list` says `not a setting (a, b)`; `first` names the first as the field and says `not a setting`. */
  unknownKeys?: 'list' | 'first';
  /** Where the value came from (`file`, `line`…). */
  details?: ErrorDetails;
}

/** A field path: names joined by dots, positions as `[0]` when `indexed` (`criteria[0].id`), else `.0`. */
export function fieldPath(path: readonly PropertyKey[], indexed = true): string {
  if (!indexed) return path.map(String).join('.');
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else out += out ? `.${String(segment)}` : String(segment);
  }
  return out;
}

/** The first issue of a failed parse as a `RubricateError` naming its field. */
export function zodIssueError(error: z.ZodError, options: ZodIssueErrorOptions = {}): RubricateError {
  const issue = error.issues[0] as z.core.$ZodIssue | undefined;
  const unknownKey = issue?.code === 'unrecognized_keys' ? issue.keys : undefined;
  const segments = [...(options.under ?? []), ...(issue?.path ?? []), ...(unknownKey && options.unknownKeys === 'first' ? [unknownKey[0]] : [])];
  const path = fieldPath(segments, options.indexed ?? false);
  let text = issue?.message ?? 'invalid';
  if (unknownKey && options.unknownKeys === 'list') text = `not a setting (${unknownKey.join(', ')})`;
  else if (unknownKey && options.unknownKeys === 'first') text = 'not a setting';
  const message = `${options.prefix ?? ''}${options.pathInMessage && path ? `${path}: ` : ''}${text}${options.suffix ?? ''}`;
  const field = options.field ?? (path || options.fieldWhenEmpty);
  const details: ErrorDetails = { ...options.details, ...(options.omitEmptyField && !field ? {} : { field }) };
  return new RubricateError(options.code ?? 'INPUT_INVALID', message, details);
}
