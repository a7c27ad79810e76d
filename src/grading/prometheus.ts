/**
 * The Prometheus protocol (`--judge-protocol prometheus`): the prompt layout and reply format
 * the Prometheus family of judges (Prometheus 2, M-Prometheus, and rubric-tuned judges trained
 * on the same layout) was trained on, as the prometheus-eval package (Apache-2.0) renders it.
 * The templates below are that package's own layout, reproduced because the models expect it
 * word for word; they deliberately do not use rubricate's nonce-delimited blocks.
 *
 * Absolute: instruction, response, optional reference answer (scored 5), and a score rubric
 * `[criteria]` with `Score 1:` … `Score 5:` descriptions; the judge writes feedback ending in
 * `[RESULT] n`. Relative: two responses; the judge ends with `[RESULT] A` or `[RESULT] B`.
 * Replies are read with the reference parser's patterns (anchored at the end of the reply)
 * and rejected where it rejects them; an unreadable reply is JUDGE_UNPARSEABLE (retried, then
 * reported), never a default score.
 */
import { RubricateError } from '../errors.js';
import type { JudgeReply, JudgeRequest } from '../judges/types.js';
import type { Criterion, Item, PairLabel } from '../rubric/schema.js';
import { comparisonOf, pairOfItem } from './pairwise.js';
import { unparseable } from './parse.js';
import type { GradingStrategy, JudgeTask, SamplingOptions, TaskDecision } from './types.js';
import { choiceValue } from './verdicts.js';
import { requestSampling } from './sampling.js';

export const prometheusTemplateVersion = { absolute: 'prometheus-absolute/v1', relative: 'prometheus-relative/v1' } as const;

const absoluteSystem =
  'You are a fair judge assistant tasked with providing clear, objective feedback based on specific criteria, ensuring each assessment reflects the absolute standards set for performance.';
const relativeSystem =
  'You are a fair judge assistant assigned to deliver insightful feedback that compares individual performances, highlighting how each stands relative to others within the same cohort.';

function absolutePrompt(instruction: string, response: string, rubric: string, reference: string | undefined): string {
  const described = reference === undefined ? 'a response to evaluate, and a score rubric' : 'a response to evaluate, a reference answer that gets a score of 5, and a score rubric';
  return `###Task Description:
An instruction (might include an Input inside it), ${described} representing a evaluation criteria are given.
1. Write a detailed feedback that assess the quality of the response strictly based on the given score rubric, not evaluating in general.
2. After writing a feedback, write a score that is an integer between 1 and 5. You should refer to the score rubric.
3. The output format should look as follows: "(write a feedback for criteria) [RESULT] (an integer number between 1 and 5)"
4. Please do not generate any other opening, closing, and explanations.

###The instruction to evaluate:
${instruction}

###Response to evaluate:
${response}
${reference === undefined ? '' : `\n###Reference Answer (Score 5):\n${reference}\n`}
###Score Rubrics:
${rubric}

###Feedback: `;
}

function relativePrompt(instruction: string, responseA: string, responseB: string, rubric: string, reference: string | undefined): string {
  const described = reference === undefined ? 'and an evaluation criteria are given.' : 'a reference answer, and an evaluation criteria are given.';
  return `###Task Description:
An instruction (might include an Input inside it), two responses to evaluate (denoted as Response A and Response B), ${described}
1. Write a detailed feedback that assess the quality of the two responses strictly based on the given evaluation criteria, not evaluating in general.
2. Make comparisons between Response A, Response B, and the Reference Answer. Instead of examining Response A and Response B separately, go straight to the point and mention about the commonalities and differences between them.
3. After writing the feedback, indicate the better response, either "A" or "B".
4. The output format should look as follows: "Feedback: (write a feedback for criteria) [RESULT] (Either "A" or "B")"
5. Please do not generate any other opening, closing, and explanations.

###Instruction:
${instruction}

###Response A:
${responseA}

###Response B:
${responseB}
${reference === undefined ? '' : `\n###Reference Answer:\n${reference}\n`}
###Score Rubric:
${rubric}

###Feedback: `;
}

/** The score rubric block: `[criteria]` then one `Score n:` line per level. */
export function renderScoreRubric(criteria: string, descriptions: readonly string[]): string {
  return [`[${criteria}]`, ...descriptions.map((description, index) => `Score ${index + 1}: ${description}`)].join('\n');
}

/** The five level descriptions of a criterion on a 1–5 scale, or why it has none (every 1–5 protocol needs them). */
export function fiveLevels(criterion: Criterion): string[] | string {
  const scale = criterion.scale;
  if (scale?.type !== 'ordinal' || scale.choices.length !== 5) return 'it needs an ordinal scale of exactly 5 levels (score 1 to 5)';
  const descriptions = scale.choices.map((choice) => choice.description);
  if (descriptions.some((description) => description === undefined || description.trim() === '')) return 'each of its 5 levels needs a description';
  return descriptions as string[];
}

