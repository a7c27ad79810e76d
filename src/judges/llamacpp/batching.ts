/**
 * How the sequences of one context share llama.cpp's batches. A decode step of several
 * sequences costs little more than one on a CPU only when their tokens go in one batch; by
 * default node-llama-cpp dispatches a batch on the next event-loop turn, before the other
 * sequences (still sampling their last token under a grammar) have queued theirs, so steps
 * would run one sequence at a time. This scheduler waits, a bounded moment, for every
 * sequence that is decoding.
 */
type LlamaContext = import('node-llama-cpp').LlamaContext;

/** Sequences decoding now (in a call, past any wait for a shared prefix), and their context. */
export interface BatchingState {
  decoding: number;
  context: LlamaContext | undefined;
}

/** The longest a batch waits for the other decoding sequences' tokens (their sampling and grammar run between steps). */
const batchWaitMs = 20;

/**
 * node-llama-cpp's batch scheduler: dispatch once every decoding sequence has queued a decode
 * (or the wait runs out). The queue is read from the context's internal set of queued sequence
 * ids (node-llama-cpp 3.21, pinned); without it, the batch goes out on the next turn as by default.
 */
export function batchWhenAllQueued(batching: BatchingState): (dispatch: () => void) => void {
  return (dispatch) => {
    const started = performance.now();
    const check = () => {
      const queued = (batching.context as unknown as { _queuedDecodeSequenceIds?: Set<number> } | undefined)?._queuedDecodeSequenceIds?.size;
      if (queued === undefined || queued >= batching.decoding || performance.now() - started >= batchWaitMs) dispatch();
      else setImmediate(check);
    };
    setImmediate(check);
  };
}
