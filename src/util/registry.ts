/**
 * The one registry idiom: named entries (importers, judge backends, scorings, checks) looked
 * up by name, with the built-in names as a type, and one error for a name nobody registered
 * (it lists the known names and suggests the nearest one).
 */
import { RubricateError, type ErrorCode } from '../errors.js';

export interface RegistryOptions {
  /** What an entry is, for the error message: `scoring`, `input format`, `check type`. */
  what: string;
  /** The field (flag or key) that names the entry, for the error's details. */
  field: string;
  /** Error code of an unknown name; default CONFIG_INVALID. */
  code?: ErrorCode;
  /** How a name is shown in the list of known names (judges: `openai:…`). */
  display?: (name: string) => string;
}

export interface Registry<Name extends string, Entry> {
  readonly what: string;
  /** The entry, or the RubricateError naming the known entries. */
  get(name: string): Entry;
  /** The entry, or undefined. */
  find(name: string): Entry | undefined;
  has(name: string): name is Name;
  /** Names in registration order. */
  names(): Name[];
  values(): Entry[];
  /** Adds (or replaces) an entry; extension points such as `registerJudge` use it. */
  register(name: string, entry: Entry): void;
  /** The error for an unknown name: the known names and, for a likely typo, the nearest one. */
  unknown(name: string, details?: Record<string, unknown>): RubricateError;
}

/** The built-in names of a registry, as a union type. */
export type RegistryName<R> = R extends Registry<infer Name, unknown> ? Name : never;

/**
 * A registry from `{ name: entry }` (the names become the `Name` union) or from `[name, entry]`
 * pairs. An entry that has its own `name` must be registered under it.
 */
export function createRegistry<const Name extends string, Entry>(
  options: RegistryOptions,
  entries: Readonly<Record<Name, Entry>> | Iterable<readonly [Name, Entry]>,
): Registry<Name, Entry> {
  const map = new Map<string, Entry>();
  const add = (name: string, entry: Entry) => {
    // Functions have a `name` of their own (the variable's); only entry objects declare one.
    const own = typeof entry === 'object' && entry !== null ? (entry as { name?: unknown }).name : undefined;
    if (typeof own === 'string' && own !== name) throw new RubricateError('INTERNAL', `${options.what} "${own}" registered as "${name}"`);
    map.set(name, entry);
  };
  const pairs = Symbol.iterator in entries ? (entries as Iterable<readonly [Name, Entry]>) : (Object.entries(entries) as Array<[Name, Entry]>);
  for (const [name, entry] of pairs) add(name, entry);
  const display = options.display ?? ((name: string) => name);

  const registry: Registry<Name, Entry> = {
    what: options.what,
    get(name) {
      const entry = map.get(name);
      if (entry === undefined) throw registry.unknown(name);
      return entry;
    },
    find: (name) => map.get(name),
    has: (name): name is Name => map.has(name),
    names: () => [...map.keys()] as Name[],
    values: () => [...map.values()],
    register: add,
    unknown(name, details = {}) {
      const suggestion = nearestName(name, [...map.keys()]);
      const known = [...map.keys()].map(display).join(', ');
      const hint = suggestion ? `did you mean "${suggestion}"? known: ${known}` : `known: ${known}`;
      return new RubricateError(options.code ?? 'CONFIG_INVALID', `unknown ${options.what} "${name}" (${hint})`, { field: options.field, ...details });
    },
  };
  return registry;
}

/** The registered name nearest to a misspelt one, when close enough to be a likely typo. */
export function nearestName(name: string, names: readonly string[]): string | undefined {
  // `ifeval:length_constraints` for `length_constraints`: a known name behind a prefix.
  const tail = name.slice(name.indexOf(':') + 1);
  if (tail !== name && names.includes(tail)) return tail;
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of names) {
    const distance = editDistance(name, candidate);
    if (distance < bestDistance) {
      bestDistance = distance;
      best = candidate;
    }
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 4)) ? best : undefined;
}

function editDistance(first: string, second: string): number {
  let previous = Array.from({ length: second.length + 1 }, (_, index) => index);
  for (let row = 1; row <= first.length; row += 1) {
    const current = [row];
    for (let column = 1; column <= second.length; column += 1) {
      const substitution = previous[column - 1] + (first[row - 1] === second[column - 1] ? 0 : 1);
      current.push(Math.min(previous[column] + 1, current[column - 1] + 1, substitution));
    }
    previous = current;
  }
  return previous[second.length];
}
