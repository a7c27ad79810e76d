/**
 * `--verdict expected-score`: an ordinal criterion's score as the expectation over its options
 * under the judge's token probabilities, as G-Eval defines it and DeepEval computes it
 * (`calculate_weighted_summed_score`): at the position of the score token, each of the top
 * alternatives (20 asked) whose probability is at least 1% and that spells an option counts with
 * its probability; the score is Σ p·score ÷ Σ p over those. DeepEval reads the option from the
 * token as a decimal integer; here an alternative names an option when, without the part the
 * chosen token has before the value (a quote, a colon, a space), it is that option's label, or
 * the start of exactly one label (labels such as "Partially" split over tokens).
 *
 * The verdict keeps the judge's own choice (`label`, `met`); `value` becomes the expectation of
 * the options' values in [0, 1], and `expectedScore` the expectation of the labels themselves
 * when every label is a number (3.7 on a 1–5 scale). Binary criteria get P(met), the same
 * expectation over {not met, met}. No probability mass on any option is JUDGE_UNPARSEABLE.
 */
import { RubricateError } from '../errors.js';
import type { JudgeReply } from '../judges/types.js';
import type { Criterion } from '../rubric/schema.js';
import type { CriterionVerdict } from './types.js';
import { answerAlternatives, answerTokenPosition, choiceValue, probabilityOfMet, verdictWord } from './verdicts.js';

/** G-Eval drops alternatives below 1% (logprob < ln 0.01). */
export const minimumOptionProbability = 0.01;

/** The option an alternative token spells: its label exactly (any case), or the start of exactly one label. */
function optionOf(word: string, labels: readonly string[]): number | undefined {
  if (word === '') return undefined;
  const exact = labels.findIndex((label) => label.toLowerCase() === word);
  if (exact >= 0) return exact;
  const starting = labels.map((label, index) => (label.toLowerCase().startsWith(word) ? index : -1)).filter((index) => index >= 0);
  return starting.length === 1 ? starting[0] : undefined;
}

/** The verdict with its value replaced by the expectation over the scale (ordinal) or by P(met) (binary). */
export function withExpectedScore(verdict: CriterionVerdict, reply: JudgeReply, criterion: Criterion): CriterionVerdict | RubricateError {
  // An abstention has no score to weigh: its value is the abstain policy's.
  if (verdict.cannotAssess) return verdict;
  const scale = criterion.scale;
  if (scale?.type !== 'ordinal') {
    const probability = probabilityOfMet(reply);
    return RubricateError.isInstance(probability) ? probability : { ...verdict, probability, value: probability };
  }
  const tokens = reply.tokenProbabilities;
  if (!tokens || tokens.length === 0) return new RubricateError('JUDGE_UNPARSEABLE', 'expected score asked for, but the judge returned no token probabilities');
  const position = answerTokenPosition(tokens, reply, 'choice');
  if (!position) return new RubricateError('JUDGE_UNPARSEABLE', "could not find the final answer's choice among the reply tokens");
  const labels = scale.choices.map((choice) => choice.label);
  const alternatives = answerAlternatives(tokens[position.index]);
  if (RubricateError.isInstance(alternatives)) return alternatives;
  const mass = new Array<number>(labels.length).fill(0);
  let total = 0;
  for (const { token, probability } of alternatives) {
    if (probability < minimumOptionProbability) continue;
    const option = optionOf(verdictWord(token, position.prefix), labels);
    if (option === undefined) continue;
    mass[option] += probability;
    total += probability;
  }
  if (total === 0) return new RubricateError('JUDGE_UNPARSEABLE', `no probability mass of 1% or more on any of the scale's labels (${labels.join(', ')}) at the choice position`);
  let value = 0;
  for (let index = 0; index < labels.length; index += 1) value += mass[index] * choiceValue(scale.choices, index);
  value /= total;
  const numeric = labels.map(Number);
  const expected: CriterionVerdict = { ...verdict, value: Math.min(1, Math.max(0, value)) };
  if (numeric.every((label, index) => labels[index].trim() !== '' && Number.isFinite(label))) {
    let score = 0;
    for (let index = 0; index < labels.length; index += 1) score += mass[index] * numeric[index];
    expected.expectedScore = score / total;
  }
  return expected;
}
