/**
 * One page of a batch list, as both Batch APIs page theirs (newest first, cursor ids): up to
 * `limit` batches after the one named `after` and, for Anthropic's `before_id`, before `before`.
 */
export interface ListPage<T> {
  data: T[];
  has_more: boolean;
  first_id: string | null;
  last_id: string | null;
}

export function listPage<T extends { id: string }>(newestFirst: readonly T[], options: { limit: number; after?: string | null; before?: string | null }): ListPage<T> {
  const start = options.after ? newestFirst.findIndex((batch) => batch.id === options.after) + 1 : 0;
  const stop = options.before ? Math.max(0, newestFirst.findIndex((batch) => batch.id === options.before)) : newestFirst.length;
  const data = newestFirst.slice(start, Math.min(stop, start + options.limit));
  return { data, has_more: start + options.limit < stop, first_id: data[0]?.id ?? null, last_id: data[data.length - 1]?.id ?? null };
}
