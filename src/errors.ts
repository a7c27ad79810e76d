/**
 * One error class with stable codes. Every failure that reaches a user, a results
 * file or an HTTP response is a RubricateError; the code decides the exit status,
 * the HTTP status and whether the engine retries.
 */

import { redactDeep, redactText } from './util/redact.js';

/**
 * Every error code with whether a retry can help, its HTTP status and its exit code (`docs/errors.md`).
 *
 * @example
 * ```ts
 * import { errorCodes } from 'rubricate';
 * console.log(Object.keys(errorCodes).join('\n'));
 * ```
 */
export const errorCodes = {
  INPUT_INVALID: { retryable: false, httpStatus: 400, exitCode: 3 },
  CONFIG_INVALID: { retryable: false, httpStatus: 400, exitCode: 2 },
  NOT_FOUND: { retryable: false, httpStatus: 404, exitCode: 2 },
  UNAUTHORIZED: { retryable: false, httpStatus: 401, exitCode: 2 },
  FORBIDDEN_ORIGIN: { retryable: false, httpStatus: 403, exitCode: 2 },
  UNSUPPORTED_MEDIA_TYPE: { retryable: false, httpStatus: 415, exitCode: 2 },
  INPUT_UNREADABLE: { retryable: false, httpStatus: 400, exitCode: 2 },
  OUTPUT_CONFLICT: { retryable: false, httpStatus: 400, exitCode: 2 },
  OUTPUT_UNWRITABLE: { retryable: false, httpStatus: 500, exitCode: 2 },
  /** An input file is not of the type its format reads (a JSON array or CSV where JSONL is expected, a binary file): one diagnosis, nothing read. */
  INPUT_WRONG_TYPE: { retryable: false, httpStatus: 400, exitCode: 2 },
  /** `merge` was not given the complete shards of one run (a shard missing, cut short, repeated or of another input): nothing written. */
  MERGE_REFUSED: { retryable: false, httpStatus: 400, exitCode: 2 },
  /** A group or tournament larger than its bound (`--max-group-size`, `--max-tournament-pairs`): refused before any memory or judge call is spent on it. */
  LIMIT_EXCEEDED: { retryable: false, httpStatus: 413, exitCode: 3 },
  /** `export` read results whose verdicts are made up (a scripted judge or `rubricate fake-judge`) and was not given `--allow-scripted`: nothing written. */
  SCRIPTED_VERDICTS_REFUSED: { retryable: false, httpStatus: 400, exitCode: 2 },
  OVERLOADED: { retryable: true, httpStatus: 503, exitCode: 4 },
  DEADLINE_EXCEEDED: { retryable: false, httpStatus: 504, exitCode: 4 },
  JUDGE_TIMEOUT: { retryable: true, httpStatus: 504, exitCode: 4 },
  JUDGE_RATE_LIMITED: { retryable: true, httpStatus: 503, exitCode: 4 },
  JUDGE_SERVER_ERROR: { retryable: true, httpStatus: 502, exitCode: 4 },
  JUDGE_CONNECTION: { retryable: true, httpStatus: 502, exitCode: 4 },
  JUDGE_AUTH: { retryable: false, httpStatus: 502, exitCode: 4 },
  JUDGE_REQUEST_REJECTED: { retryable: false, httpStatus: 502, exitCode: 4 },
  JUDGE_CONTEXT_OVERFLOW: { retryable: false, httpStatus: 422, exitCode: 3 },
  JUDGE_UNPARSEABLE: { retryable: true, httpStatus: 502, exitCode: 3 },
  JUDGE_REFUSED: { retryable: true, httpStatus: 502, exitCode: 3 },
  /** The model under test (`rubricate eval`) answered nothing: asked again, then its item is in error, never graded as an empty response. */
  RESPONSE_EMPTY: { retryable: true, httpStatus: 502, exitCode: 3 },
  JUDGE_UNAVAILABLE: { retryable: false, httpStatus: 503, exitCode: 4 },
  JUDGE_REPLY_TOO_LARGE: { retryable: true, httpStatus: 502, exitCode: 4 },
  JUDGE_CIRCUIT_OPEN: { retryable: false, httpStatus: 503, exitCode: 4 },
  /** A request this judge will never accept (e.g. log-probabilities from a model without them): stops the run. */
  JUDGE_UNSUPPORTED: { retryable: false, httpStatus: 502, exitCode: 4 },
  /** `replay:FILE` has no recorded verdict for this item and criterion: reported for it, never a default. */
  JUDGE_NOT_RECORDED: { retryable: false, httpStatus: 502, exitCode: 3 },
  /** The model, deployment or endpoint does not exist (404): stops the run. */
  JUDGE_NOT_FOUND: { retryable: false, httpStatus: 502, exitCode: 4 },
  /** The provider's content filter withheld the reply (or refused the prompt). */
  JUDGE_CONTENT_FILTERED: { retryable: false, httpStatus: 502, exitCode: 3 },
  /** The reply was cut off at the model's own output limit, after raising the budget as far as it goes. */
  JUDGE_OUTPUT_LIMIT: { retryable: false, httpStatus: 502, exitCode: 3 },
  /** A request inside a provider batch got no answer (the batch expired, was cancelled or failed): sent again in a new batch. */
  JUDGE_BATCH_UNANSWERED: { retryable: true, httpStatus: 502, exitCode: 4 },
  /** A queued run names a judge endpoint the worker's operator did not allow (`worker --allow-endpoint`): refused before any call, the key never sent. */
  JUDGE_ENDPOINT_NOT_ALLOWED: { retryable: false, httpStatus: 403, exitCode: 2 },
  /** `--dry-run`: the call was counted and priced, not sent. */
  JUDGE_DRY_RUN: { retryable: false, httpStatus: 500, exitCode: 1 },
  /** An agentic judge's tool call failed (a fetch that did not answer, a check that could not run, arguments the tool cannot read): an error for the verdict, asked again, never a verdict. */
  JUDGE_TOOL_FAILED: { retryable: true, httpStatus: 502, exitCode: 4 },
  /** An agentic judge asked for what the run does not allow (a host off `--fetch-allow`, a tool not offered): recorded, an error for the verdict. */
  JUDGE_TOOL_REFUSED: { retryable: false, httpStatus: 502, exitCode: 3 },
  /** An agentic judge used up its budget (`--judge-tool-budget` calls, `--fetch-max-bytes`) without giving its verdict. */
  JUDGE_TOOL_BUDGET: { retryable: false, httpStatus: 502, exitCode: 3 },
  CHECK_INVALID: { retryable: false, httpStatus: 400, exitCode: 3 },
  /** A code check's sandbox (bubblewrap) is missing or could not start: an error for that criterion, never a failed test. */
  SANDBOX_UNAVAILABLE: { retryable: false, httpStatus: 503, exitCode: 4 },
  /** A deterministic check could not decide (an answer that does not parse, a comparison past its time limit) and has no judge fallback. */
  CHECK_UNDECIDED: { retryable: false, httpStatus: 422, exitCode: 3 },
  /** A conditional criterion whose parent is in error: whether it applies cannot be decided, so it is in error too (never a default). */
  CONDITION_UNDECIDED: { retryable: false, httpStatus: 502, exitCode: 3 },
  /** `--lint`: a rubric of the input has lint findings of severity error, so nothing was graded. */
  RUBRIC_LINT_FAILED: { retryable: false, httpStatus: 422, exitCode: 3 },
  /** `POST /v1/rubrics/distill`: no candidate survived evaluation, selection and lint, so there is no rubric to answer. */
  RUBRIC_NOT_DISTILLED: { retryable: false, httpStatus: 422, exitCode: 3 },
  /** `--self-preference refuse`: the item's answers come from the judge's own model or family, so it was not graded. */
  SELF_PREFERENCE_REFUSED: { retryable: false, httpStatus: 409, exitCode: 3 },
  /** The SQLite cache stayed locked by another process beyond the wait bound. */
  STORE_BUSY: { retryable: false, httpStatus: 503, exitCode: 4 },
  /** The store (Redis/Valkey, or a failing cache file) cannot be reached or written. */
  STORE_UNAVAILABLE: { retryable: false, httpStatus: 503, exitCode: 4 },
  INTERNAL: { retryable: false, httpStatus: 500, exitCode: 1 },
} as const satisfies Record<string, { retryable: boolean; httpStatus: number; exitCode: number }>;

