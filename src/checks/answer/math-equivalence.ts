/**
 * Whether two final answers are the same mathematical object, decided with the CortexJS
 * Compute Engine (it parses LaTeX into MathJSON; nothing is ever run as code). Each comparison
 * is bounded: answers longer than `maxAnswerCharacters` are not parsed, and the parse and the
 * comparison run under the engine's own time limit. What cannot be parsed, runs out of time or
 * cannot be decided is `undecided`, never a "not equivalent".
 *
 * Forms handled (normalise first, then compare):
 *   fractions and decimals (\frac, \dfrac, 1/2, 0.5), radicals, π, e;
 *   thousands separators (7,425,000, 1{,}000, 1\,000) when the answer is one number;
 *   percentages (28\% equals 28, as in Math-Verify's data, and 0.28);
 *   units and currency after a number (5 \text{cm}, \$10, 90^\circ) are dropped;
 *   equations: `x = 2` against `2` compares the right side; two equations compare as
 *   proportional (2x + 4y − 3 = 0 ≡ y = −x/2 + 3/4) by sampling;
 *   intervals (open/closed ends), sets (any order), tuples (in order), unions, matrices;
 *   expressions with variables: equal values at several sample points.
 */
import { createRequire } from 'node:module';
import type { ComputeEngine } from '@cortex-js/compute-engine';

export type Equivalence = { decided: true; equivalent: boolean; detail: string } | { decided: false; reason: string };

/** Longer answers are not parsed: an answer is a short expression, and parsing grows with length. */
export const maxAnswerCharacters = 400;
/** Engine time per comparison (parse both answers, compare). */
export const comparisonTimeLimitMs = 250;
/** Elements of a set, tuple or matrix compared (each pair is a comparison of its own). */
const maxElements = 64;
const samplePoints = [0.37, 1.29, -0.83, 2.71, 0.5];

// The engine's types stay inside this file; what is used of it is spelled out here.
interface Expression {
  readonly operator: string;
  readonly ops: readonly Expression[] | null;
  readonly json: unknown;
  readonly unknowns: readonly string[];
  readonly re: number;
  readonly im: number;
  N(): Expression;
  isSame(other: Expression): boolean;
  isEqual(other: Expression): boolean | undefined;
  subs(substitution: Record<string, number>): Expression;
}
interface Engine {
  parse(latex: string, options?: { canonical: boolean }): Expression;
  withTimeLimit<T>(ms: number, body: () => T): T;
}

let engine: Engine | undefined;

/** Loaded on first use: start-up stays fast for everything that never compares math. */
function computeEngine(): Engine {
  if (!engine) {
    const load = createRequire(import.meta.url);
    // Synchronous, as checks are: the package's CommonJS build.
    const loaded = load('@cortex-js/compute-engine') as { ComputeEngine: typeof ComputeEngine };
    engine = new loaded.ComputeEngine() as unknown as Engine;
  }
  return engine;
}

interface NormalisedAnswer {
  latex: string;
  percent: boolean;
  /** A bare word answer (`\text{Evelyn}`): compared as text. */
  text?: string;
}

const unitWord = String.raw`(?:\\(?:text|textbf|mathrm|mbox|operatorname)\{[^{}]*\}|[A-Za-z]{1,12}(?:\^?\{?[23]\}?|²|³)?)`;

