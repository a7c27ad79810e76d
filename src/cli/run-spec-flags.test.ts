/**
 * The one flag table against the run spec: every setting of the schema has a flag (or is
 * library-only, by name), a model flag a backend does not read is refused before any request,
 * and each setting a backend reads reaches its requests.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { unreadSettings } from '../judges/registry.js';
import { modelSpecSchema, runSpecSchema, settingAt, settingPaths } from '../spec/run-spec.js';
import { startFakeAnthropic } from '../testing/fake-anthropic.js';
import { startFakeGemini } from '../testing/fake-gemini.js';
import { serverPersonality } from '../testing/fake-openai-servers.js';
import { binaryVerdict } from '../testing/fake-judge.js';
import { test } from '../testing/vitest-fixtures.js';
import { sampleFlagValue, sampleSettings } from '../testing/run-spec-samples.js';
import { runCliCaptured } from './in-process.js';
import { flagOfSetting, flagPaths, runSpecFromFlags } from './run-spec-flags.js';

/** Settings only a library user sets (tests and benchmarks shorten retry delays); every other one has a flag. */
const libraryOnly = ['calls.retryBaseDelayMs', 'calls.retryMaxDelayMs'];

/** A valid value of each model flag, as typed on the command line. */
const modelFlagValues = Object.fromEntries(flagPaths.model.map((path) => [path, sampleFlagValue(path)]));

const backends = ['openai:m', 'azure:d', 'anthropic:m', 'gemini:m', 'gguf:/nowhere/model.gguf', 'none'] as const;

function writeItems(directory: string): string {
  const file = join(directory, 'items.jsonl');
  writeFileSync(file, `${JSON.stringify({ id: 'q1', prompt: 'Is 38°C a fever?', response: 'Yes, a mild one; drink fluids.', rubric: { criteria: [{ id: 'fever', text: 'Says 38°C is a low-grade fever', points: 5 }] } })}\n`);
  return file;
}

