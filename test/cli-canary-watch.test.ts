/**
 * `grade --canary DIR`: a grading run checked against the canary baseline, on the loopback fake judge.
 * The pinned judge grading again is quiet; the provider answering as another snapshot is caught at
 * the end (the replies' model), a changed setting at the start (before any call), and a folder with
 * no baseline says so rather than checking nothing silently.
 */
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { binaryVerdict, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

const golden = resolve(projectRoot, 'examples/canary/golden.jsonl');
const labelsFile = resolve(projectRoot, 'examples/canary/labels.jsonl');

const answeringAs = (model: string) => (request: FakeJudgeRequest) => ({ content: binaryVerdict((request.response ?? '').length % 2 === 0), model });

describe('grade --canary', () => {
  test('quiet for the pinned judge, warns on a new snapshot and on changed settings, and on a folder with no baseline', async ({ fakeJudge, tempDir }) => {
    const baseline = join(tempDir, 'canary');
    const judge = ['--judge', 'openai:canary-judge', '--judge-base-url', fakeJudge.baseUrl];
    fakeJudge.setScript(answeringAs('canary-judge-2024-07-18'));
    expect((await runCliInProcess(['canary', '--golden', golden, '--labels', labelsFile, '--baseline', baseline, ...judge])).code).toBe(0);

    const grade = (extra: string[]) => runCliInProcess(['grade', '--input', golden, ...judge, '--no-cache', '--quiet', '--out', join(tempDir, 'results.jsonl'), '--force', '--canary', baseline, ...extra]);
    const same = await grade([]);
    expect(same.code).toBe(0);
    expect(same.stderr).not.toContain('canary');

    fakeJudge.setScript(answeringAs('canary-judge-2024-10-21'));
    const rotated = await grade([]);
    expect(rotated.code).toBe(0);
    expect(rotated.stderr).toContain("warning: canary: this run's verdicts came from canary-judge-2024-10-21, which the baseline");
    expect(rotated.stderr).toContain('it pinned canary-judge-2024-07-18');

    fakeJudge.setScript(answeringAs('canary-judge-2024-07-18'));
    const asked = fakeJudge.requests.length;
    const reseeded = await grade(['--seed', '7']);
    expect(reseeded.stderr).toMatch(/warning: canary: the judge differs from the one pinned in .*: settings /);
    expect(reseeded.stderr).not.toContain("this run's verdicts came from");
    expect(fakeJudge.requests.length).toBeGreaterThan(asked);

    const none = await grade(['--canary', join(tempDir, 'elsewhere')]);
    expect(none.stderr).toContain('no baseline is pinned there');
  });
});
