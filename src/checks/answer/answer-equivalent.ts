/**
 * `answer-equivalent`: the response's final answer against a reference, by rules, before any
 * judge. `{"type": "answer-equivalent", "answer": "\\frac{1}{2}", "extract": "boxed",
 * "domain": "math", "tolerance": 1e-6, "fallback": "judge"}`.
 *
 * A case the rules cannot decide (no final answer found, an answer that does not parse, a
 * comparison past its time limit) is undecided, never "not met": with `fallback: "judge"` the
 * criterion goes to the judge like any other (recorded as `check_undecided`), else it is an
 * error (CHECK_UNDECIDED) and the item has no reward.
 */
import { z } from 'zod';
import type { CheckDefinition, CheckOutcome } from '../types.js';
import { perParameters } from '../per-parameters.js';
import { extractAnswer, type AnswerExtraction } from './extract.js';
import { mathEquivalent, maxAnswerCharacters, normaliseAnswer, type Equivalence } from './math-equivalence.js';

const extractionSchema = z.union([
  z.enum(['boxed', 'answer-line', 'last-number']),
  z
    .strictObject({ regex: z.string().min(1).max(500), flags: z.string().regex(/^[imsu]*$/, 'may only contain the flags i, m, s, u').optional() })
    .superRefine((value, context) => {
      try {
        new RegExp(value.regex, value.flags ?? '');
      } catch (error) {
        context.addIssue({ code: 'custom', path: ['regex'], message: `is not a valid regular expression (${error instanceof Error ? error.message : String(error)})` });
      }
    }),
]);

const parametersSchema = z.strictObject({
  answer: z.string().trim().min(1).max(maxAnswerCharacters),
  extract: extractionSchema.default('boxed'),
  domain: z.enum(['math', 'number', 'text', 'choice']).default('math'),
  /** Relative: |a − b| ≤ tolerance · max(1, |a|, |b|). */
  tolerance: z.number().min(0).max(1).default(1e-6),
  fallback: z.literal('judge').optional(),
});
type Parameters = z.output<typeof parametersSchema>;

const compiledExtraction = perParameters((parameters: Parameters) => (typeof parameters.extract === 'object' ? new RegExp(parameters.extract.regex, parameters.extract.flags ?? '') : undefined));

function describeExtraction(extraction: AnswerExtraction): string {
  if (typeof extraction === 'object') return `the first group of /${extraction.regex}/`;
  return { boxed: 'the last \\boxed{}', 'answer-line': 'the last "Answer:" line', 'last-number': 'the last number' }[extraction];
}

/** A number as people write it: currency, thousands separators, a percent sign or a unit around it. */
function readNumber(text: string): { value: number; percent: boolean } | undefined {
  const normalised = normaliseAnswer(text);
  const fraction = /^(-?\d+(?:\.\d+)?)\s*\/\s*(\d+(?:\.\d+)?)$/.exec(normalised.latex);
  if (fraction) return { value: Number(fraction[1]) / Number(fraction[2]), percent: normalised.percent };
  const latexFraction = /^(-?)\\frac\{(\d+(?:\.\d+)?)\}\{(\d+(?:\.\d+)?)\}$/.exec(normalised.latex);
  if (latexFraction) return { value: (latexFraction[1] === '-' ? -1 : 1) * (Number(latexFraction[2]) / Number(latexFraction[3])), percent: normalised.percent };
  if (!/^[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?$/i.test(normalised.latex)) return undefined;
  return { value: Number(normalised.latex), percent: normalised.percent };
}

function closeEnough(a: number, b: number, tolerance: number): boolean {
  return a === b || Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(a), Math.abs(b));
}

function numberEquivalent(reference: string, candidate: string, tolerance: number): Equivalence {
  const left = readNumber(reference);
  const right = readNumber(candidate);
  if (!left || !right) return { decided: false, reason: `${left ? 'the answer' : 'the reference'} is not a number` };
  const percent = left.percent || right.percent;
  const equivalent = closeEnough(left.value, right.value, tolerance) || (percent && (closeEnough(left.value / 100, right.value, tolerance) || closeEnough(left.value, right.value / 100, tolerance)));
  return { decided: true, equivalent, detail: `${left.value} against ${right.value}` };
}

/** Lower case, no punctuation, no articles, single spaces. */
function normalisedText(text: string): string {
  return normaliseAnswer(text)
    .latex.replace(/\\text\{([^{}]*)\}/g, '$1')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s]/gu, ' ')
    .replace(/\b(?:a|an|the)\b/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** A choice letter: "B", "(B)", "B)", "B.", "B: text", "option B". */
function choiceLetter(text: string): string | undefined {
  const trimmed = normaliseAnswer(text).latex.replace(/\\text\{([^{}]*)\}/g, '$1').trim();
  const match = /^(?:option\s+|choice\s+)?\(?([A-Za-z])\)?(?:[.):]|\s|$)/i.exec(trimmed);
  return match ? match[1].toUpperCase() : undefined;
}

export function answersEquivalent(reference: string, candidate: string, parameters: Pick<Parameters, 'domain' | 'tolerance'>): Equivalence {
  switch (parameters.domain) {
    case 'math':
      return mathEquivalent(reference, candidate, parameters.tolerance);
    case 'number':
      return numberEquivalent(reference, candidate, parameters.tolerance);
    case 'text': {
      const equivalent = normalisedText(reference) === normalisedText(candidate);
      return { decided: true, equivalent, detail: equivalent ? 'same text' : 'different text' };
    }
    case 'choice': {
      const left = choiceLetter(reference);
      const right = choiceLetter(candidate);
      if (!left || !right) return { decided: false, reason: `${left ? 'the answer' : 'the reference'} names no choice letter` };
      return { decided: true, equivalent: left === right, detail: `${right} against ${left}` };
    }
  }
}

export const answerEquivalentCheck: CheckDefinition<Parameters> = {
  type: 'answer-equivalent',
  description: 'The final answer of the response (boxed, an Answer: line, the last number or a regex) is equivalent to a reference answer: math, number, text or choice; undecided cases can go to the judge.',
  family: 'general',
  parameters: parametersSchema,
  describe: (parameters) => `The final answer (${describeExtraction(parameters.extract)}) is equivalent to ${parameters.answer}.`,
  evaluate(response, parameters): CheckOutcome {
    const undecided = (reason: string): CheckOutcome => ({ passed: false, detail: `undecided: ${reason}`, undecided: { reason, ...(parameters.fallback ? { fallback: parameters.fallback } : {}) } });
    const candidate = extractAnswer(response, parameters.extract, compiledExtraction(parameters));
    if (candidate === undefined) return undecided(`no final answer found (${describeExtraction(parameters.extract)})`);
    const shown = candidate.length > 60 ? `${candidate.slice(0, 60)}…` : candidate;
    // Bounded before any normalising: a final answer is short, and every rule below is at least linear in it.
    if (candidate.length > maxAnswerCharacters) return undecided(`the final answer is longer than ${maxAnswerCharacters} characters ("${shown}")`);
    const verdict = answersEquivalent(parameters.answer, candidate, parameters);
    if (!verdict.decided) return undecided(`${verdict.reason} ("${shown}")`);
    return { passed: verdict.equivalent, detail: `"${shown}" ${verdict.equivalent ? 'is' : 'is not'} equivalent to the reference (${verdict.detail})` };
  },
};
