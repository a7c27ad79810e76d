/** How the local judge's failures become judge errors: a cancelled call, an unloaded model, a failed inference. */
import { RubricateError } from '../../errors.js';

export function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function abortError(signal: AbortSignal): RubricateError {
  const reason: unknown = signal.reason;
  if (RubricateError.isInstance(reason)) return reason;
  return new RubricateError('JUDGE_TIMEOUT', `judge call aborted: ${reason instanceof Error ? reason.message : String(reason ?? 'aborted')}`);
}

export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}

export function toJudgeError(error: unknown, signal: AbortSignal): RubricateError {
  if (signal.aborted) return abortError(signal);
  if (RubricateError.isInstance(error)) return error;
  const message = describe(error);
  if (error instanceof Error && error.name === 'DisposedError') {
    return new RubricateError('JUDGE_UNAVAILABLE', `the local model was unloaded during the call: ${message}`, {}, { cause: error });
  }
  return new RubricateError('JUDGE_SERVER_ERROR', `local llama.cpp inference failed: ${message}`, {}, { cause: error });
}
