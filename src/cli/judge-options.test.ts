import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { serverPersonality } from '../testing/fake-openai-servers.js';
import { test } from '../testing/vitest-fixtures.js';
import { runCli } from './main.js';
import { captureOutput } from './in-process.js';

let directory: string;
let itemsFile: string;


test.beforeAll(async ({ fileTempDir }) => {
  directory = fileTempDir;
  itemsFile = path.join(directory, 'items.jsonl');
  const items = [0, 1].map((index) => JSON.stringify({ id: `q${index}`, prompt: 'How do I store insulin?', response: `In the fridge (${index}).`, rubric: { criteria: [{ text: 'Says to refrigerate unopened insulin', points: 2 }] } }));
  await writeFile(itemsFile, `${items.join('\n')}\n`);
});

describe('judge flags on the command line', () => {
  test('--judge-header, --judge-extra-body and --reasoning-effort reach every request and are recorded with secrets redacted', async ({ startJudge }) => {
    const fake = await startJudge(serverPersonality('vllm', { thinking: 'field' }));
    const out = path.join(directory, 'flags.jsonl');
    const { context } = captureOutput();
    const code = await runCli(
      ['grade', '--input', itemsFile, '--judge', 'openai:Qwen3-8B', '--judge-base-url', fake.baseUrl, '--no-cache', '--out', out, '--quiet',
        '--judge-header', 'X-Api-Key=tenant-secret-4567', '--judge-header', 'x-route=blue',
        '--judge-extra-body', '{"chat_template_kwargs": {"enable_thinking": false}}', '--reasoning-effort', 'low', '--judge-profile', 'vllm'],
      context,
    );
    expect(code).toBe(0);
    expect(fake.requests).toHaveLength(2);
    for (const request of fake.requests) {
      expect(request.headers['x-api-key']).toBe('tenant-secret-4567');
      expect(request.headers['x-route']).toBe('blue');
      expect(request.body).toMatchObject({ chat_template_kwargs: { enable_thinking: false }, reasoning_effort: 'low' });
    }
    const text = await readFile(out, 'utf8');
    expect(text).not.toContain('tenant-secret-4567');
    const line = JSON.parse(text.split('\n')[0]);
    expect(line.judge.settings).toEqual({
      profile: 'vllm',
      headers: { 'x-api-key': '[REDACTED]', 'x-route': 'blue' },
      extra_body: { chat_template_kwargs: { enable_thinking: false } },
      reasoning_effort: 'low',
    });
  });

  test.for([
    [['--seed', '1.5'], /--seed: seed must be an integer, got "1.5"/],
    [['--temperature', '2.5'], /--temperature: temperature must be between 0 and 2, got "2.5"/],
    [['--judge-extra-body', '[1]'], /--judge-extra-body must be a JSON object/],
    [['--judge-header', 'no-equals-sign'], /--judge-header must be NAME=VALUE/],
  ] as Array<[string[], RegExp]>)('refuses %j before any call (exit 2)', async ([flags, message], { startJudge }) => {
    const fake = await startJudge(serverPersonality('openai'));
    const { output, context } = captureOutput();
    const code = await runCli(['grade', '--input', itemsFile, '--judge', 'openai:gpt-4o', '--judge-base-url', fake.baseUrl, '--no-cache', '--out', path.join(directory, 'refused.jsonl'), '--quiet', ...flags], context);
    expect(code).toBe(2);
    expect(output.stderr.join('\n')).toMatch(message);
    expect(fake.requests).toHaveLength(0);
  });

  test('a request the judge never accepts stops the run with exit 4 and the server message', async ({ startJudge }) => {
    const fake = await startJudge(serverPersonality('openai-reasoning', { models: ['o3'] }));
    const { output, context } = captureOutput();
    const code = await runCli(['grade', '--input', itemsFile, '--judge', 'openai:o3', '--judge-base-url', fake.baseUrl, '--no-cache', '--out', path.join(directory, 'o3.jsonl'), '--quiet', '--verdict', 'probability'], context);
    expect(code).toBe(4);
    expect(output.stderr.join('\n')).toMatch(/'logprobs' is not supported with this model/);
  });
});
