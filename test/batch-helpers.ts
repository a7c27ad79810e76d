/** What the `--batch` tests share: scripted verdicts, result files, and the kill-and-resume set-up. */
import { createHash } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { runCliInProcess, startCli } from './helpers.js';

/** The scripted verdict of a criterion on a response: a pure function of both. */
export function expectedVerdict(criterion: string, response: string): boolean {
  return createHash('sha256').update(`${criterion}\u0000${response}`).digest()[0] < 128;
}

export interface ResultLine {
  id: string;
  status: string;
  usage?: unknown;
  response?: unknown;
  criteria: Array<{ text: string; met?: boolean; error?: { code: string; message: string } }>;
  [key: string]: unknown;
}

export function readResults(path: string): ResultLine[] {
  return readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as ResultLine);
}

/** A line without what only describes the spending (usage differs by design: batch vs sync). */
export function withoutUsage<T extends { usage?: unknown }>(line: T): Omit<T, 'usage'> {
  const { usage: _usage, ...rest } = line;
  return rest;
}

/** Three items of two criteria each. */
export function smallInput(directory: string): string {
  const input = join(directory, 'items.jsonl');
  const items = Array.from({ length: 3 }, (_, index) =>
    JSON.stringify({ id: `item-${index}`, prompt: `Question ${index}`, response: `Answer ${index}`, rubric: { criteria: [{ text: `Criterion A${index}`, points: 2 }, { text: `Criterion B${index}`, points: 3 }] } }),
  );
  writeFileSync(input, items.join('\n'));
  return input;
}

/** HealthBench's examples with one scripted response each: the input flags of `grade`, and how many criteria they hold. */
export function healthbenchBatchInput(path: string, directory: string): { input: string[]; criteria: number } {
  const rows = readFileSync(path, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { prompt_id: string; rubrics: unknown[] });
  const responses = join(directory, 'responses.jsonl');
  writeFileSync(responses, rows.map((row, index) => JSON.stringify({ prompt_id: row.prompt_id, response: `Answer ${index}: rest, fluids, and see a doctor if it gets worse.` })).join('\n'));
  return { input: ['--format', 'healthbench', '--input', path, '--responses', responses], criteria: rows.reduce((total, row) => total + row.rubrics.length, 0) };
}

/** What the kill test reads of a loopback Batch API fake (OpenAI's or Anthropic's). */
interface BatchFake {
  events: EventEmitter;
  readonly receivedRequests: number;
  readonly createdBatches: number;
}

/**
 * Runs the CLI and kills it with SIGKILL once `requests` requests are in created batches and
 * the process is polling (the gathering may make several batches). Returns the batches the
 * fake had created by then.
 */
export async function killWhilePolling(args: string[], fake: BatchFake, requests: number): Promise<number> {
  const run = startCli(args);
  const created = new Promise<void>((resolve) => {
    fake.events.on('retrieve', () => {
      if (fake.receivedRequests === requests) resolve();
    });
  });
  const endedEarly = run.done.then((result) => {
    throw new Error(`batch run ended before it was killed: ${result.stderr}`);
  });
  await Promise.race([created, endedEarly]);
  run.child.kill('SIGKILL');
  expect((await run.done).signal).toBe('SIGKILL');
  expect(fake.receivedRequests).toBe(requests);
  return fake.createdBatches;
}

export interface LedgerRow {
  batch_id: string;
  provider: string;
  role: string;
  status: string;
  requests: number;
  answered: number;
  failed: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost_usd: number;
}

/** The batches of a cache, as `rubricate batches --json` lists them. */
export async function ledgerRows(cache: string): Promise<LedgerRow[]> {
  const listed = await runCliInProcess(['batches', '--cache', cache, '--json']);
  expect(listed.code, listed.stderr).toBe(0);
  return listed.stdout.trim().split('\n').map((line) => JSON.parse(line) as LedgerRow);
}
