/**
 * Runs an async function over a stream with at most `concurrency` calls in flight and yields
 * the results in input order, so output files are stable whatever finishes first. Memory is
 * bounded by the window, not by the input.
 */
export async function* mapInOrder<Input, Output>(
  source: AsyncIterable<Input> | Iterable<Input>,
  concurrency: number,
  run: (input: Input, index: number) => Promise<Output>,
): AsyncGenerator<Output> {
  const limit = Math.max(1, Math.floor(concurrency));
  const pending: Array<Promise<Output>> = [];
  let index = 0;
  for await (const input of source as AsyncIterable<Input>) {
    const task = run(input, index);
    // A rejection is observed when its turn comes; mark it handled so Node does not warn meanwhile.
    task.catch(() => undefined);
    pending.push(task);
    index += 1;
    if (pending.length >= limit) yield await pending.shift()!;
  }
  while (pending.length > 0) yield await pending.shift()!;
}
