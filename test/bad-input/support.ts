/**
 * The bad-input suite's harness: each case writes its files into a fresh folder, runs the CLI
 * in this process (the same entry point the binary uses), and checks the exit code, the error
 * code and field reported, that no stack trace was printed, and that no input file changed. The
 * folder is removed when the case ends.
 */
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { expect } from 'vitest';
import { runCliCaptured } from '../../src/cli/in-process.js';
import type { ErrorCode } from '../../src/errors.js';

export interface CliOutcome {
  code: number;
  stdout: string;
  stderr: string;
  directory: string;
}

export interface CliCase {
  name: string;
  /** Files to create, by name relative to the case folder. */
  files: Record<string, string | Buffer>;
  /** Arguments; `@name` is replaced by the path of that file in the case folder. */
  args: string[];
  exit: number;
  /** The error code the CLI must report (in `error [CODE]` or `invalid input … [CODE]`). */
  code?: ErrorCode;
  /** The field the report must name; `null`: a whole-line problem, so the line must be named instead. */
  field?: string | null;
  /** The line the report must name (file:line). */
  line?: number;
  message?: RegExp;
  /** Extra checks on the outcome. */
  check?: (outcome: CliOutcome) => void;
  /** Links to make before the run: [link name, target name, 'hard' | 'symbolic']. */
  links?: Array<[string, string, 'hard' | 'symbolic']>;
}

function sha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}


export async function runCase(testCase: CliCase): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'rubricate-bad-input-'));
  try {
    for (const [name, contents] of Object.entries(testCase.files)) {
      const path = join(directory, name);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, contents);
    }
    const { linkSync, symlinkSync } = await import('node:fs');
    for (const [link, target, kind] of testCase.links ?? []) {
      if (kind === 'hard') linkSync(join(directory, target), join(directory, link));
      else symlinkSync(join(directory, target), join(directory, link));
    }
    const before = new Map(Object.keys(testCase.files).map((name) => [name, sha256(join(directory, name))]));
    const args = testCase.args.map((argument) => argument.replace(/@([\w./-]+)/g, (_, name: string) => join(directory, name)));
    const result = await runCliCaptured(args);
    const outcome = { ...result, directory };

    expect(result.code, result.stderr).toBe(testCase.exit);
    // Never a stack trace or an internal error for bad input.
    expect(result.stderr).not.toMatch(/\n\s+at /);
    expect(result.stderr).not.toMatch(/internal error/);
    if (testCase.code) expect(result.stderr, result.stderr).toContain(`[${testCase.code}]`);
    if (typeof testCase.field === 'string') expect(result.stderr, result.stderr).toContain(`field ${testCase.field}`);
    if (testCase.line !== undefined) expect(result.stderr, result.stderr).toMatch(new RegExp(`:${testCase.line}[: ]`));
    if (testCase.message) expect(result.stderr, result.stderr).toMatch(testCase.message);
    // No input changed, whatever happened.
    for (const [name, hash] of before) {
      expect(existsSync(join(directory, name)), `${name} still exists`).toBe(true);
      if (lstatSync(join(directory, name)).isFile()) expect(sha256(join(directory, name)), `${name} unchanged`).toBe(hash);
    }
    testCase.check?.(outcome);
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

/** A valid item graded by a deterministic check (no judge needed), with overrides. */
export function item(overrides: Record<string, unknown> = {}, rubric: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'item',
    prompt: 'Say hello.',
    response: 'hello there',
    rubric: { criteria: [{ text: 'Says hello', points: 2, check: { type: 'contains', text: 'hello' } }], ...rubric },
    ...overrides,
  };
}

export function criterion(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return { text: 'Says hello', points: 2, check: { type: 'contains', text: 'hello' }, ...overrides };
}

export function jsonl(...records: unknown[]): string {
  return `${records.map((record) => (typeof record === 'string' ? record : JSON.stringify(record))).join('\n')}\n`;
}

/** A results line as `grade` writes it, with overrides on its one criterion. */
export function resultLine(criterionOverrides: Record<string, unknown> = {}, recordOverrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: 'r1',
    status: 'ok',
    score: 1,
    criteria: [{ id: 'c1', text: 'Says hello', points: 2, tags: [], kind: 'principle', source: 'judge', status: 'ok', met: true, ...criterionOverrides }],
    scoring: 'weighted_mean',
    rubricate_version: 'test',
    ...recordOverrides,
  };
}

/** A JSON object nested `depth` levels deep, as text (too deep to build with JSON.stringify). */
export function deepJson(depth: number): string {
  return `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}
