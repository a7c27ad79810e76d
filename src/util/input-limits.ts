/**
 * Limits on what one input record may be, set once per run (CLI global flags, server options):
 * a record's size in bytes, its nesting depth, and the text encoding of input files. They keep
 * one hostile or broken line from exhausting memory or the stack: that line is reported
 * invalid and the rest of the input goes on.
 */

export type InputEncoding = 'utf8' | 'latin1';

export interface InputLimits {
  /** Largest record (a JSONL line, a JSON file, a request body record) in bytes. */
  maxRecordBytes: number;
  /** Deepest nesting of objects and arrays in a record. */
  maxDepth: number;
  /** Encoding of input files: utf8 (strict: invalid bytes are an error) or latin1. */
  encoding: InputEncoding;
}

export const defaultInputLimits: Readonly<InputLimits> = Object.freeze({
  maxRecordBytes: 64 * 1024 * 1024,
  maxDepth: 64,
  encoding: 'utf8',
});

let current: InputLimits = { ...defaultInputLimits };

export function inputLimits(): Readonly<InputLimits> {
  return current;
}

/** Sets the limits for this process (the CLI does so before each command). */
export function setInputLimits(limits: Partial<InputLimits>): void {
  current = { ...defaultInputLimits, ...limits };
}

export const inputEncodings: readonly InputEncoding[] = ['utf8', 'latin1'];
