/**
 * The one conversion from a failed zod parse to our error: its first issue, as the field it names
 * and its message, in the wording of the place that parsed (a setting, a request, a file's line).
 * `parseWith` (`spec/run-spec.ts`) reads settings through it, `zodErrorToInputError`
 * (`rubric/normalize.ts`) records.
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
  /**
   * A record's issue (an item, a rubric, a line of a format): a union's closest shape, wrong types
   * in plain words, and how many more problems there are.
   */
  record?: boolean;
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

/**
 * A value matching none of a union's shapes: the issue of the shape it came closest to (the
 * deepest path), so the field named is the one that is wrong (`prompt[0].content[1].type`),
 * not the union (`prompt`).
 */
function closestIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== 'invalid_union' || !issue.errors || issue.errors.length === 0) return issue;
  let best: z.core.$ZodIssue | undefined;
  for (const branch of issue.errors) {
    if (branch.length === 0) continue;
    const candidate = closestIssue(branch[0]);
    if (!best || candidate.path.length > best.path.length) best = candidate;
  }
  if (!best || best.path.length === 0) return issue;
  return { ...best, path: [...issue.path, ...best.path] };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  if (issue.code === 'invalid_type') {
    const received = /received (\w+)/.exec(issue.message)?.[1];
    if (received === undefined || received === 'undefined') return `missing required field (expected ${issue.expected})`;
    if (received === 'NaN') return `expected a finite ${issue.expected}, got NaN`;
    return `expected ${issue.expected}, got ${received}`;
  }
  return issue.message;
}

/** The issue's own words, as the caller asks for them. */
function issueText(issue: z.core.$ZodIssue | undefined, options: ZodIssueErrorOptions): string {
  if (!issue) return options.record ? 'invalid record' : 'invalid';
  if (issue.code === 'unrecognized_keys' && options.unknownKeys === 'list') return `not a setting (${issue.keys.join(', ')})`;
  if (issue.code === 'unrecognized_keys' && options.unknownKeys === 'first') return 'not a setting';
  return options.record ? describeIssue(issue) : issue.message;
}

/** The first issue of a failed parse as a `RubricateError` naming its field. */
export function zodIssueError(error: z.ZodError, options: ZodIssueErrorOptions = {}): RubricateError {
  const first = error.issues[0] as z.core.$ZodIssue | undefined;
  const issue = first && options.record ? closestIssue(first) : first;
  const unknownKey = issue?.code === 'unrecognized_keys' ? issue.keys : undefined;
  const segments = [...(options.under ?? []), ...(issue?.path ?? []), ...(unknownKey && options.unknownKeys === 'first' ? [unknownKey[0]] : [])];
  const path = fieldPath(segments, options.indexed ?? false);
  const others = error.issues.length - 1;
  const more = options.record && others > 0 ? ` (and ${others} more problem${others > 1 ? 's' : ''})` : '';
  const message = `${options.prefix ?? ''}${options.pathInMessage && path ? `${path}: ` : ''}${issueText(issue, options)}${more}${options.suffix ?? ''}`;
  const field = options.field ?? (path || options.fieldWhenEmpty);
  const details: ErrorDetails = { ...options.details, ...(options.omitEmptyField && !field ? {} : { field }) };
  return new RubricateError(options.code ?? 'INPUT_INVALID', message, details);
}