export type ErrorCode = keyof typeof errorCodes;

export interface ErrorDetails {
  /** Input file the error comes from. */
  file?: string;
  /** 1-based line number in that file. */
  line?: number;
  /** Field path inside the record, e.g. `rubric.criteria[3].points`. */
  field?: string;
  /** Milliseconds the server asked us to wait (429 / 503 Retry-After). */
  retryAfterMs?: number;
  /** HTTP status of a failed judge call. */
  status?: number;
  [key: string]: unknown;
}

/**
 * The one error class: a stable `code`, a redacted message, and details naming the file, line and field.
 *
 * @example
 * ```ts
 * import { RubricateError } from 'rubricate';
 * const error = new RubricateError('INPUT_INVALID', 'expected a string', { file: 'items.jsonl', line: 3, field: 'response' });
 * if (RubricateError.isInstance(error)) console.error(error.code, error.message);
 * ```
 */
export class RubricateError extends Error {
  override readonly name = 'RubricateError';
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}, options?: { cause?: unknown }) {
    // Messages and details reach results, stderr, reports and HTTP answers: no secret survives
    // past here (a judge's 401 body echoing the key, an endpoint URL with a password).
    super(redactText(message), options);
    this.code = code;
    this.details = redactDeep(details);
  }

  get retryable(): boolean {
    return errorCodes[this.code].retryable;
  }

  get httpStatus(): number {
    return errorCodes[this.code].httpStatus;
  }

  get exitCode(): number {
    return errorCodes[this.code].exitCode;
  }

  /** The shape stored in results files and HTTP bodies. */
  toJSON(): SerializedError {
    const { retryAfterMs: _ignored, ...details } = this.details;
    const location = formatLocation(details);
    return {
      code: this.code,
      message: location ? `${location}: ${this.message}` : this.message,
      ...(Object.keys(details).length > 0 ? { details } : {}),
    };
  }

  static isInstance(value: unknown): value is RubricateError {
    return value instanceof RubricateError;
  }
}

