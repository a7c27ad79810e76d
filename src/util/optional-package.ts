/**
 * Imports an optional dependency on first use. A missing or broken install becomes one
 * RubricateError that says how to add the package, instead of a module-resolution stack.
 */
import { RubricateError, type ErrorCode } from '../errors.js';

export async function importOptional<T>(name: string, hint: string, code: ErrorCode = 'JUDGE_UNAVAILABLE'): Promise<T> {
  try {
    // A variable specifier keeps bundlers from inlining the optional package.
    const specifier = name;
    return (await import(specifier)) as T;
  } catch (error) {
    throw new RubricateError(code, `${hint} (${error instanceof Error ? error.message : String(error)})`, { package: name }, { cause: error });
  }
}
