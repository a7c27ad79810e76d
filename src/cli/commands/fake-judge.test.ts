import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { scriptedLabel } from '../../judges/scripted.js';
import { test } from '../../testing/vitest-fixtures.js';
import { runCliCaptured } from '../in-process.js';
import { runCli } from '../main.js';

const items = join(import.meta.dirname, '../../../examples/items.jsonl');

/** `rubricate fake-judge` in this process until `stop`: its listening line first. */
async function startFakeJudgeCommand(args: string[] = []) {
  const controller = new AbortController();
  const stdout: string[] = [];
  let listening: (line: Record<string, unknown>) => void = () => undefined;
  const started = new Promise<Record<string, unknown>>((resolve) => (listening = resolve));
  const exited = runCli(['fake-judge', '--port', '0', ...args], {
    stdout: (text) => {
      stdout.push(text);
      const line = JSON.parse(text) as Record<string, unknown>;
      if (line.event === 'listening') listening(line);
    },
    stderr: () => undefined,
    signal: controller.signal,
  });
  const line = await Promise.race([started, exited.then((code) => Promise.reject(new Error(`fake-judge exited ${code}`)))]);
  return { url: String(line.url), line, stdout, stop: async () => (controller.abort(), exited) };
}

function withJudgeEnvironment<T>(baseUrl: string, run: () => Promise<T>): Promise<T> {
  Object.assign(process.env, { OPENAI_BASE_URL: baseUrl, OPENAI_API_KEY: 'scripted' });
  return run().finally(() => {
    delete process.env.OPENAI_BASE_URL;
    delete process.env.OPENAI_API_KEY;
  });
}

describe('rubricate fake-judge', () => {
  test('serves made-up, labelled verdicts to openai: judges, synchronously and through the Batch API, until stopped', async ({ tempDir }) => {
    const fake = await startFakeJudgeCommand(['--verdicts', 'met']);
    expect(fake.line).toMatchObject({ judge: 'scripted:met', scripted: true });
    const outcomes = await withJudgeEnvironment(fake.url, async () => [
      await runCliCaptured(['grade', '--input', items, '--judge', 'openai:gpt-4.1-mini', '--no-cache', '--quiet', '--out', join(tempDir, 'sync.jsonl')]),
      await runCliCaptured(['grade', '--input', items, '--judge', 'openai:gpt-4.1-mini', '--no-cache', '--quiet', '--batch', '--batch-poll', '0.05', '--out', join(tempDir, 'batch.jsonl')]),
    ]);
    for (const [index, outcome] of outcomes.entries()) expect(outcome.code, `run ${index}: ${outcome.stderr}`).toBe(0);
    const lines = (file: string) => readFileSync(join(tempDir, file), 'utf8').trim().split('\n').map((line) => JSON.parse(line));
    const judged = lines('sync.jsonl').flatMap((result) => result.criteria.filter((criterion: { source: string }) => criterion.source === 'judge'));
    expect(judged.length).toBeGreaterThan(0);
    for (const criterion of judged) expect(criterion).toMatchObject({ status: 'ok', met: true, explanation: scriptedLabel });
    // The same made-up verdicts by batch: every judged criterion answered, the same way.
    expect(lines('batch.jsonl').map((result) => result.criteria.map((criterion: { met: boolean }) => criterion.met))).toEqual(lines('sync.jsonl').map((result) => result.criteria.map((criterion: { met: boolean }) => criterion.met)));
    expect(await fake.stop()).toBe(0);
    expect(JSON.parse(fake.stdout.at(-1)!)).toMatchObject({ event: 'stopped' });
    expect(JSON.parse(fake.stdout.at(-1)!).requests).toBeGreaterThan(judged.length);
  });

  test('a port that is taken is an error, not a hang', async () => {
    const first = await startFakeJudgeCommand();
    const port = new URL(first.url).port;
    const second = await runCliCaptured(['fake-judge', '--port', port]);
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`cannot listen on 127.0.0.1:${port}: port ${port} is already in use`);
    await first.stop();
  });
});