export interface SerializedError {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
}

export function formatLocation(details: ErrorDetails): string {
  const parts: string[] = [];
  if (details.file) parts.push(details.line ? `${details.file}:${details.line}` : details.file);
  else if (details.line) parts.push(`line ${details.line}`);
  if (details.field) parts.push(`field ${details.field}`);
  return parts.join(' ');
}

/** Wraps anything thrown into a RubricateError without losing the original as `cause`. */
export function toRubricateError(error: unknown, fallbackCode: ErrorCode = 'INTERNAL'): RubricateError {
  if (error instanceof RubricateError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new RubricateError(fallbackCode, message, {}, { cause: error });
}

/** Exit codes of the CLI, documented in the README. */
export const exitCodes = {
  success: 0,
  internal: 1,
  usage: 2,
  itemsFailed: 3,
  judgeUnavailable: 4,
  interrupted: 130,
  /** Stopped by SIGTERM (128 + 15), as shells report it. */
  terminated: 143,
} as const;

/**
 * The one table of what each exit code means. The README and docs/errors.md print it word for
 * word (a test checks), and each code has a test that triggers it through the CLI (test/exit-codes.test.ts).
 */
export const exitCodeMeanings: Record<(typeof exitCodes)[keyof typeof exitCodes], string> = {
  0: 'completed, every item graded',
  1: 'internal error (a bug: please report it)',
  2: 'usage or configuration error: nothing was graded (bad flag, unknown format, unreadable input or input of the wrong type, an output that would overwrite an input or cannot be written)',
  3: 'completed, but some items are in error or some input records were invalid',
  4: 'the judge or the store is unusable (the judge: bad credentials, unreachable, rejecting every call, replies without verdicts; the store or queue: Redis unreachable)',
  130: 'interrupted by Ctrl-C (SIGINT); rerun the same command to resume (nothing already answered is paid for again)',
  143: 'stopped by SIGTERM; rerun the same command to resume',
};
