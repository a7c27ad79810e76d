/**
 * `--judge-protocol r3`: the prompt layout and reply format of R3 (rubric-agnostic reward models,
 * Anugraha et al. 2025, rubricreward/r3), which its models were trained on. The prompt has the
 * sections `### TASK`, `### INPUT`, `### RESPONSE` (two, `### RESPONSE 1` and `### RESPONSE 2`,
 * when comparing), `### EVALUATION RUBRIC`, `### OUTPUT FORMAT` (the JSON schema of the reply)
 * and `### EVALUATION`. The rubric is one of three kinds, and so is the reply, a JSON object with
 * exactly `explanation` (a string) and `score`:
 *
 * - pointwise: rubric lines `1:` … `5:`; `score` an integer from 1 to 5 (a criterion with a 1–5 scale whose levels are described);
 * - binary: rubric lines `true:` and `false:`; `score` a JSON boolean (a yes/no criterion);
 * - pairwise (`compare`): rubric lines `Response 1:` and `Response 2:`; `score` the string "Response 1" or "Response 2".
 *
 * The task is the criterion's text; the input is the conversation (`prometheusInstruction`). R3
 * has no place for a reference answer: an item with one is refused, not graded without it.
 */
import { RubricateError } from '../../errors.js';
import type { Item } from '../../rubric/schema.js';
import { prometheusInstruction } from '../prometheus.js';
import { createAbsoluteProtocolStrategy, createRelativeProtocolStrategy, exactKeys, strictJsonObject, type AbsoluteLayout, type ProtocolOptions, type ProtocolParse, type RelativeLayout } from './shared.js';

export const r3TemplateVersion = { absolute: 'r3-absolute/v1', relative: 'r3-pairwise/v1' } as const;

/** R3's reply schemas, as the prompt shows them (pydantic's JSON-schema layout of its three response models). */
const replySchemas = {
  pointwise: { additionalProperties: false, properties: { explanation: { description: 'Why the response gets this score', title: 'Explanation', type: 'string' }, score: { description: 'The score from the rubric, 1 to 5', maximum: 5, minimum: 1, title: 'Score', type: 'integer' } }, required: ['explanation', 'score'], title: 'PointwiseResponse', type: 'object' },
  binary: { additionalProperties: false, properties: { explanation: { description: 'Why the answer is true or false', title: 'Explanation', type: 'string' }, score: { description: 'The final answer, true or false', title: 'Score', type: 'boolean' } }, required: ['explanation', 'score'], title: 'BinaryResponse', type: 'object' },
  pairwise: { additionalProperties: false, properties: { explanation: { description: 'Why one response is preferred', title: 'Explanation', type: 'string' }, score: { description: "'Response 1' or 'Response 2'", enum: ['Response 1', 'Response 2'], title: 'Score', type: 'string' } }, required: ['explanation', 'score'], title: 'PairwiseResponse', type: 'object' },
} as const;

const binaryRubric = { true: 'The response satisfies the task.', false: 'The response does not satisfy the task.' };
/** The pairwise rubric R3 ships as its template's first entry. */
const pairwiseRubric = { response1: 'Response 1 is the preferred choice over Response 2.', response2: 'Response 2 is the preferred choice over Response 1.' };

function refuseReference(item: Item): void {
  if (item.reference !== undefined && item.reference !== '') {
    throw new RubricateError('CONFIG_INVALID', `--judge-protocol r3 has no place for a reference answer, and item ${item.id} has one: grade it with --judge-protocol native or prometheus`, { field: 'judge-protocol' });
  }
}

function prompt(opening: string, sections: ReadonlyArray<[string, string]>, schema: object): string {
  const body = sections.map(([title, text]) => `### ${title}\n${text}`).join('\n\n');
  return `${opening}\nProvide a fair and detailed assessment following the rubric.\n\n${body}\n\n### OUTPUT FORMAT\nReturn a JSON response in the following format:\n\n${JSON.stringify(schema)}\n\n### EVALUATION\n`;
}

function readReply(text: string): { ok: true; explanation: string; score: unknown } | { ok: false; reason: string } {
  const read = strictJsonObject(text);
  if (!read.ok) return read;
  const keys = exactKeys(read.value, ['explanation', 'score']);
  if (keys) return { ok: false, reason: keys };
  if (typeof read.value.explanation !== 'string') return { ok: false, reason: '"explanation" must be a string' };
  return { ok: true, explanation: read.value.explanation.trim(), score: read.value.score };
}

export const r3Absolute: AbsoluteLayout = {
  protocol: 'r3',
  templateVersion: r3TemplateVersion.absolute,
  prompt(item, criterion, shape) {
    refuseReference(item);
    const rubric = shape.kind === 'five' ? shape.levels.map((level, index) => `${index + 1}: ${level}`).join('\n') : `true: ${binaryRubric.true}\nfalse: ${binaryRubric.false}`;
    return prompt(
      'Evaluate the response based on the given task, input, response, and evaluation rubric.',
      [['TASK', criterion.text], ['INPUT', prometheusInstruction(item)], ['RESPONSE', item.response], ['EVALUATION RUBRIC', rubric]],
      shape.kind === 'five' ? replySchemas.pointwise : replySchemas.binary,
    );
  },
  parse(text, shape): ProtocolParse<number | boolean> {
    const reply = readReply(text);
    if (!reply.ok) return reply;
    if (shape.kind === 'binary') {
      if (typeof reply.score !== 'boolean') return { ok: false, reason: `"score" must be true or false, got ${JSON.stringify(reply.score)}` };
      return { ok: true, result: reply.score, explanation: reply.explanation };
    }
    if (typeof reply.score !== 'number' || !Number.isInteger(reply.score) || reply.score < 1 || reply.score > 5) return { ok: false, reason: `"score" must be an integer from 1 to 5, got ${JSON.stringify(reply.score)}` };
    return { ok: true, result: reply.score, explanation: reply.explanation };
  },
};

export const r3Relative: RelativeLayout = {
  protocol: 'r3',
  templateVersion: r3TemplateVersion.relative,
  prompt(item, criterionText, first, second) {
    refuseReference(item);
    return prompt(
      'Evaluate the response based on the given task, input, two responses, and evaluation rubric.',
      [['TASK', criterionText], ['INPUT', prometheusInstruction(item)], ['RESPONSE 1', first], ['RESPONSE 2', second], ['EVALUATION RUBRIC', `Response 1: ${pairwiseRubric.response1}\nResponse 2: ${pairwiseRubric.response2}`]],
      replySchemas.pairwise,
    );
  },
  parse(text) {
    const reply = readReply(text);
    if (!reply.ok) return reply;
    if (reply.score === 'Response 1') return { ok: true, result: 'first', explanation: reply.explanation };
    if (reply.score === 'Response 2') return { ok: true, result: 'second', explanation: reply.explanation };
    return { ok: false, reason: `"score" must be "Response 1" or "Response 2", got ${JSON.stringify(reply.score)}` };
  },
};

export const createR3Strategy = (options: ProtocolOptions) => createAbsoluteProtocolStrategy(r3Absolute, options);
export const createR3PairwiseStrategy = (options: ProtocolOptions) => createRelativeProtocolStrategy(r3Relative, options);
