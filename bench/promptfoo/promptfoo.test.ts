import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSimulator, type SimulatorHandle } from '../simulator/server.js';
import { simulatedVerdict } from '../simulator/verdict.js';
import { buildPromptfooConfig, promptfooConfigYaml, readPromptfooOutput, type PromptfooItem } from './config.js';
import { defaultPromptfooInstallDirectory, ensurePromptfoo, isPromptfooInstalled } from './install.js';
import { promptfooEnvironment, runPromptfoo } from './run.js';
import { hangGuard } from '../../src/testing/hang-guard.js';

const items: PromptfooItem[] = [
  {
    id: 'fever',
    response: 'Rest, drink fluids.\n\n  Indented line: "quoted" {{ not a var }} <Output> and # hash',
    criteria: ['Recommends rest', 'Mentions: fluids, "water" or juice'],
  },
  { id: 'sleep', response: '42', criteria: ['Gives a number', 'Uses the {% if %} syntax'] },
];

describe('promptfoo config', () => {
  it('echoes each response through the prompt {{response}} with one llm-rubric per criterion, shielding template syntax', () => {
    const config = buildPromptfooConfig(items);
    expect(config.prompts).toEqual(['{{response}}']);
    expect(config.providers).toEqual(['echo']);
    expect(config.tests).toEqual([
      {
        description: 'fever',
        vars: { response: `{% raw %}${items[0].response}{% endraw %}` },
        assert: [
          { type: 'llm-rubric', value: 'Recommends rest' },
          { type: 'llm-rubric', value: 'Mentions: fluids, "water" or juice' },
        ],
      },
      {
        description: 'sleep',
        vars: { response: '42' },
        assert: [
          { type: 'llm-rubric', value: 'Gives a number' },
          { type: 'llm-rubric', value: '{% raw %}Uses the {% if %} syntax{% endraw %}' },
        ],
      },
    ]);
  });

  it('serialises to YAML that reads back to exactly the same texts', () => {
    expect(parse(promptfooConfigYaml(items))).toEqual(buildPromptfooConfig(items));
  });

  it('runs promptfoo offline: dummy key, simulator base URL, telemetry and updates off, no inherited secrets', () => {
    const environment = promptfooEnvironment('http://127.0.0.1:9/v1', '/somewhere/home', 1);
    expect(environment).toMatchObject({
      OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      OPENAI_API_KEY: 'sk-simulated-judge',
      PROMPTFOO_CONFIG_DIR: '/somewhere/home',
      PROMPTFOO_DISABLE_TELEMETRY: '1',
      PROMPTFOO_DISABLE_UPDATE: '1',
      PROMPTFOO_ASSERTIONS_MAX_CONCURRENCY: '1',
    });
    expect(environment.NODE_OPTIONS).toBeUndefined();
    expect(environment.ANTHROPIC_API_KEY).toBeUndefined();
  });
});

