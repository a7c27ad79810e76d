/**
 * Parity with Google's IFEval checker on its own data: the 541 prompts of
 * input_data.jsonl and the GPT-4 responses the authors released
 * (input_response_data_gpt4_20231107_145030.jsonl).
 *
 * Reference figures. Google's current checker gives, per instruction, exactly our
 * verdicts: strict 417/541 prompts and 698/834 instructions, loose 431/541 and 714/834
 * (checked verdict by verdict against the official checking logic run under NLTK 3.8 and
 * langdetect 1.0.9, and in aggregate against a third-party run of the official code
 * published together with its output files).
 *
 * The paper reports 76.89 / 83.57 (strict) and 79.30 / 85.37 (loose) for this file,
 * i.e. 416/541, 697/834, 429/541, 712/834. The 2023 checker that produced them replaced
 * a `keywords:letter_frequency` letter outside a–z by a random letter; two prompts ask
 * for "#" (key 1122) and "!" (key 1129). The paper's run drew letters that failed 1122 in
 * both modes and 1129 in loose mode; the current checker counts "#" and "!" as given,
 * and so do we. Flipping exactly those three verdicts reproduces the published numbers.
 */

import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ifevalImporter } from '../formats/ifeval.js';
import type { Item } from '../rubric/schema.js';
import { ifevalMetrics, instructionIdOf, type IfevalPromptResult } from './ifeval-metrics.js';
import { runCheck } from './registry.js';
import type { CheckMode } from './types.js';
import { dataPath, haveData } from '../testing/data.js';

const dataFolder = dataPath('ifeval');
const inputFile = path.join(dataFolder, 'input_data.jsonl');
const responsesFile = path.join(dataFolder, 'input_response_data_gpt4_20231107_145030.jsonl');
const available = haveData(inputFile, 'IFEval parity (src/checks/ifeval-parity.test.ts)') && haveData(responsesFile, 'IFEval parity (src/checks/ifeval-parity.test.ts)');
if (!available) console.log(`IFEval parity test skipped: ${dataFolder} not found`);

async function loadItems(): Promise<Item[]> {
  const items: Item[] = [];
  for await (const record of ifevalImporter.read(inputFile, { responses: responsesFile })) {
    if (record.kind !== 'item') throw record.error;
    items.push(record.item);
  }
  return items;
}

function grade(items: Item[], mode: CheckMode): Map<string, IfevalPromptResult> {
  const results = new Map<string, IfevalPromptResult>();
  for (const item of items) {
    const prompt = item.prompt[0].content;
    results.set(item.id, {
      instructionIds: item.rubric.criteria.map((criterion) => instructionIdOf(criterion.id)),
      followed: item.rubric.criteria.map((criterion) => runCheck(criterion.check!, item.response, { prompt, mode }).passed),
    });
  }
  return results;
}

function followedOf(results: Map<string, IfevalPromptResult>, key: string, instructionId: string): boolean {
  const result = results.get(key)!;
  return result.followed[result.instructionIds.indexOf(instructionId)];
}

/** Results with the given instructions marked as not followed (the paper's random-letter draws). */
function withFailures(results: Map<string, IfevalPromptResult>, failures: Array<[string, string]>): IfevalPromptResult[] {
  return [...results.entries()].map(([key, result]) => ({
    instructionIds: result.instructionIds,
    followed: result.followed.map((followed, index) =>
      failures.some(([failedKey, id]) => failedKey === key && result.instructionIds[index] === id) ? false : followed,
    ),
  }));
}

const percent = (value: number) => (value * 100).toFixed(2);

describe.skipIf(!available)('IFEval parity on the GPT-4 response file', () => {
  it('matches the official checker and, with its random letters, the published accuracies', async () => {
    const items = await loadItems();
    expect(items).toHaveLength(541);
    const strict = grade(items, 'strict');
    const loose = grade(items, 'loose');

    const strictMetrics = ifevalMetrics([...strict.values()]);
    const looseMetrics = ifevalMetrics([...loose.values()]);
    expect([strictMetrics.prompts.correct, strictMetrics.instructions.correct]).toEqual([417, 698]);
    expect([looseMetrics.prompts.correct, looseMetrics.instructions.correct]).toEqual([431, 714]);
    expect(strictMetrics.instructions.total).toBe(834);

    // The verdicts the reconciliation relies on: "#" and "!" counted literally and passing,
    // and the loose sentence count of key 1174 failing as in the official run.
    const letter = 'keywords:letter_frequency';
    expect(followedOf(strict, '1122', letter)).toBe(true);
    expect(followedOf(loose, '1122', letter)).toBe(true);
    expect(followedOf(loose, '1129', letter)).toBe(true);
    expect(followedOf(loose, '1174', 'length_constraints:number_sentences')).toBe(false);

    const publishedStrict = ifevalMetrics(withFailures(strict, [['1122', letter]]));
    const publishedLoose = ifevalMetrics(withFailures(loose, [['1122', letter], ['1129', letter]]));
    expect(percent(publishedStrict.prompt_level_accuracy)).toBe('76.89');
    expect(percent(publishedStrict.instruction_level_accuracy)).toBe('83.57');
    expect(percent(publishedLoose.prompt_level_accuracy)).toBe('79.30');
    expect(percent(publishedLoose.instruction_level_accuracy)).toBe('85.37');
  });
});