/**
 * The instruction as Prometheus is shown it: a single user turn as is (system messages are
 * left out, as BiGGen-Bench gives the judge only the instance's input), otherwise the
 * non-system turns as `role: content` paragraphs.
 */
export function prometheusInstruction(item: Item): string {
  const turns = item.prompt.filter((message) => message.role !== 'system');
  if (turns.length === 1 && turns[0].role === 'user') return turns[0].content;
  return turns.map((message) => `${message.role}: ${message.content}`).join('\n\n');
}

// --- Reply parsing: prometheus-eval's `parser.py`, translated exactly ---------------------

/** Python's `\s` for str patterns (JavaScript's differs: it has U+FEFF, lacks U+001C–U+001F and U+0085). */
const pyWhitespace = '[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]';
/** Python's `\d` for str patterns: any Unicode decimal digit. */
const pyDigit = '\\p{Nd}';
/** Python's `$` without MULTILINE: the end, or just before a final newline. */
const pyEnd = '(?=\\n?(?![\\s\\S]))';
/** Python's `^` and `$` with MULTILINE: at the start / end, or next to any `\n` (only `\n`). */
const pyLineStart = '(?:(?<![\\s\\S])|(?<=\\n))';
const pyLineEnd = '(?=\\n|(?![\\s\\S]))';

const S = pyWhitespace;
const absolutePattern = new RegExp(
  `(?:\\[RESULT\\]|\\[SCORE\\]|Score:?|score:?|Result:?|\\[Result\\]:?|score${S}+of)${S}*(?:\\(|\\[|${S})*(${pyDigit}+)(?:(?:\\)|\\]|${S}|${pyEnd})|(?:/${S}*5|${S}*out${S}*of${S}*5))?(?:${S}*${pyEnd})`,
  'iu',
);
const relativePattern = new RegExp(
  `(?:\\[RESULT\\]|\\[RESULT:${S}*|\\[Response${S}+|\\[Result\\](?:${S}+Response)?|\\[Result:${S}*|(?:${pyLineStart}|\\n)Result:?${S}*)${S}*(A|B)(?:\\])?(?:${S}*${pyLineEnd})`,
  'iu',
);
const decimalDigit = /^\p{Nd}$/u;

/** Python's `int()` of a run of Unicode decimal digits (each Nd block runs 0–9 upwards). */
function decimalValue(digits: string): number {
  let value = 0;
  for (const character of digits) {
    const codePoint = character.codePointAt(0)!;
    let start = codePoint;
    while (start > 0 && decimalDigit.test(String.fromCodePoint(start - 1))) start -= 1;
    value = value * 10 + ((codePoint - start) % 10);
    if (value > 1e6) return value; // far outside 1–5 already; avoid overflow on absurd runs
  }
  return value;
}

export type PrometheusParse<T> = { ok: true; result: T; feedback: string } | { ok: false; reason: string };

/** Every `[RESULT] x` / `[RESULT: x]` marker of a reply, scores or labels (the reference reads only the last). */
const resultMarkers = {
  score: new RegExp(`\\[RESULT(?:\\]|:)${S}*\\(?${S}*(${pyDigit}+)`, 'giu'),
  label: new RegExp(`\\[RESULT(?:\\]|:)${S}*(A|B)(?![\\p{L}\\p{Nd}])`, 'giu'),
};

/**
 * A reply that writes two different `[RESULT]` verdicts contradicts itself: refused, as two
 * different JSON verdicts are in every other mode, instead of reading the last as the answer.
 */
function contradictoryResults(output: string, kind: keyof typeof resultMarkers): string | undefined {
  const results = new Set([...output.matchAll(resultMarkers[kind])].map((match) => (kind === 'score' ? String(decimalValue(match[1])) : match[1].toUpperCase())));
  return results.size > 1 ? `ambiguous reply: it gives ${[...results].map((result) => `[RESULT] ${result}`).join(' and ')}` : undefined;
}

/** `[RESULT] n` (and the reference's other spellings) at the very end; n must be 1–5. */
export function parsePrometheusAbsolute(output: string): PrometheusParse<number> {
  const match = absolutePattern.exec(output);
  if (!match) return { ok: false, reason: 'no "[RESULT] n" at the end of the reply' };
  const score = decimalValue(match[1]);
  if (score < 1 || score > 5) return { ok: false, reason: `score ${match[1]} is outside 1–5` };
  const contradiction = contradictoryResults(output, 'score');
  if (contradiction) return { ok: false, reason: contradiction };
  return { ok: true, result: score, feedback: output.slice(0, match.index).trim() };
}

