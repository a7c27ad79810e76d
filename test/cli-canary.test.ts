/**
 * `rubricate canary` end to end on the loopback fake judge: a baseline pinned on the first run,
 * a rerun of the unchanged judge quiet, and a provider that starts answering as another snapshot
 * (its reply's `model`) with worse verdicts caught: the identity change, the agreement drop and
 * the flips, exit 3 and a report. Every verdict carries the model the reply named.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { batchedVerdicts, binaryVerdict, type FakeJudgeAction, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const golden = resolve(projectRoot, 'examples/canary/golden.jsonl');
const labelsFile = resolve(projectRoot, 'examples/canary/labels.jsonl');
const readLines = (file: string) => readFileSync(file, 'utf8').trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);

const itemByResponse = new Map(readLines(golden).map((item) => [String(item.response), String(item.id)]));
const labels = new Map(readLines(labelsFile).map((line) => [String(line.id), line.labels as Record<string, boolean>]));
/** The pinned judge's two mistakes: it agrees with the labels everywhere else. */
const mistakes = new Set(['g1/c1', 'g5/c3']);

/** A judge answering as `model`, deciding each criterion with `decide(item, criterion)`. */
function judgeScript(model: string | undefined, decide: (item: string, criterion: string) => boolean) {
  return (request: FakeJudgeRequest): FakeJudgeAction => {
    const item = itemByResponse.get(request.response ?? '');
    if (item === undefined) return { status: 400, body: { error: { message: 'not a golden response' } } };
    const content = request.criteria.length === 1 ? binaryVerdict(decide(item, request.criteria[0].id)) : batchedVerdicts(request.criteria, (criterion) => decide(item, criterion.id));
    return { content, ...(model ? { model } : {}) };
  };
}
const pinnedJudge = (item: string, criterion: string) => labels.get(item)![criterion] !== mistakes.has(`${item}/${criterion}`);

describe('rubricate canary', { timeout: 60_000 }, () => {
  test('pins, stays quiet on the unchanged judge, and catches a changed snapshot with an agreement drop', async ({ fakeJudge, tempDir }) => {
    const baseline = join(tempDir, 'canary');
    const args = ['canary', '--golden', golden, '--labels', labelsFile, '--baseline', baseline, '--judge', 'openai:canary-judge', '--judge-base-url', fakeJudge.baseUrl];
    fakeJudge.setScript(judgeScript(undefined, pinnedJudge));
    const pinned = await runCliInProcess(args);
    expect(pinned.code).toBe(0);
    expect(pinned.stderr).toContain('baseline pinned');
    expect(readLines(join(baseline, 'baseline.json'))[0]).toMatchObject({ identity: { judge: 'openai:canary-judge', resolved_models: ['canary-judge'] }, agreement: { accuracy: 38 / 40 } });

    const asked = fakeJudge.requests.length;
    const rerun = await runCliInProcess(args);
    expect(rerun.code).toBe(0);
    expect(rerun.stderr).toContain('no drift');
    expect(fakeJudge.requests.length).toBeGreaterThan(asked);
    expect(existsSync(join(baseline, 'drift-report.json'))).toBe(false);

    fakeJudge.setScript(judgeScript('canary-judge-2025-02-01', () => true));
    const drifted = await runCliInProcess(args);
    expect(drifted.code).toBe(3);
    expect(drifted.stderr).toContain('DRIFT');
    const report = JSON.parse(readFileSync(join(baseline, 'drift-report.json'), 'utf8')) as { identity: { changed: string[]; current: { resolved_models: string[] } }; agreement: { current: number; inside: boolean }; flips: { flipped: number } };
    expect(report.identity.changed).toEqual(['resolved_models']);
    expect(report.identity.current.resolved_models).toEqual(['canary-judge-2025-02-01']);
    const labelledMet = [...labels.values()].flatMap((item) => Object.values(item)).filter(Boolean).length;
    expect(report.agreement).toMatchObject({ current: labelledMet / 40, inside: false });
    const pinnedNotMet = [...labels].flatMap(([item, criteria]) => Object.keys(criteria).filter((criterion) => !pinnedJudge(item, criterion))).length;
    expect(report.flips.flipped).toBe(pinnedNotMet);
    for (const line of readLines(join(baseline, 'latest-results.jsonl'))) {
      for (const criterion of line.criteria as Array<Record<string, unknown>>) expect(criterion.judge_model).toBe('canary-judge-2025-02-01');
    }
  });

  test('a snapshot change alone is drift; --accept pins the new judge, which is then quiet', async ({ fakeJudge, tempDir }) => {
    const baseline = join(tempDir, 'canary');
    const args = ['canary', '--golden', golden, '--labels', labelsFile, '--baseline', baseline, '--judge', 'openai:canary-judge', '--judge-base-url', fakeJudge.baseUrl];
    fakeJudge.setScript(judgeScript('canary-judge-2024-07-18', pinnedJudge));
    expect((await runCliInProcess(args)).code).toBe(0);
    fakeJudge.setScript(judgeScript('canary-judge-2024-10-21', pinnedJudge));
    const rotated = await runCliInProcess(args);
    expect(rotated.code).toBe(3);
    expect(rotated.stderr).toContain('judge identity: resolved_models changed from ["canary-judge-2024-07-18"] to ["canary-judge-2024-10-21"]');
    expect(rotated.stderr).not.toContain('left the baseline');
    expect(rotated.stderr).not.toContain('flipped');
    expect((await runCliInProcess([...args, '--accept'])).stderr).toContain('baseline re-pinned');
    const after = await runCliInProcess(args);
    expect(after.code).toBe(0);
    expect(after.stderr).toContain('no drift (canary-judge-2024-10-21;');
  });

  test('cached replies are refused, and a changed golden set must be pinned again', async ({ tempDir }) => {
    const baseline = join(tempDir, 'canary');
    const refused = await runCliInProcess(['canary', '--golden', golden, '--labels', labelsFile, '--baseline', baseline, '--judge', 'scripted', '--cache', join(tempDir, 'cache.sqlite')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('leave out --cache and --store');
    const pinned = await runCliInProcess(['canary', '--golden', golden, '--labels', labelsFile, '--baseline', baseline, '--judge', 'scripted']);
    expect(pinned.stderr).toContain('[made-up verdicts: no model was asked]');
    const other = await runCliInProcess(['canary', '--golden', golden, '--labels', resolve(projectRoot, 'examples/canary/golden.jsonl'), '--baseline', baseline, '--judge', 'scripted']);
    expect(other.code).toBe(2);
    expect(other.stderr).toContain('the golden items or labels changed');
  });
});
