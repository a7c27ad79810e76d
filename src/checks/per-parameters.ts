/**
 * Caches work derived from a parsed parameters object (compiled patterns, lowercased words).
 * Parsed parameters are shared by every response a check runs on, so the work happens once per rubric.
 */
export function perParameters<Parameters extends object, Derived>(derive: (parameters: Parameters) => Derived) {
  const cache = new WeakMap<Parameters, Derived>();
  return (parameters: Parameters): Derived => {
    let derived = cache.get(parameters);
    if (derived === undefined) {
      derived = derive(parameters);
      cache.set(parameters, derived);
    }
    return derived;
  };
}