/** Strips what does not change the value: delimiters, sizing, styling, units, currency, thousands separators. */
export function normaliseAnswer(raw: string): NormalisedAnswer {
  let text = raw.trim();
  const boxed = /^\\(?:boxed|fbox)\{([\s\S]*)\}$/.exec(text);
  if (boxed) text = boxed[1].trim();
  text = text.replace(/^\$+|\$+$/g, '').replace(/^\\[([]|\\[)\]]$/g, '').trim();
  text = text
    .replace(/\\left|\\right|\\displaystyle|\\!|\\;|\\:/g, '')
    .replace(/\\[dtc]frac/g, '\\frac')
    .replace(/\\le(?![a-z])/g, '\\leq')
    .replace(/\\ge(?![a-z])/g, '\\geq')
    .replace(/\\neq|\\ne(?![a-z])/g, '\\neq')
    .replace(/\^\{?\\circ\}?|°/g, '')
    .replace(/\\\$|€|£/g, '')
    .replace(/\.$/, '')
    .trim();
  const word = /^\\(?:text|textbf|mathrm)\{([^{}]*)\}$/.exec(text);
  if (word && !/\d/.test(word[1])) return { latex: text, percent: false, text: word[1].trim() };
  let percent = false;
  text = text.replace(/\s*(?:\\%|%|\\text\{\s*%\s*\}|\s(?:percent(?:age)?|pct)\b)\s*$/i, () => {
    percent = true;
    return '';
  });
  // A number followed by a unit: the number.
  const withUnit = new RegExp(String.raw`^(-?[\d.,{}\\ ]*\d[\d.]*)\s*(?:${unitWord}\s*)+$`).exec(text);
  if (withUnit) text = withUnit[1].trim();
  // An expression followed by a unit in text: the expression.
  const textUnit = /^(.*\S)\s*\\(?:text|textbf|mathrm|mbox)\{\s*[A-Za-z][A-Za-z ]{0,20}\}$/.exec(text);
  if (textUnit && /\d/.test(textUnit[1])) text = textUnit[1].trim();
  // One number with thousands separators (not a tuple: no brackets around it).
  const thousands = text.replace(/\{,\}|\\,|(?<=\d) (?=\d{3}\b)/g, (separator) => (separator === '{,}' || separator === '\\,' || separator === ' ' ? ',' : separator));
  if (/^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$/.test(thousands)) text = thousands.replace(/,/g, '');
  return { latex: text, percent };
}

function plainText(text: string): string {
  return text.toLowerCase().replace(/\\[a-z]+/g, ' ').replace(/[^a-z0-9]+/g, ' ').trim();
}

function isError(expression: Expression): boolean {
  return JSON.stringify(expression.json).includes('"Error"');
}

function numeric(expression: Expression): { re: number; im: number } | undefined {
  const value = expression.N();
  const re = value.re;
  const im = value.im;
  // Not finite in floats (7^{999} overflows): no float comparison; the engine's exact one decides or not.
  if (typeof re !== 'number' || !Number.isFinite(re) || typeof im !== 'number' || !Number.isFinite(im)) return undefined;
  return { re, im };
}

function close(a: number, b: number, tolerance: number): boolean {
  if (a === b) return true;
  // An overflow (2^{2^{30}} is Infinity in floats) equals nothing but itself.
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  return Math.abs(a - b) <= tolerance * Math.max(1, Math.abs(a), Math.abs(b));
}

type Verdict = boolean | undefined;

const collections = new Set(['Tuple', 'List', 'Delimiter', 'Sequence', 'Pair', 'Triple']);
const relations: Record<string, string> = { Equal: 'Equal', Less: 'Less', LessEqual: 'LessEqual', Greater: 'Less', GreaterEqual: 'LessEqual', NotEqual: 'NotEqual' };

/** Elements of a matrix as rows of expressions, or undefined. */
function matrixRows(expression: Expression): Expression[][] | undefined {
  if (expression.operator !== 'Matrix') return undefined;
  const list = expression.ops?.[0];
  if (!list || list.operator !== 'List') return undefined;
  return (list.ops ?? []).map((row) => (row.operator === 'List' ? [...(row.ops ?? [])] : [row]));
}

function compareLists(a: readonly Expression[], b: readonly Expression[], tolerance: number, ordered: boolean): Verdict {
  if (a.length !== b.length) return false;
  if (a.length > maxElements) return undefined;
  if (ordered) return allOf(a.map((element, index) => compare(element, b[index], tolerance)));
  // Unordered: each element of a matched to a distinct equal element of b.
  const used = new Set<number>();
  let unsure = false;
  for (const element of a) {
    let found = false;
    for (let index = 0; index < b.length && !found; index += 1) {
      if (used.has(index)) continue;
      const verdict = compare(element, b[index], tolerance);
      if (verdict === true) {
        used.add(index);
        found = true;
      } else if (verdict === undefined) unsure = true;
    }
    if (!found) return unsure ? undefined : false;
  }
  return true;
}

