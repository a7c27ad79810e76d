/**
 * The one "results in input order as they complete" loop: grading, comparing, generating and
 * the distributed producer all write their outputs through it, so output files are stable
 * whatever finishes first, and memory follows the window, not the input.
 */

export interface InOrderOptions {
  /** Most inputs started and not yet handed out (at least 1). */
  window: number;
  /**
   * While this says the workers already have enough queued, the oldest result is handed out
   * before more input is read (one input always stays started).
   */
  busy?: () => boolean;
  /** An error that ends the stream: nothing more is started or handed out, and it is thrown. */
  stopped?: () => Error | undefined;
}

/**
 * Runs `run` over `source`, at most `window` at once, and yields the results in input order.
 * A rejected `run` is thrown when its turn comes (never reported as unhandled before that).
 */
export async function* mapInOrder<Input, Output>(
  source: AsyncIterable<Input> | Iterable<Input>,
  run: (input: Input, index: number) => Promise<Output>,
  options: InOrderOptions,
): AsyncGenerator<Output> {
  const window = Math.max(1, Math.floor(options.window));
  const pending: Array<Promise<Output>> = [];
  let index = 0;
  const mustHandOut = () => pending.length >= window || (pending.length > 1 && options.busy?.() === true);
  const stoppedWith = () => options.stopped?.();
  for await (const input of source) {
    if (stoppedWith()) break;
    const started = run(input, index);
    index += 1;
    started.catch(() => undefined);
    pending.push(started);
    while (mustHandOut()) {
      const next = await pending.shift()!;
      if (stoppedWith()) break;
      yield next;
    }
    if (stoppedWith()) break;
  }
  while (pending.length > 0 && !stoppedWith()) {
    const next = await pending.shift()!;
    if (stoppedWith()) break;
    yield next;
  }
  const error = stoppedWith();
  if (error) throw error;
}
