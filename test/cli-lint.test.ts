/**
 * `rubricate lint` end to end: every input `grade` reads, findings as a table and as JSON lines
 * with fixed keys, exit 3 on errors; `grade --lint` refuses to start on them, naming them.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { lintRuleIds } from '../src/lint/types.js';
import { binaryVerdict } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const examples = resolve(projectRoot, 'examples');
const fixture = resolve(projectRoot, 'src/lint/fixtures/rubrics.jsonl');
const findingKeys = ['rule', 'severity', 'rubric_id', 'item_id', 'criterion_id', 'related_criterion_id', 'message', 'fix'];

describe('rubricate lint', { timeout: 60_000 }, () => {
  test('a rubrics file: every finding in the table and the JSON lines, exit 3 on errors', async ({ tempDir }) => {
    const out = join(tempDir, 'findings.jsonl');
    const run = await runCliInProcess(['lint', '--format', 'rubrics', '--input', fixture, '--out', out]);
    expect(run.code).toBe(3);
    const findings = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    for (const finding of findings) expect(Object.keys(finding)).toEqual(findingKeys);
    expect(new Set(findings.map((finding) => finding.rule))).toEqual(new Set(lintRuleIds));
    const contradiction = findings.find((finding) => finding.rule === 'contradictory-criteria');
    expect(contradiction).toMatchObject({ severity: 'error', rubric_id: 'flaw-contradiction', item_id: null, criterion_id: 'c2', related_criterion_id: 'c1' });
    expect(run.stdout).toContain(`error    contradictory-criteria`);
    expect(run.stdout).toContain(`fix: ${String(contradiction?.fix)}`);
    const errors = findings.filter((finding) => finding.severity === 'error').length;
    const rubrics = readFileSync(fixture, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { criteria: unknown[] });
    const criteria = rubrics.reduce((total, rubric) => total + rubric.criteria.length, 0);
    expect(run.stderr).toContain(`lint: ${rubrics.length} rubrics, ${criteria} criteria: ${errors} errors, ${findings.length - errors} warnings`);
  });

  test('items of a benchmark format, with no responses: clean rubrics exit 0', async () => {
    const run = await runCliInProcess(['lint', '--format', 'healthbench', '--input', join(examples, 'healthbench/examples.jsonl')]);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^lint: 2 rubrics, \d+ criteria: 0 errors, 0 warnings/);
  });

  test('items sharing a rubric through --rubrics are linted once, under the first item; --generic reads topic words', async ({ tempDir }) => {
    const rubrics = join(tempDir, 'rubrics.jsonl');
    const items = join(tempDir, 'items.jsonl');
    writeFileSync(rubrics, `${JSON.stringify({ id: 'shared', criteria: [{ id: 'c1', text: 'States that the capital of Australia is Canberra.', points: 1 }] })}\n`);
    writeFileSync(items, ['first', 'second'].map((id) => JSON.stringify({ id, prompt: 'Which city?', response: 'Canberra.', rubric_id: 'shared' })).join('\n'));
    const plain = await runCliInProcess(['lint', '--input', items, '--rubrics', rubrics]);
    expect(plain.code).toBe(0);
    expect(plain.stderr).toMatch(/^lint: 1 rubric, 1 criteria: 0 errors, 0 warnings/);
    const out = join(tempDir, 'findings.jsonl');
    const generic = await runCliInProcess(['lint', '--input', items, '--rubrics', rubrics, '--generic', '--out', out]);
    expect(generic.code).toBe(0);
    expect(readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)).toMatchObject([{ rule: 'topic-specific-in-generic', severity: 'warning', item_id: 'first', criterion_id: 'c1' }]);
  });

  test('grade --lint refuses to start on lint errors, naming them; a clean input is graded', async ({ tempDir }) => {
    const items = join(tempDir, 'items.jsonl');
    const out = join(tempDir, 'results.jsonl');
    writeFileSync(items, `${JSON.stringify({ id: 'a', prompt: 'Is it safe?', response: 'Yes.', rubric: { id: 'r', criteria: [{ id: 'c1', text: 'Mentions the side effects.', points: 2 }, { id: 'c2', text: 'Does not mention the side effects.', points: 2 }] } })}\n`);
    const refused = await runCliInProcess(['grade', '--input', items, '--judge', 'scripted', '--no-cache', '--lint', '--out', out]);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('[RUBRIC_LINT_FAILED]');
    expect(refused.stderr).toContain('[contradictory-criteria] criterion c2 and c1 of rubric r (item a)');
    expect(existsSync(out)).toBe(false);
    const graded = await runCliInProcess(['grade', '--input', join(examples, 'items.jsonl'), '--judge', 'scripted', '--no-cache', '--quiet', '--lint', '--out', out]);
    expect(graded.code).toBe(0);
    expect(readFileSync(out, 'utf8').trim().split('\n').length).toBeGreaterThan(0);
  });

  test('serve --lint stops the start on a --rubrics file with lint errors', async () => {
    const run = await runCliInProcess(['serve', '--judge', 'scripted', '--no-cache', '--port', '0', '--rubrics', fixture, '--lint']);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('[RUBRIC_LINT_FAILED]');
    expect(run.stderr).toContain('[contradictory-criteria] criterion c2 and c1 of rubric flaw-contradiction');
  });

  test('--meta: the judge grades each rubric on the meta-rubric; its findings are warnings naming the rubric', async ({ fakeJudge, tempDir }) => {
    const rubrics = join(tempDir, 'rubrics.jsonl');
    writeFileSync(rubrics, [
      { id: 'intent', criteria: [{ id: 'c1', text: 'The assistant intends to help.', points: 2 }] },
      { id: 'plain', criteria: [{ id: 'c1', text: 'Names the capital city.', points: 2 }] },
    ].map((rubric) => JSON.stringify(rubric)).join('\n'));
    // A judge that finds an unverifiable claim where a criterion speaks of intentions, and every other rubric sound.
    fakeJudge.setScript((request) => {
      const flawed = request.criteria[0].id === 'unverifiable_claim' ? (request.response ?? '').includes('intends') : ['grounding_specified', 'atomicity'].includes(request.criteria[0].id);
      return { content: binaryVerdict(flawed) };
    });
    const out = join(tempDir, 'findings.jsonl');
    const run = await runCliInProcess(['lint', '--format', 'rubrics', '--input', rubrics, '--meta', '--judge', 'openai:meta-judge', '--judge-base-url', fakeJudge.baseUrl, '--no-cache', '--out', out]);
    expect(run.code).toBe(0);
    const findings = readFileSync(out, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(findings.map((finding) => [finding.rubric_id, finding.rule, finding.severity])).toEqual([['intent', 'meta-unverifiable-claim', 'warning']]);
    expect(run.stderr).toContain('meta-rubric (rubricate-meta-rubric/v1, judge openai:meta-judge): 1 finding');
    expect(fakeJudge.requests.length).toBe(8);
    const scripted = await runCliInProcess(['lint', '--format', 'rubrics', '--input', rubrics, '--meta', '--judge', 'scripted', '--no-cache']);
    expect(scripted.stderr).toContain('[made-up verdicts: no model was asked]');
    const refused = await runCliInProcess(['lint', '--format', 'rubrics', '--input', rubrics, '--judge', 'scripted']);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--judge applies with --meta');
  });

  test('--format rubrics refuses the item side inputs by name', async ({ tempDir }) => {
    const run = await runCliInProcess(['lint', '--format', 'rubrics', '--input', fixture, '--responses', join(tempDir, 'r.jsonl')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('--format rubrics reads rubrics alone: leave out --responses');
  });
});