function allOf(verdicts: readonly Verdict[]): Verdict {
  if (verdicts.includes(false)) return false;
  return verdicts.every((verdict) => verdict === true) ? true : undefined;
}

/** An interval's ends and whether each is open. */
function intervalEnds(expression: Expression): { ends: Expression[]; open: boolean[] } | undefined {
  if (expression.operator !== 'Interval' || expression.ops?.length !== 2) return undefined;
  const ends = expression.ops.map((end) => (end.operator === 'Open' && end.ops?.[0] ? end.ops[0] : end));
  return { ends, open: expression.ops.map((end) => end.operator === 'Open') };
}

function compareStructured(a: Expression, b: Expression, tolerance: number): Verdict | 'scalar' {
  const rowsA = matrixRows(a);
  const rowsB = matrixRows(b);
  if (rowsA || rowsB) {
    if (!rowsA || !rowsB || rowsA.length !== rowsB.length || rowsA.some((row, index) => row.length !== rowsB[index].length)) return false;
    return compareLists(rowsA.flat(), rowsB.flat(), tolerance, true);
  }
  const intervalA = intervalEnds(a);
  const intervalB = intervalEnds(b);
  if (intervalA || intervalB) {
    // An open interval (a, b) is written like a pair: read a pair against an interval as one.
    const asInterval = (expression: Expression, interval: typeof intervalA) =>
      interval ?? (collections.has(expression.operator) && expression.ops?.length === 2 ? { ends: [...expression.ops], open: [true, true] } : undefined);
    const left = asInterval(a, intervalA);
    const right = asInterval(b, intervalB);
    if (!left || !right) return false;
    if (left.open[0] !== right.open[0] || left.open[1] !== right.open[1]) return false;
    return compareLists(left.ends, right.ends, tolerance, true);
  }
  for (const [name, ordered] of [
    ['Set', false],
    ['Union', false],
  ] as const) {
    if (a.operator === name || b.operator === name) return a.operator === b.operator ? compareLists(a.ops ?? [], b.ops ?? [], tolerance, ordered) : false;
  }
  if (collections.has(a.operator) || collections.has(b.operator)) {
    if (!collections.has(a.operator) || !collections.has(b.operator)) return false;
    return compareLists(a.ops ?? [], b.ops ?? [], tolerance, true);
  }
  if (relations[a.operator] || relations[b.operator]) return compareRelations(a, b, tolerance);
  return 'scalar';
}

/** Two relations alike: the same kind (a ≥ b read as b ≤ a) whose sides' differences are proportional. */
function compareRelations(a: Expression, b: Expression, tolerance: number): Verdict {
  const kindA = relations[a.operator];
  const kindB = relations[b.operator];
  if (!kindA || !kindB || kindA !== kindB || a.ops?.length !== 2 || b.ops?.length !== 2) return false;
  const flip = (expression: Expression) => expression.operator === 'Greater' || expression.operator === 'GreaterEqual';
  const [leftA, rightA] = flip(a) ? [a.ops[1], a.ops[0]] : [a.ops[0], a.ops[1]];
  const [leftB, rightB] = flip(b) ? [b.ops[1], b.ops[0]] : [b.ops[0], b.ops[1]];
  // Equations may be scaled by any non-zero factor; inequalities only by a positive one.
  const ratios = sampledDifferenceRatios(leftA, rightA, leftB, rightB);
  if (ratios === undefined) return undefined;
  if (ratios.length === 0) return false;
  const first = ratios[0];
  const sameRatio = ratios.every((ratio) => close(ratio, first, tolerance));
  const equation = kindA === 'Equal' || kindA === 'NotEqual';
  return sameRatio && first !== 0 && (equation || first > 0);
}

