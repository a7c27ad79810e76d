/**
 * Reply schemas and the reading of one criterion's verdict out of a parsed reply.
 * A verdict outside the criterion's scale is an error, never a default.
 */
import { RubricateError } from '../errors.js';
import type { JudgeReply, TokenProbability } from '../judges/types.js';
import type { Criterion, ScaleChoice } from '../rubric/schema.js';
import { finalAnswerText, readBoolean } from './parse.js';
import type { CriterionVerdict } from './types.js';
import { withoutExplanation } from './explanation.js';
import type { AbstainPolicy, ExplanationLength } from '../spec/run-spec.js';
import { isRecord } from '../util/is-record.js';
import { abstention, readCannotAssess, withAbstainField } from './abstain.js';

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

const noExplanationMemo = new WeakMap<object, Record<string, unknown>>();

/**
 * The criterion's reply schema, without its explanation field when `length` is `none`, with the
 * `cannot_assess` field when the run lets the judge abstain.
 */
export function verdictSchemaForLength(criterion: Criterion, length: ExplanationLength, abstain?: AbstainPolicy): Record<string, unknown> {
  let schema = verdictSchemaFor(criterion);
  if (length === 'none') {
    let bare = noExplanationMemo.get(schema);
    if (!bare) {
      bare = withoutExplanation(schema);
      noExplanationMemo.set(schema, bare);
    }
    schema = bare;
  }
  return abstain === undefined ? schema : withAbstainField(schema);
}

export function batchedSchemaFor(criteria: Criterion[], length: ExplanationLength = 'full', abstain?: AbstainPolicy): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (const criterion of criteria) properties[criterion.id] = verdictSchemaForLength(criterion, length, abstain);
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

/**
 * Reads one criterion's verdict from its entry in a parsed reply. When the run lets the judge
 * abstain (`abstain`), `"cannot_assess": true` is an abstention whatever the verdict field says.
 */