/** `[RESULT] A` or `[RESULT] B` (and the reference's other spellings) at the end of a line. */
export function parsePrometheusRelative(output: string): PrometheusParse<'A' | 'B'> {
  const match = relativePattern.exec(output);
  if (!match) return { ok: false, reason: 'no "[RESULT] A" or "[RESULT] B" at the end of the reply' };
  const contradiction = contradictoryResults(output, 'label');
  if (contradiction) return { ok: false, reason: contradiction };
  return { ok: true, result: match[1].toUpperCase() as 'A' | 'B', feedback: output.slice(0, match.index).trim() };
}

// --- Strategies -------------------------------------------------------------------------

export interface PrometheusOptions {
  sampling: SamplingOptions;
}

function baseRequest(options: PrometheusOptions): Omit<JudgeRequest, 'messages'> {
  return requestSampling(options.sampling);
}

function fail(criterion: Criterion, error: RubricateError): TaskDecision {
  return { verdicts: new Map(), errors: new Map([[criterion.id, error]]) };
}

/** Absolute grading: one call per criterion, each on a 1–5 scale with described levels. */
export function createPrometheusAbsoluteStrategy(options: PrometheusOptions): GradingStrategy {
  const requestFields = baseRequest(options);
  return {
    name: 'prometheus-absolute',
    templateVersion: prometheusTemplateVersion.absolute,
    plan(item: Item, criteria: Criterion[]): JudgeTask[] {
      return criteria.map((criterion) => {
        const levels = fiveLevels(criterion);
        if (typeof levels === 'string') {
          throw new RubricateError('CONFIG_INVALID', `--judge-protocol prometheus cannot grade criterion ${criterion.id} of item ${item.id}: ${levels}`, { field: 'judge-protocol' });
        }
        const verbatim = criterion.metadata?.criteria_verbatim;
        const criteriaText = typeof verbatim === 'string' ? verbatim : criterion.text;
        const content = absolutePrompt(prometheusInstruction(item), item.response, renderScoreRubric(criteriaText, levels), item.reference);
        const request: JudgeRequest = {
          ...requestFields,
          messages: [
            { role: 'system', content: absoluteSystem },
            { role: 'user', content },
          ],
        };
        return {
          item,
          criteria: [criterion],
          request,
          templateVersion: prometheusTemplateVersion.absolute,
          decide(reply: JudgeReply): TaskDecision {
            if (reply.finishReason === 'length') return fail(criterion, unparseable('reply cut off at the max-tokens limit (raise --max-tokens)', reply.text));
            const parsed = parsePrometheusAbsolute(reply.text);
            if (!parsed.ok) return fail(criterion, unparseable(parsed.reason, reply.text));
            const scale = criterion.scale as Extract<NonNullable<Criterion['scale']>, { type: 'ordinal' }>;
            const index = parsed.result - 1;
            const value = choiceValue(scale.choices, index);
            return {
              verdicts: new Map([
                [
                  criterion.id,
                  { met: value >= (scale.metThreshold ?? 1), value, label: scale.choices[index].label, source: 'judge', ...(parsed.feedback ? { explanation: parsed.feedback } : {}) },
                ],
              ]),
              errors: new Map(),
            };
          },
        };
      });
    },
  };
}

/**
 * Relative grading for `compare`: the same items as the pairwise strategy (one synthetic
 * criterion per criterion and presentation order); Prometheus has no tie, so neither does this.
 */
export function createPrometheusRelativeStrategy(options: PrometheusOptions): GradingStrategy {
  const requestFields = baseRequest(options);
  return {
    name: 'prometheus-relative',
    templateVersion: prometheusTemplateVersion.relative,
    plan(item: Item, criteria: Criterion[]): JudgeTask[] {
      const pair = pairOfItem(item, 'prometheus relative strategy');
      return criteria.map((criterion) => {
        const { order } = comparisonOf(criterion);
        const [first, second] = order === 'ab' ? [pair.responseA, pair.responseB] : [pair.responseB, pair.responseA];
        const content = relativePrompt(prometheusInstruction(item), first, second, criterion.text, item.reference);
        const request: JudgeRequest = {
          ...requestFields,
          messages: [
            { role: 'system', content: relativeSystem },
            { role: 'user', content },
          ],
        };
        return {
          item,
          criteria: [criterion],
          request,
          templateVersion: prometheusTemplateVersion.relative,
          decide(reply: JudgeReply): TaskDecision {
            if (reply.finishReason === 'length') return fail(criterion, unparseable('reply cut off at the max-tokens limit (raise --max-tokens)', reply.text));
            const parsed = parsePrometheusRelative(reply.text);
            if (!parsed.ok) return fail(criterion, unparseable(parsed.reason, reply.text));
            // Back to the original labelling: "A" is whichever response was shown first.
            const label: PairLabel = (parsed.result === 'A') === (order === 'ab') ? 'A' : 'B';
            return {
              verdicts: new Map([[criterion.id, { met: label === 'A', value: label === 'A' ? 1 : 0, label, source: 'judge', ...(parsed.feedback ? { explanation: parsed.feedback } : {}) }]]),
              errors: new Map(),
            };
          },
        };
      });
    },
  };
}