/** (leftA − rightA) ÷ (leftB − rightB) at the sample points; undefined when they cannot be evaluated. */
function sampledDifferenceRatios(leftA: Expression, rightA: Expression, leftB: Expression, rightB: Expression): number[] | undefined {
  const names = [...new Set([...leftA.unknowns, ...rightA.unknowns, ...leftB.unknowns, ...rightB.unknowns])];
  if (names.length > 6) return undefined;
  const ratios: number[] = [];
  for (let point = 0; point < samplePoints.length; point += 1) {
    const substitution = Object.fromEntries(names.map((name, index) => [name, samplePoints[(point + index) % samplePoints.length] + index * 0.11]));
    const values = [leftA, rightA, leftB, rightB].map((side) => numeric(names.length > 0 ? side.subs(substitution) : side));
    if (values.some((value) => value === undefined || value.im !== 0)) return undefined;
    const differenceA = values[0]!.re - values[1]!.re;
    const differenceB = values[2]!.re - values[3]!.re;
    if (differenceB === 0) {
      if (differenceA !== 0) return [];
      continue;
    }
    ratios.push(differenceA / differenceB);
  }
  return ratios;
}

/** Scalars: exact sameness, numeric values, or the values at sample points when variables remain. */
function compareScalars(a: Expression, b: Expression, tolerance: number): Verdict {
  if (a.isSame(b)) return true;
  const names = [...new Set([...a.unknowns, ...b.unknowns])];
  if (names.length === 0) {
    const left = numeric(a);
    const right = numeric(b);
    if (!left || !right) return a.isEqual(b);
    return close(left.re, right.re, tolerance) && close(left.im, right.im, tolerance);
  }
  if (names.length > 6) return undefined;
  for (let point = 0; point < samplePoints.length; point += 1) {
    const substitution = Object.fromEntries(names.map((name, index) => [name, samplePoints[(point + index) % samplePoints.length] + index * 0.11]));
    const left = numeric(a.subs(substitution));
    const right = numeric(b.subs(substitution));
    if (!left || !right) return undefined;
    if (!close(left.re, right.re, tolerance) || !close(left.im, right.im, tolerance)) return false;
  }
  return true;
}

function compare(a: Expression, b: Expression, tolerance: number): Verdict {
  const structured = compareStructured(a, b, tolerance);
  return structured === 'scalar' ? compareScalars(a, b, tolerance) : structured;
}

/** `x = 2` against a bare `2` (or the reverse): the equation's value, its last side after a lone name. */
function equationValue(expression: Expression): Expression | undefined {
  if (expression.operator !== 'Equal' || !expression.ops || expression.ops.length < 2) return undefined;
  const [left] = expression.ops;
  const chain = expression.ops.length > 2;
  const lone = left.unknowns.length === 1 && (left.json === left.unknowns[0] || typeof left.json === 'string');
  return lone || chain ? expression.ops[expression.ops.length - 1] : undefined;
}

/**
 * Whether `candidate` states the same answer as `reference`. `tolerance` is relative
 * (|a − b| ≤ tolerance · max(1, |a|, |b|)) for the numbers compared.
 */
export function mathEquivalent(reference: string, candidate: string, tolerance = 1e-6): Equivalence {
  if (reference.length > maxAnswerCharacters || candidate.length > maxAnswerCharacters) {
    return { decided: false, reason: `an answer longer than ${maxAnswerCharacters} characters is not parsed` };
  }
  const left = normaliseAnswer(reference);
  const right = normaliseAnswer(candidate);
  if (left.text !== undefined || right.text !== undefined) {
    const same = plainText(left.text ?? left.latex) === plainText(right.text ?? right.latex);
    return { decided: true, equivalent: same, detail: same ? 'same text answer' : 'different text answers' };
  }
  if (left.latex.replace(/\s+/g, '') === right.latex.replace(/\s+/g, '') && left.percent === right.percent) return { decided: true, equivalent: true, detail: 'identical after normalisation' };
  if (left.latex === '' || right.latex === '') return { decided: false, reason: 'an empty answer' };
  const ce = computeEngine();
  try {
    return ce.withTimeLimit(comparisonTimeLimitMs, () => decide(ce, left, right, tolerance));
  } catch (error) {
    const name = error instanceof Error ? error.name : '';
    return { decided: false, reason: name === 'CancellationError' ? `the comparison ran past ${comparisonTimeLimitMs} ms` : `the comparison failed (${error instanceof Error ? error.message.slice(0, 80) : 'unknown'})` };
  }
}

