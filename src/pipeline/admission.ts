/** Taking input records only until a run is asked to stop (graceful interruption). */

export interface AdmissionState {
  /** The source ended by itself (not cut short by the stop). */
  exhausted: boolean;
  /** Records handed on. */
  admitted: number;
}

/**
 * Yields records from `source` until `signal` aborts; a record read after the stop is not
 * handed on. Without a signal it is a plain pass-through.
 */
export async function* admitUntilStopped<T>(source: AsyncIterable<T>, signal: AbortSignal | undefined, state: AdmissionState): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  try {
    while (!signal?.aborted) {
      const next = await iterator.next();
      if (next.done) {
        state.exhausted = true;
        return;
      }
      if (signal?.aborted) return;
      state.admitted += 1;
      yield next.value;
    }
  } finally {
    if (!state.exhausted) await iterator.return?.();
  }
}
