/**
 * Reply schemas and the reading of one criterion's verdict out of a parsed reply.
 * A verdict outside the criterion's scale is an error, never a default.
 */
import { RubricateError } from '../errors.js';
import type { JudgeReply, TokenProbability } from '../judges/types.js';
import type { Criterion, ScaleChoice } from '../rubric/schema.js';
import { isRecord, readBoolean } from './parse.js';
import type { CriterionVerdict } from './types.js';

const binaryVerdictSchema = {
  type: 'object',
  properties: { explanation: { type: 'string' }, criteria_met: { type: 'boolean' } },
  required: ['explanation', 'criteria_met'],
  additionalProperties: false,
} as const;

const ordinalSchemaMemo = new WeakMap<object, Record<string, unknown>>();

export function verdictSchemaFor(criterion: Criterion): Record<string, unknown> {
  const scale = criterion.scale;
  if (scale?.type !== 'ordinal') return binaryVerdictSchema;
  let schema = ordinalSchemaMemo.get(scale);
  if (!schema) {
    schema = {
      type: 'object',
      properties: { explanation: { type: 'string' }, choice: { type: 'string', enum: scale.choices.map((choice) => choice.label) } },
      required: ['explanation', 'choice'],
      additionalProperties: false,
    };
    ordinalSchemaMemo.set(scale, schema);
  }
  return schema;
}

export function batchedSchemaFor(criteria: Criterion[]): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const criterion of criteria) properties[criterion.id] = verdictSchemaFor(criterion);
  return {
    type: 'object',
    properties: {
      verdicts: { type: 'object', properties, required: criteria.map((criterion) => criterion.id), additionalProperties: false },
    },
    required: ['verdicts'],
    additionalProperties: false,
  };
}

/** Value of choice `index` on a worst → best scale: explicit, else its rank in [0, 1]. */
export function choiceValue(choices: ScaleChoice[], index: number): number {
  const explicit = choices[index].value;
  return explicit !== undefined ? explicit : index / (choices.length - 1);
}

/** Reads one criterion's verdict from its entry in a parsed reply. */
export function readVerdict(criterion: Criterion, entry: unknown): CriterionVerdict | RubricateError {
  if (!isRecord(entry)) return new RubricateError('JUDGE_UNPARSEABLE', `verdict for criterion ${criterion.id} is not an object`);
  const explanation = typeof entry.explanation === 'string' ? entry.explanation : undefined;
  const scale = criterion.scale;
  if (scale?.type === 'ordinal') {
    const raw = entry.choice ?? entry.label ?? entry.score;
    const label = typeof raw === 'number' ? String(raw) : typeof raw === 'string' ? raw.trim() : undefined;
    const index = label === undefined ? -1 : scale.choices.findIndex((choice) => choice.label === label || choice.label.toLowerCase() === label.toLowerCase());
    if (index === -1) {
      const allowed = scale.choices.map((choice) => JSON.stringify(choice.label)).join(', ');
      return new RubricateError(
        'JUDGE_UNPARSEABLE',
        label === undefined
          ? `verdict for criterion ${criterion.id} has no "choice"`
          : `choice ${JSON.stringify(label)} for criterion ${criterion.id} is not on its scale (${allowed})`,
      );
    }
    const value = choiceValue(scale.choices, index);
    const threshold = scale.metThreshold ?? 1;
    return { met: value >= threshold, value, label: scale.choices[index].label, explanation, source: 'judge' };
  }
  const met = readBoolean(entry.criteria_met);
  if (met === undefined) {
    return new RubricateError(
      'JUDGE_UNPARSEABLE',
      entry.criteria_met === undefined
        ? `verdict for criterion ${criterion.id} has no "criteria_met"`
        : `"criteria_met" for criterion ${criterion.id} is ${JSON.stringify(entry.criteria_met)}, not true or false`,
    );
  }
  return { met, value: met ? 1 : 0, explanation, source: 'judge' };
}

/**
 * P(met) from the token probabilities at the position where the `criteria_met` value
 * starts: mass on alternatives beginning with "t" against those beginning with "f".
 */
export function probabilityOfMet(reply: JudgeReply): number | RubricateError {
  const tokens = reply.tokenProbabilities;
  if (!tokens || tokens.length === 0) {
    return new RubricateError('JUDGE_UNPARSEABLE', 'probability verdict asked for, but the judge returned no token probabilities');
  }
  const position = verdictTokenIndex(tokens);
  if (position === -1) return new RubricateError('JUDGE_UNPARSEABLE', 'could not find the criteria_met value among the reply tokens');
  let trueMass = 0;
  let falseMass = 0;
  const alternatives = tokens[position].top.length > 0 ? tokens[position].top : [{ token: tokens[position].token, logprob: tokens[position].logprob }];
  for (const alternative of alternatives) {
    const text = alternative.token.trimStart().toLowerCase();
    const probability = Math.exp(alternative.logprob);
    if (text.startsWith('t')) trueMass += probability;
    else if (text.startsWith('f')) falseMass += probability;
  }
  if (trueMass + falseMass === 0) {
    return new RubricateError('JUDGE_UNPARSEABLE', 'no probability mass on true or false at the verdict position');
  }
  return trueMass / (trueMass + falseMass);
}

function verdictTokenIndex(tokens: TokenProbability[]): number {
  let text = '';
  const starts: number[] = [];
  for (const token of tokens) {
    starts.push(text.length);
    text += token.token;
  }
  const match = /"criteria_met"\s*:\s*/.exec(text);
  if (!match) return -1;
  const valueStart = match.index + match[0].length;
  for (let index = 0; index < tokens.length; index += 1) {
    const end = starts[index] + tokens[index].token.length;
    // The token that covers the first character of the value (it may also carry the colon or space).
    if (end > valueStart && tokens[index].token.slice(Math.max(0, valueStart - starts[index])).trim() !== '') return index;
  }
  return -1;
}