/** Exponents, roots and factorials beyond these are not computed: `9^{9^{9^9}}` would run for minutes inside one engine call. */
const maxExponent = 1000;
const maxNodes = 300;
const growing = new Set(['Power', 'Root', 'Factorial', 'Factorial2']);

/**
 * Why an answer is too costly to compare, read from its uncomputed form (the canonical form
 * already folds numbers: a tower of powers would be computed by the parse itself).
 */
function costProblem(json: unknown): string | undefined {
  let nodes = 0;
  const literalsSmall = (node: unknown): boolean => {
    if (typeof node === 'number') return Math.abs(node) <= maxExponent;
    if (typeof node === 'string') return true;
    if (!Array.isArray(node)) return false;
    return !growing.has(String(node[0])) && node.slice(1).every(literalsSmall);
  };
  const visit = (node: unknown): string | undefined => {
    nodes += 1;
    if (nodes > maxNodes) return `an answer of more than ${maxNodes} parts is not compared`;
    if (node !== null && typeof node === 'object' && !Array.isArray(node)) return 'a number too large to compare';
    if (!Array.isArray(node)) return undefined;
    const [head, ...operands] = node as unknown[];
    if ((head === 'Power' || head === 'Root') && operands[1] !== undefined && !literalsSmall(operands[1])) return `an exponent beyond ±${maxExponent} (or a tower of powers) is not computed`;
    if ((head === 'Factorial' || head === 'Factorial2') && !literalsSmall(operands[0])) return `a factorial beyond ${maxExponent}! is not computed`;
    for (const operand of operands) {
      const problem = visit(operand);
      if (problem) return problem;
    }
    return undefined;
  };
  return visit(json);
}

function decide(ce: Engine, left: NormalisedAnswer, right: NormalisedAnswer, tolerance: number): Equivalence {
  for (const [name, answer] of [
    ['the reference', left],
    ['the answer', right],
  ] as const) {
    const problem = costProblem(ce.parse(answer.latex, { canonical: false }).json);
    if (problem) return { decided: false, reason: `${name}: ${problem}` };
  }
  const a = ce.parse(left.latex);
  const b = ce.parse(right.latex);
  if (isError(a) || isError(b)) return { decided: false, reason: `could not parse ${isError(a) ? 'the reference' : 'the answer'}` };
  const candidatesA = [a, equationValue(a)].filter((value): value is Expression => value !== undefined);
  const candidatesB = [b, equationValue(b)].filter((value): value is Expression => value !== undefined);
  let unsure = false;
  for (const first of candidatesA) {
    for (const second of candidatesB) {
      const verdict = percentAware(first, second, left.percent || right.percent, tolerance);
      if (verdict === true) return { decided: true, equivalent: true, detail: 'equivalent' };
      if (verdict === undefined) unsure = true;
    }
  }
  return unsure ? { decided: false, reason: 'the engine could not decide' } : { decided: true, equivalent: false, detail: 'not equivalent' };
}

/** With a percent sign on either side, 28% matches 28 and 0.28. */
function percentAware(a: Expression, b: Expression, percent: boolean, tolerance: number): Verdict {
  const plain = compare(a, b, tolerance);
  if (plain !== false || !percent) return plain;
  const left = numeric(a);
  const right = numeric(b);
  if (!left || !right) return false;
  return close(left.re / 100, right.re, tolerance) || close(left.re, right.re / 100, tolerance);
}