export function readVerdict(criterion: Criterion, entry: unknown, abstain?: AbstainPolicy): CriterionVerdict | RubricateError {
  if (!isRecord(entry)) return new RubricateError('JUDGE_UNPARSEABLE', `verdict for criterion ${criterion.id} is not an object`);
  const explanation = typeof entry.explanation === 'string' ? entry.explanation : undefined;
  if (abstain !== undefined) {
    const cannotAssess = readCannotAssess(entry, criterion.id);
    if (RubricateError.isInstance(cannotAssess)) return cannotAssess;
    if (cannotAssess) return abstention(explanation);
  }
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
 * P(met) from the token probabilities at the position where the final answer's
 * `criteria_met` value starts: mass on alternatives that spell true against those that
 * spell false. Reasoning tokens (a `<think>` block, or vLLM's reasoning tokens, which its
 * logprobs include) are skipped: only the answer counts.
 */
export function probabilityOfMet(reply: JudgeReply): number | RubricateError {
  const tokens = reply.tokenProbabilities;
  if (!tokens || tokens.length === 0) {
    return new RubricateError('JUDGE_UNPARSEABLE', 'probability verdict asked for, but the judge returned no token probabilities');
  }
  const position = answerTokenPosition(tokens, reply, 'criteria_met');
  if (!position) return new RubricateError('JUDGE_UNPARSEABLE', "could not find the final answer's criteria_met value among the reply tokens");
  let trueMass = 0;
  let falseMass = 0;
  const alternatives = answerAlternatives(tokens[position.index]);
  if (RubricateError.isInstance(alternatives)) return alternatives;
  for (const { token, probability } of alternatives) {
    const word = verdictWord(token, position.prefix);
    if (word === '') continue;
    if ('true'.startsWith(word) || word.startsWith('true')) trueMass += probability;
    else if ('false'.startsWith(word) || word.startsWith('false')) falseMass += probability;
  }
  if (trueMass + falseMass === 0) {
    return new RubricateError('JUDGE_UNPARSEABLE', 'no probability mass on true or false at the verdict position');
  }
  return trueMass / (trueMass + falseMass);
}

/**
 * How far the alternatives' probabilities may sum above 1. Providers compute log-probabilities in
 * 32-bit floats and print them rounded (a relative error near 6e-8 each), so 20 alternatives of a
 * true distribution can sum to 1 + ~1e-6; counting one token twice adds far more than this.
 */
const probabilitySumTolerance = 1e-5;

/**
 * The alternatives at an answer position as probabilities, refused (an unparseable reply, retried
 * then reported) when they cannot be a distribution: a log-probability that is not a finite
 * number or is above 0, a token listed twice (no provider lists one token twice; tokens that only
 * print alike were merged by the judge that read them, which knows their ids or bytes), or
 * probabilities summing above 1. Without alternatives the chosen token stands alone.
 */
export function answerAlternatives(chosen: TokenProbability): Array<{ token: string; probability: number }> | RubricateError {
  const listed = chosen.top.length > 0 ? chosen.top : [{ token: chosen.token, logprob: chosen.logprob }];
  const seen = new Set<string>();
  let sum = 0;
  const alternatives: Array<{ token: string; probability: number }> = [];
  for (const { token, logprob } of [{ token: chosen.token, logprob: chosen.logprob }, ...listed]) {
    if (typeof logprob !== 'number' || !Number.isFinite(logprob)) {
      return new RubricateError('JUDGE_UNPARSEABLE', `the log-probability of token ${JSON.stringify(token)} at the answer is ${Number.isNaN(logprob) ? 'missing or not a number' : String(logprob)}, not a finite number`);
    }
    if (logprob > 0) {
      return new RubricateError('JUDGE_UNPARSEABLE', `the log-probability of token ${JSON.stringify(token)} at the answer is ${logprob}, above 0 (a probability of ${Math.exp(logprob).toPrecision(3)})`);
    }
  }
  for (const { token, logprob } of listed) {
    if (seen.has(token)) return new RubricateError('JUDGE_UNPARSEABLE', `token ${JSON.stringify(token)} is listed twice among the alternatives at the answer`);
    seen.add(token);
    const probability = Math.exp(logprob);
    sum += probability;
    alternatives.push({ token, probability });
  }
  if (sum > 1 + probabilitySumTolerance) {
    return new RubricateError('JUDGE_UNPARSEABLE', `the alternatives at the answer have probabilities summing to ${sum.toPrecision(4)}, above 1`);
  }
  return alternatives;
}

/**
 * The value's spelling in an alternative token. Tokenizers merge the value with what precedes
 * it (`":true`, `: true`) or follows it (`true}`): drop the part the chosen token had before
 * the value, then any leading quote, colon or space.
 */
export function verdictWord(token: string, prefix: string): string {
  const rest = prefix !== '' && token.startsWith(prefix) ? token.slice(prefix.length) : token;
  return rest.replace(/^[\s":]+/, '').toLowerCase();
}

/** Where the answer starts in the reply's token text: after the last `</think>`, and no earlier than the answer text itself. */
function answerOffset(text: string, reply: JudgeReply): number {
  let offset = 0;
  const close = text.toLowerCase().lastIndexOf('</think>');
  if (close !== -1) offset = close + '</think>'.length;
  const answer = finalAnswerText(reply.text).trim();
  const trimmed = text.trimEnd();
  if (answer !== '' && trimmed.endsWith(answer)) offset = Math.max(offset, trimmed.length - answer.length);
  return offset;
}

/**
 * The token where the final answer's value of `field` starts (after an opening quote for a
 * string value such as an ordinal `choice`), and the part of that token before it.
 */
export function answerTokenPosition(tokens: TokenProbability[], reply: JudgeReply, field: string): { index: number; prefix: string } | undefined {
  let text = '';
  const starts: number[] = [];
  for (const token of tokens) {
    starts.push(text.length);
    text += token.token;
  }
  const key = new RegExp(`"${field}"\\s*:\\s*"?`, 'g');
  key.lastIndex = answerOffset(text, reply);
  // The last key of the answer: the answer's own (a key quoted inside its explanation is escaped and does not match).
  let match: RegExpExecArray | null = null;
  for (let found = key.exec(text); found; found = key.exec(text)) match = found;
  if (!match) return undefined;
  const valueStart = match.index + match[0].length;
  for (let index = 0; index < tokens.length; index += 1) {
    const end = starts[index] + tokens[index].token.length;
    const before = Math.max(0, valueStart - starts[index]);
    // The token that covers the first character of the value (it may also carry the colon or space).
    if (end > valueStart && tokens[index].token.slice(before).trim() !== '') return { index, prefix: tokens[index].token.slice(0, before) };
  }
  return undefined;
}
