/**
 * HHH alignment as shipped by prometheus-eval (`hhh_alignment_eval.json`): [{source,
 * chosen_instruction, rejected_instruction}], where each field is a complete Prometheus
 * absolute-grading prompt (task description, instruction, response, 1–5 score rubric). We
 * take the instruction, both responses and the rubric out of the prompts.
 *
 * The chosen response is the gold winner. So that the right answer is not always A, it is
 * placed as A or B by a seeded stream (one draw per row, in file order, from
 * `hhhPlacementSeed`): the same file always gives the same placement, and
 * `metadata.chosenPosition` records it.
 */
import { invalidPairRecord, isString, readJsonArrayFile } from './source-files.js';
import { seededRandom } from '../util/random.js';
import type { Criterion, Rubric } from '../rubric/schema.js';
import type { PairwiseImporter } from './types.js';
import type { PairwiseImportRecord } from '../rubric/records.js';
import { isRecord } from '../util/is-record.js';

export const hhhPlacementSeed = 20240221;

const instructionHeading = '###The instruction to evaluate:';
const responseHeading = '###Response to evaluate:';
const rubricHeading = '###Score Rubrics:';
const feedbackHeading = '###Feedback:';

export interface PrometheusPromptParts {
  instruction: string;
  response: string;
  rubricText: string;
}

/** Splits a Prometheus absolute-grading prompt into its instruction, response and rubric; null if a heading is missing or out of order. */
export function parsePrometheusPrompt(prompt: string): PrometheusPromptParts | null {
  const instructionAt = prompt.indexOf(instructionHeading);
  const responseAt = prompt.indexOf(responseHeading, instructionAt);
  const rubricAt = prompt.indexOf(rubricHeading, responseAt);
  const feedbackAt = prompt.indexOf(feedbackHeading, rubricAt);
  if (instructionAt < 0 || responseAt < 0 || rubricAt < 0 || feedbackAt < 0) return null;
  // Prometheus surrounds each section with blank lines; only those are stripped.
  const section = (start: number, end: number) => prompt.slice(start, end).replace(/^\n+/, '').replace(/\n+$/, '');
  return {
    instruction: section(instructionAt + instructionHeading.length, responseAt),
    response: section(responseAt + responseHeading.length, rubricAt),
    rubricText: section(rubricAt + rubricHeading.length, feedbackAt),
  };
}

/**
 * A one-criterion rubric from Prometheus rubric text: "[question]" followed by
 * "Score 1: …" … "Score 5: …" lines becomes an ordinal criterion with those five levels;
 * anything else becomes a plain criterion with the whole text.
 */
export function rubricFromPrometheusText(rubricText: string, id: string): Rubric {
  const question = /^\[([\s\S]*?)\]\s*$/m.exec(rubricText.split(/\nScore 1:/)[0]);
  const levels = [...rubricText.matchAll(/^Score ([1-5]): (.*)$/gm)];
  const criterion: Criterion = {
    id: '1',
    text: question ? question[1].trim() : rubricText.trim(),
    points: 1,
    tags: [],
    kind: 'principle',
  };
  const ordered = levels.map((level) => Number(level[1]));
  if (question && levels.length === 5 && ordered.every((score, index) => score === index + 1)) {
    criterion.scale = { type: 'ordinal', choices: levels.map((level) => ({ label: level[1], description: level[2].trim() })) };
  }
  return { id, criteria: [criterion], metadata: { rubricText } };
}

function toPairRecord(row: unknown, file: string, line: number, chosenFirst: boolean): PairwiseImportRecord {
  if (!isRecord(row)) return invalidPairRecord(file, line, '', 'record must be an object');
  const source = isString(row.source) ? row.source : 'unknown';
  const id = `hhh/${source}/${line}`;
  if (!isString(row.chosen_instruction)) return invalidPairRecord(file, line, 'chosen_instruction', 'chosen_instruction must be a string', id);
  if (!isString(row.rejected_instruction)) return invalidPairRecord(file, line, 'rejected_instruction', 'rejected_instruction must be a string', id);
  const chosen = parsePrometheusPrompt(row.chosen_instruction);
  if (!chosen) return invalidPairRecord(file, line, 'chosen_instruction', 'not a Prometheus grading prompt (instruction, response, rubric and feedback headings)', id);
  const rejected = parsePrometheusPrompt(row.rejected_instruction);
  if (!rejected) return invalidPairRecord(file, line, 'rejected_instruction', 'not a Prometheus grading prompt (instruction, response, rubric and feedback headings)', id);
  if (chosen.instruction !== rejected.instruction) return invalidPairRecord(file, line, 'rejected_instruction', 'chosen and rejected prompts ask different instructions', id);
  if (chosen.rubricText !== rejected.rubricText) return invalidPairRecord(file, line, 'rejected_instruction', 'chosen and rejected prompts use different rubrics', id);
  return {
    kind: 'pair',
    line,
    pair: {
      id,
      prompt: [{ role: 'user', content: chosen.instruction }],
      responseA: chosenFirst ? chosen.response : rejected.response,
      responseB: chosenFirst ? rejected.response : chosen.response,
      label: chosenFirst ? 'A' : 'B',
      rubric: rubricFromPrometheusText(chosen.rubricText, `hhh-${source}`),
      source,
      metadata: { dataset: 'hhh', record: line, chosenPosition: chosenFirst ? 'A' : 'B', placementSeed: hhhPlacementSeed, rubricText: chosen.rubricText },
    },
  };
}

export const hhhImporter: PairwiseImporter = {
  name: 'hhh',
  description: 'HHH alignment pairs from prometheus-eval (hhh_alignment_eval.json); chosen response is the gold winner, placed as A or B by a seeded draw; 1–5 rubric attached.',
  async *read(source) {
    const rows = await readJsonArrayFile(source);
    const random = seededRandom(hhhPlacementSeed);
    for (let index = 0; index < rows.length; index += 1) {
      // Drawn for every row, valid or not, so one bad row does not shift the others' placement.
      const chosenFirst = random() < 0.5;
      yield toPairRecord(rows[index], source, index + 1, chosenFirst);
    }
  },
};
