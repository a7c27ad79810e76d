import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { normalizeRubric } from '../rubric/normalize.js';
import type { Rubric } from '../rubric/schema.js';
import { dataPath, haveData } from '../testing/data.js';
import { lintRubric } from './lint.js';
import type { LintFinding } from './types.js';

const fixture = fileURLToPath(new URL('./fixtures/rubrics.jsonl', import.meta.url));

function fixtureRubrics(): Rubric[] {
  return readFileSync(fixture, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => normalizeRubric(JSON.parse(line), { file: fixture, line: index + 1 }));
}

/** The rule a fixture criterion (or rubric, as criterion null) was planted with. */
function plantedFlaws(rubrics: readonly Rubric[]): { rubric: string; criterion: string | null; rule: string }[] {
  const planted: { rubric: string; criterion: string | null; rule: string }[] = [];
  for (const rubric of rubrics) {
    if (typeof rubric.metadata?.expect === 'string') planted.push({ rubric: rubric.id, criterion: null, rule: rubric.metadata.expect });
    for (const criterion of rubric.criteria) if (typeof criterion.metadata?.expect === 'string') planted.push({ rubric: rubric.id, criterion: criterion.id, rule: criterion.metadata.expect });
  }
  return planted;
}

describe('rubric lint on planted flaws', () => {
  const rubrics = fixtureRubrics();
  const findings = rubrics.flatMap((rubric) => lintRubric(rubric, null));
  const planted = plantedFlaws(rubrics);

  it('flags every planted flaw with its rule id', () => {
    expect(planted.length).toBeGreaterThanOrEqual(20);
    const missed = planted.filter((flaw) => !findings.some((found) => found.rubric_id === flaw.rubric && found.criterion_id === flaw.criterion && found.rule === flaw.rule));
    expect(missed).toEqual([]);
  });

  it('covers every static rule', () => {
    expect(new Set(planted.map((flaw) => flaw.rule)).size).toBe(10);
  });

  it('flags at most one sound criterion in twenty', () => {
    const isPlanted = (found: LintFinding) =>
      planted.some((flaw) => flaw.rubric === found.rubric_id && (flaw.criterion === found.criterion_id || (flaw.criterion !== null && flaw.criterion === found.related_criterion_id)));
    const sound = rubrics.flatMap((rubric) => rubric.criteria.filter((criterion) => criterion.metadata?.expect === undefined).map((criterion) => `${rubric.id}/${criterion.id}`));
    const falselyFlagged = new Set(findings.filter((found) => !isPlanted(found)).map((found) => `${found.rubric_id}/${found.criterion_id ?? ''}`));
    expect(sound.length).toBeGreaterThanOrEqual(40);
    expect([...falselyFlagged]).toEqual([]);
  });

  it('names the rubric, the item and the criterion, and gives a fix', () => {
    const [finding] = lintRubric(rubrics[0], 'item-7');
    expect(finding).toMatchObject({ rule: 'contradictory-criteria', severity: 'error', rubric_id: 'flaw-contradiction', item_id: 'item-7', criterion_id: 'c2', related_criterion_id: 'c1' });
    expect(finding.message).toContain('criterion c2 and c1 of rubric flaw-contradiction (item item-7)');
    expect(finding.fix.length).toBeGreaterThan(10);
  });

  it('reads topic words only in rubrics meant for any prompt', () => {
    const specific = normalizeRubric({ id: 'r', criteria: [{ text: 'States that the capital of Australia is Canberra.', points: 1 }] }, { file: 'x', line: 1 });
    expect(lintRubric(specific, null)).toEqual([]);
    expect(lintRubric(specific, null, { generic: true }).map((found) => found.rule)).toEqual(['topic-specific-in-generic']);
  });
});

describe('rubric lint on HealthBench', () => {
  const files = ['healthbench/oss_eval_first100.jsonl', 'healthbench/context_seeking_consensus_hard_104.jsonl'].map((file) => dataPath(file));
  it.skipIf(!files.every((file) => haveData(file, 'rubric lint false-flag rate')))('flags at most one criterion in twenty of the physicians\' rubrics', () => {
    let criteria = 0;
    const flagged = new Set<string>();
    for (const file of files) {
      for (const [index, line] of readFileSync(file, 'utf8').split('\n').filter(Boolean).entries()) {
        const record = JSON.parse(line) as { prompt_id: string; rubrics: { criterion: string; points: number }[] };
        const rubric = normalizeRubric({ id: record.prompt_id, criteria: record.rubrics.map((entry) => ({ text: entry.criterion, points: entry.points })) }, { file, line: index + 1 });
        criteria += rubric.criteria.length;
        for (const found of lintRubric(rubric, null)) flagged.add(`${file}/${rubric.id}/${found.criterion_id ?? ''}`);
      }
    }
    expect(criteria).toBeGreaterThan(1000);
    expect(flagged.size / criteria).toBeLessThanOrEqual(1 / 20);
  });
});
