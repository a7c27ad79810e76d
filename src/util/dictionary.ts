/**
 * An object keyed by names that come from data (tags, domains, capabilities). It has no
 * prototype, so a name such as `__proto__` is an entry like any other instead of replacing the
 * prototype (and vanishing from the JSON written out).
 */
export function dictionary<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