describe('the run spec and its flags', () => {
  test('every setting of the schema has exactly one flag, and a flag maps to a setting that exists', () => {
    const covered = (path: string, rows: readonly string[]) => rows.filter((row) => path === row || path.startsWith(`${row}.`)).length;
    const runSettings = settingPaths(runSpecSchema).filter((path) => path !== 'judges' && path !== 'models' && !libraryOnly.includes(path));
    for (const path of runSettings) expect(covered(path, flagPaths.run), path).toBe(1);
    for (const path of settingPaths(modelSpecSchema).filter((path) => path !== 'model')) expect(covered(path, flagPaths.model), path).toBe(1);
    const leaves = new Set(settingPaths(runSpecSchema));
    for (const row of flagPaths.run) expect(leaves.has(row), row).toBe(true);
    for (const path of [...flagPaths.model, ...flagPaths.run]) expect(sampleSettings, `a sample value for ${path}`).toHaveProperty([path]);
  });

  test('a flag left out leaves its setting absent; given, it is in the spec the way the schema holds it', () => {
    const spec = runSpecFromFlags({ judge: ['openai:m'], judgeHeader: { 'x-run': '7' }, timeout: 2.5, criteriaPerCall: 'all', text: false });
    expect(spec.judges).toEqual([{ model: 'openai:m', endpoint: { headers: { 'x-run': '7' } } }]);
    expect(spec.calls).toEqual({ timeoutMs: 2500 });
    expect(spec.plan).toEqual({ criteriaPerCall: 'all' });
    expect(spec.omitText).toBe(true);
    expect(settingAt(runSpecFromFlags({}), 'calls.concurrency')).toBeUndefined();
  });

  test('each model flag a backend does not read exits 2 before any request, naming the flag and the backend', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(() => ({ content: binaryVerdict(true) }));
    const input = writeItems(tempDir);
    let refused = 0;
    for (const spec of backends) {
      const prefix = spec.split(':')[0];
      for (const [path, value] of Object.entries(modelFlagValues)) {
        const model = { model: spec, ...(() => {
          const nested: Record<string, Record<string, unknown>> = {};
          const [group, field] = path.split('.');
          nested[group] = { [field]: value };
          return nested;
        })() };
        if (unreadSettings(model).length === 0) continue;
        const flag = flagOfSetting(path, 'judge');
        const result = await runCliCaptured(['grade', '--input', input, '--out', join(tempDir, 'out.jsonl'), '--no-cache', '--quiet', '--judge', spec, flag, value]);
        expect(result.code, `${spec} ${flag}: ${result.stderr}`).toBe(2);
        expect(result.stderr).toContain(flag);
        expect(result.stderr).toContain(prefix === 'none' ? '--judge none' : `${prefix}: judges`);
        refused += 1;
      }
      if (prefix === 'gguf' || prefix === 'none') {
        const keyed = await runCliCaptured(['grade', '--input', input, '--out', join(tempDir, 'out.jsonl'), '--no-cache', '--quiet', '--judge', spec, '--judge-api-key', 'sk-unused-key-0123456789']);
        expect(keyed.code).toBe(2);
        expect(keyed.stderr).toContain('--judge-api-key');
      }
    }
    // 14 model flags: openai reads 9, azure 10, anthropic 5, gemini 6, gguf 4, none 0.
    expect(refused).toBe(5 + 4 + 9 + 8 + 10 + 14);
    expect(fake.requests).toHaveLength(0);
  });

  test('the generator\'s flags are refused by the same rule', async ({ tempDir }) => {
    const prompts = join(tempDir, 'prompts.jsonl');
    writeFileSync(prompts, `${JSON.stringify({ id: 'p1', prompt: 'Explain fevers.' })}\n`);
    const result = await runCliCaptured(['generate', '--input', prompts, '--out', join(tempDir, 'rubrics.jsonl'), '--no-cache', '--generator', 'gguf:/nowhere/model.gguf', '--generator-header', 'x-run=7']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--generator-header does not apply to gguf: generators/);
  });

  test('openai: and azure: honour every setting they read: headers, extra body, reply limit, output format, effort, profile, api-version', async ({ startJudge, tempDir }) => {
    const input = writeItems(tempDir);
    const azure = { deployment: 'judge-4o', apiKey: 'azure-key-0123456789' };
    const openai = await startJudge(() => ({ content: binaryVerdict(true) }));
    const azureFake = await startJudge(serverPersonality('azure', { azure }));
    const common = ['--judge-header', 'x-run=7', '--judge-extra-body', '{"x":7}', '--structured-output', 'json_object', '--reasoning-effort', 'low', '--judge-profile', 'generic'];
    for (const [args, fake] of [
      [['--judge', 'openai:m', '--judge-base-url', openai.baseUrl], openai],
      [['--judge', 'azure:judge-4o', '--judge-base-url', azureFake.baseUrl.replace(/\/v1$/, ''), '--judge-api-key', azure.apiKey, '--azure-api-version', '2024-10-21'], azureFake],
    ] as const) {
      const out = join(tempDir, 'results.jsonl');
      const result = await runCliCaptured(['grade', '--input', input, '--out', out, '--no-cache', '--quiet', ...args, ...common]);
      expect(result.code, result.stderr).toBe(0);
      const sent = fake.requests.at(-1)!;
      expect(sent.headers['x-run']).toBe('7');
      expect(sent.body).toMatchObject({ x: 7, reasoning_effort: 'low', response_format: { type: 'json_object' } });
      const line = JSON.parse(readFileSync(out, 'utf8')) as { judge: { settings: Record<string, unknown> } };
      expect(line.judge.settings).toMatchObject({ profile: 'generic', headers: { 'x-run': '7' }, extra_body: { x: 7 }, reasoning_effort: 'low', structured_output: 'json_object' });
      if (fake === azureFake) expect(sent.path).toContain('api-version=2024-10-21');
      // A reply larger than --max-reply-bytes is an error for its criterion, never a verdict.
      const limited = await runCliCaptured(['grade', '--input', input, '--out', out, '--no-cache', '--quiet', '--max-attempts', '1', ...args, '--max-reply-bytes', '20']);
      expect(limited.code).toBe(4);
      expect(readFileSync(out, 'utf8')).toContain('JUDGE_REPLY_TOO_LARGE');
    }
  });

  test('anthropic: and gemini: honour headers, extra body and the reply limit; gemini its thinking budget', async ({ closeAfter, tempDir }) => {
    const input = writeItems(tempDir);
    const anthropic = closeAfter(await startFakeAnthropic(() => ({ input: { explanation: 'ok', criteria_met: true } }), { apiKey: 'anthropic-key-0123456789' }));
    const gemini = closeAfter(await startFakeGemini(() => ({ json: { explanation: 'ok', criteria_met: true } }), { apiKey: 'gemini-key-0123456789' }));
    for (const { args, requests, extraBody, expectBody } of [
      { args: ['--judge', 'anthropic:claude-sonnet-4-5', '--judge-base-url', anthropic.baseUrl, '--judge-api-key', 'anthropic-key-0123456789'], requests: anthropic.requests, extraBody: '{"metadata":{"user_id":"run-7"}}', expectBody: { metadata: { user_id: 'run-7' } } },
      {
        args: ['--judge', 'gemini:gemini-2.5-flash', '--judge-base-url', gemini.baseUrl, '--judge-api-key', 'gemini-key-0123456789', '--thinking-budget', '512'],
        requests: gemini.requests,
        extraBody: '{"generationConfig":{"topK":3}}',
        expectBody: { generationConfig: { topK: 3, thinkingConfig: { thinkingBudget: 512 } } },
      },
    ]) {
      const out = join(tempDir, 'results.jsonl');
      const result = await runCliCaptured(['grade', '--input', input, '--out', out, '--no-cache', '--quiet', ...args, '--judge-header', 'x-run=7', '--judge-extra-body', extraBody]);
      expect(result.code, result.stderr).toBe(0);
      const sent = requests.at(-1)!;
      expect(sent.headers['x-run']).toBe('7');
      expect(sent.body).toMatchObject(expectBody);
      const line = JSON.parse(readFileSync(out, 'utf8')) as { judge: { settings: Record<string, unknown> } };
      expect(line.judge.settings).toMatchObject({ headers: { 'x-run': '7' }, extra_body: JSON.parse(extraBody) });
      const limited = await runCliCaptured(['grade', '--input', input, '--out', out, '--no-cache', '--quiet', '--max-attempts', '1', ...args, '--max-reply-bytes', '20']);
      expect(limited.code).toBe(4);
      expect(readFileSync(out, 'utf8')).toContain('JUDGE_REPLY_TOO_LARGE');
    }
  });

  test('a plan setting the plan does not use is refused by name', async ({ startJudge, tempDir }) => {
    const fake = await startJudge(() => ({ content: binaryVerdict(true) }));
    const input = writeItems(tempDir);
    const base = ['grade', '--input', input, '--out', join(tempDir, 'out.jsonl'), '--no-cache', '--quiet', '--judge', 'openai:m', '--judge-base-url', fake.baseUrl];
    const topLogprobs = await runCliCaptured([...base, '--top-logprobs', '5']);
    expect(topLogprobs.code).toBe(2);
    expect(topLogprobs.stderr).toContain('--top-logprobs');
    const likert = await runCliCaptured([...base, '--likert-levels', '5']);
    expect(likert.code).toBe(2);
    expect(likert.stderr).toContain('--likert-levels');
    const perCall = await runCliCaptured([...base, '--mode', 'per-criterion', '--criteria-per-call', '3']);
    expect(perCall.code).toBe(2);
    expect(perCall.stderr).toContain('--criteria-per-call');
    expect(fake.requests).toHaveLength(0);
  });

  test('compare results carry the judge provenance grade results carry', async ({ startJudge, tempDir }) => {
    const fake = await startJudge((request) => ({ content: /"winner"/.test(request.messages.map((message) => message.content).join('\n')) ? { explanation: 'The first is better.', winner: '1' } : binaryVerdict(true) }));
    const pairs = join(tempDir, 'pairs.jsonl');
    writeFileSync(pairs, `${JSON.stringify({ id: 'p1', prompt: 'Is 38°C a fever?', response_a: 'Yes, a mild one.', response_b: 'No.', label: 'A' })}\n`);
    const flags = ['--judge', 'openai:m', '--judge-base-url', fake.baseUrl, '--judge-header', 'x-run=7', '--judge-extra-body', '{"x":7}', '--judge-profile', 'generic', '--no-cache', '--quiet'];
    const graded = await runCliCaptured(['grade', '--input', writeItems(tempDir), '--out', join(tempDir, 'results.jsonl'), ...flags]);
    const compared = await runCliCaptured(['compare', '--input', pairs, '--out', join(tempDir, 'compare.jsonl'), '--no-swap', ...flags]);
    expect(graded.code, graded.stderr).toBe(0);
    expect(compared.code, compared.stderr).toBe(0);
    const gradeJudge = (JSON.parse(readFileSync(join(tempDir, 'results.jsonl'), 'utf8')) as { judge: Record<string, unknown> }).judge;
    const compareJudge = (JSON.parse(readFileSync(join(tempDir, 'compare.jsonl'), 'utf8')) as { judge: Record<string, unknown> }).judge;
    expect(compareJudge.settings).toEqual(gradeJudge.settings);
    expect(compareJudge.settings).toMatchObject({ profile: 'generic', headers: { 'x-run': '7' }, extra_body: { x: 7 } });
    for (const field of ['id', 'model', 'base_url', 'template_version', 'mode', 'temperature', 'max_tokens']) expect(compareJudge, field).toHaveProperty(field);
  });
});