describe('reading promptfoo output', () => {
  function row(testIdx: number, passes: boolean[], extra: Record<string, unknown> = {}) {
    return {
      testIdx,
      promptIdx: 0,
      success: passes.every(Boolean),
      gradingResult: {
        pass: passes.every(Boolean),
        componentResults: passes.map((pass, index) => ({
          pass,
          score: pass ? 1 : 0,
          reason: `reason ${index}`,
          assertion: { type: 'llm-rubric', value: 'ignored' },
          tokensUsed: { numRequests: 1 },
        })),
      },
      ...extra,
    };
  }
  const expected = items.map((item) => item.criteria.map((criterion) => simulatedVerdict(criterion, item.response)));

  it('maps rows by test index and component order, and finds no mismatch when they agree', () => {
    // Rows in a different order than the tests, as promptfoo's concurrency may write them.
    const output = { results: { results: [row(1, expected[1]), row(0, expected[0])] } };
    const read = readPromptfooOutput(JSON.stringify(output), items);
    if ('error' in read) throw new Error(read.error);
    expect(read.verdicts.get('fever')).toEqual(expected[0]);
    expect(read.verdicts.get('sleep')).toEqual(expected[1]);
    expect(read.mismatches).toEqual([]);
    expect(read.reportedRequests).toBe(4);
  });

  it('reports a flipped verdict and a missing one as mismatches, and counts errored rows', () => {
    const flipped = [!expected[0][0], expected[0][1]];
    const output = { results: { results: [row(0, flipped), { testIdx: 1, error: 'provider failed', gradingResult: null }] } };
    const read = readPromptfooOutput(JSON.stringify(output), items);
    if ('error' in read) throw new Error(read.error);
    expect(read.mismatches).toEqual([
      { itemId: 'fever', criterionIndex: 0, expected: expected[0][0], actual: flipped[0], reason: 'reason 0' },
      { itemId: 'sleep', criterionIndex: 0, expected: expected[1][0], actual: null, reason: undefined },
      { itemId: 'sleep', criterionIndex: 1, expected: expected[1][1], actual: null, reason: undefined },
    ]);
    expect(read.errors).toBe(1);
  });

  it('explains unreadable output instead of throwing', () => {
    expect(readPromptfooOutput('{oops', items)).toMatchObject({ error: expect.stringContaining('not JSON') });
    expect(readPromptfooOutput('{"results": {}}', items)).toEqual({ error: 'promptfoo output has no results.results array' });
  });
});

describe('installation failures', () => {
  let folder: string;
  beforeAll(() => {
    folder = mkdtempSync(path.join(os.tmpdir(), 'rubricate-promptfoo-test-'));
  });
  afterAll(() => {
    rmSync(folder, { recursive: true, force: true });
  });

  it('come back as a skip reason, not an exception', async () => {
    // A regular file where the install folder should go: the folder cannot be created.
    const blocker = path.join(folder, 'not-a-folder');
    writeFileSync(blocker, 'x');
    const install = await ensurePromptfoo({ installDirectory: path.join(blocker, 'promptfoo') });
    expect(install).toMatchObject({ ok: false, reason: expect.stringContaining('cannot prepare') });
    const run = await runPromptfoo({ items, simulatorUrl: 'http://127.0.0.1:9/v1', concurrency: 1, installDirectory: path.join(blocker, 'promptfoo') });
    expect(run.skipped).toMatch(/cannot prepare/);
    expect(run.calls).toBe(0);
    expect(run.verdicts.size).toBe(0);
  });
});

// Installing takes minutes and 1.4 GB, so this runs only where an install already exists
// (`node --import tsx bench/promptfoo/main.ts '{"installOnly": true}'` makes one).
const installed = isPromptfooInstalled();
if (!installed) console.warn(`skipping the live promptfoo run: no promptfoo install in ${defaultPromptfooInstallDirectory()}`);
describe.skipIf(!installed)('live promptfoo run against the simulator', () => {
  let simulator: SimulatorHandle;
  beforeAll(async () => {
    simulator = await startSimulator({ fixedMs: 5 });
  });
  afterAll(async () => {
    await simulator.close();
  });

  it('grades every criterion once, with verdicts equal to the simulator\'s', { timeout: hangGuard(180_000) }, async () => {
    const result = await runPromptfoo({ items, simulatorUrl: simulator.url, concurrency: 2, measureStartup: false });
    expect(result.skipped).toBeUndefined();
    expect(result.calls).toBe(4);
    expect(result.mismatches).toEqual([]);
    for (const item of items) expect(result.verdicts.get(item.id)).toEqual(item.criteria.map((criterion) => simulatedVerdict(criterion, item.response)));
    expect(result.errors).toBe(0);
    expect(result.wallMs).toBeGreaterThan(0);
    // A Node CLI that loads promptfoo costs well over 100 ms of CPU.
    expect(result.cpuMs).toBeGreaterThan(100);
    expect(result.inputTokens).toBe(simulator.stats().byDialect.promptfoo?.inputTokens);
  });
});
