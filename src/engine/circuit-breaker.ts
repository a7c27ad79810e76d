/**
 * A circuit breaker per judge: the backstop against a judge that cannot work. A wrong base URL
 * (connection refused), a wrong model (404), or an endpoint that cannot give what the run asks
 * for (`--verdict probability` without logprobs) otherwise fails every call of every item, with
 * retries, for as long as the input lasts, and that can be paid calls. After `threshold`
 * consecutive hard failures with no usable reply in between, the breaker opens: the engine stops
 * the run with JUDGE_CIRCUIT_OPEN (exit 4), naming the server's message, the endpoint and what to
 * check.
 *
 * Hard failures are the ones a retry or the next item will not cure: connection failures,
 * requests the judge rejects (4xx other than rate limits and over-long prompts), and replies
 * from which no verdict at all can be read. Rate limits, timeouts and 5xx answers are transient
 * and handled by backoff; they neither open the breaker nor count as a success.
 */
import { RubricateError, type ErrorCode } from '../errors.js';
import { redactText } from '../util/redact.js';

export const defaultBreakerThreshold = 20;

/** Codes of call failures that the next call will meet as well. */
const hardCallFailures = new Set<ErrorCode>(['JUDGE_CONNECTION', 'JUDGE_REQUEST_REJECTED', 'JUDGE_REPLY_TOO_LARGE']);

export interface FailureTally {
  code: ErrorCode;
  count: number;
  example: string;
  status?: number;
}

export class JudgeCircuitBreaker {
  private consecutive = 0;
  private successes = 0;
  private readonly recent = new Map<ErrorCode, FailureTally>();
  private openedWith: RubricateError | undefined;

  constructor(
    /** Consecutive hard failures that open the breaker; 0 or Infinity never opens it. */
    readonly threshold: number = defaultBreakerThreshold,
    /** The judge's endpoint or id, for the message. */
    readonly endpoint?: string,
  ) {}

  get open(): RubricateError | undefined {
    return this.openedWith;
  }

  /** A call's reply gave at least one verdict. */
  recordSuccess(): void {
    this.successes += 1;
    this.consecutive = 0;
    this.recent.clear();
  }

  /** Whether a failed call counts toward opening the breaker. */
  static isHardCallFailure(error: RubricateError): boolean {
    return hardCallFailures.has(error.code);
  }

  /**
   * A call failed hard (or its reply gave no verdict at all). Returns the error that stops the
   * run when this failure opens the breaker.
   */
  recordFailure(error: RubricateError): RubricateError | undefined {
    if (this.openedWith) return this.openedWith;
    this.consecutive += 1;
    const tally = this.recent.get(error.code);
    if (tally) tally.count += 1;
    else this.recent.set(error.code, { code: error.code, count: 1, example: error.message, ...(typeof error.details.status === 'number' ? { status: error.details.status } : {}) });
    if (!(this.threshold > 0) || !Number.isFinite(this.threshold) || this.consecutive < this.threshold) return undefined;
    this.openedWith = this.openError(error);
    return this.openedWith;
  }

  private openError(last: RubricateError): RubricateError {
    const tallies = [...this.recent.values()].sort((first, second) => second.count - first.count);
    const main = tallies[0];
    const endpoint = redactText(String(last.details.endpoint ?? this.endpoint ?? 'the judge'));
    const counts = tallies.map((tally) => `${tally.code} ×${tally.count}`).join(', ');
    const history = this.successes === 0 ? 'and none has succeeded' : `since the last success (${this.successes} before it)`;
    const message = [
      `stopped: the last ${this.consecutive} calls to the judge at ${endpoint} failed ${history} (${counts}).`,
      `The judge said: ${main.example}`,
      `Check: ${adviceFor(main)}`,
      'Verdicts already obtained are kept; rerun the same command once the judge works.',
    ].join('\n');
    return new RubricateError('JUDGE_CIRCUIT_OPEN', message, { endpoint, failures: this.consecutive, codes: Object.fromEntries(tallies.map((tally) => [tally.code, tally.count])) });
  }
}

function adviceFor(tally: FailureTally): string {
  switch (tally.code) {
    case 'JUDGE_CONNECTION':
      return 'that the judge server is running and that --judge-base-url (or OPENAI_BASE_URL) points at it, including the port and the /v1 path.';
    case 'JUDGE_REQUEST_REJECTED':
      if (tally.status === 404) return 'the model name (--judge openai:MODEL) and that the base URL is the one that serves /chat/completions (usually ending in /v1).';
      return 'the options the judge refuses (the message above): the model name, --verdict probability (needs logprobs), --structured-output, --max-tokens.';
    case 'JUDGE_REPLY_TOO_LARGE':
      return 'that --judge-base-url points at a chat-completions endpoint, and --max-tokens; raise --max-reply-bytes only if such replies are expected.';
    case 'JUDGE_UNPARSEABLE':
    case 'JUDGE_REFUSED':
      return 'the model (does it follow the grading instructions?), --structured-output, and for --verdict probability that the endpoint returns logprobs.';
    default:
      return 'the judge settings (--judge, --judge-base-url, --judge-api-key) and the judge server\'s logs.';
  }
}
