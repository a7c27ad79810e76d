import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect } from 'vitest';
import { test } from '../testing/vitest-fixtures.js';
import { firstRecord, formatSignatures, formatsMatching, otherFormatHint } from './detect.js';
import { itemImporters, pairwiseImporters, resultsImporters } from './index.js';

const examples = resolve(__dirname, '../../examples');

/** The shipped example of each format (docs/formats.md runs a command on each). */
const exampleOf: Record<string, string> = {
  items: 'items.jsonl',
  healthbench: 'healthbench/examples.jsonl',
  researchrubrics: 'researchrubrics/tasks.jsonl',
  rar: 'rar/rar.jsonl',
  rubrichub: 'rubrichub/rubrichub.jsonl',
  drb2: 'drb2/tasks.jsonl',
  advancedif: 'advancedif/sample.jsonl',
  biggen: 'biggen/instances.json',
  prbench: 'prbench/tasks.jsonl',
  profbench: 'profbench/reports.jsonl',
  ifeval: 'ifeval/input_data.jsonl',
  'tau-bench': 'tau-bench/trajectories.json',
  multichallenge: 'multichallenge/tasks.jsonl',
  'simple-evals': 'simple-evals/healthbench_allresults.json',
  pairs: 'pairs/pairs.jsonl',
  llmbar: 'llmbar/dataset.json',
  pandalm: 'pandalm/testset.json',
  autoj: 'autoj/pairs.jsonl',
  judgebench: 'judgebench/pairs.jsonl',
};

describe('which format a file looks like', () => {
  test('every registered format has a signature', () => {
    const registered = [...itemImporters.names(), ...pairwiseImporters.names(), ...resultsImporters.names()];
    // `results` is both a results format (score) and an item format (rejudge): one signature.
    expect(formatSignatures.map((signature) => signature.format).sort()).toEqual([...new Set(registered)].sort());
  });

  test.for(Object.entries(exampleOf))('the %s example is recognised as its own format, and named when read as another', async ([format, file]) => {
    const path = join(examples, file);
    const record = await firstRecord(path);
    expect(record, file).toBeDefined();
    const [closest] = formatsMatching(record!);
    expect(closest.signature.format).toBe(format);
    const kind = closest.signature.kind;
    expect(await otherFormatHint(path, format, kind)).toBeUndefined();
    const other = kind === 'pairs' ? (format === 'pairs' ? 'llmbar' : 'pairs') : format === 'items' ? 'healthbench' : 'items';
    const hint = await otherFormatHint(path, other, kind);
    expect(hint).toContain(kind === closest.signature.kind && kind !== 'results' ? `give --format ${format}` : `--format ${format}`);
  });

  test('a record of another kind is sent to its command; a file like no known format gets no hint', async ({ tempDir }) => {
    expect(await otherFormatHint(join(examples, 'pairs/pairs.jsonl'), 'items', 'items')).toMatch(/look like rubricate pairs .*: it is read by `rubricate compare --format pairs`$/);
    const unknown = join(tempDir, 'unknown.jsonl');
    writeFileSync(unknown, `${JSON.stringify({ question_text: 'q', answer_text: 'a' })}\n`);
    expect(await otherFormatHint(unknown, 'items', 'items')).toBeUndefined();
  });
});
