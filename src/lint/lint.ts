/**
 * `rubricate lint`: static rules over rubrics, run before any judge is paid. Each rule has an id,
 * a severity, a message naming the criterion (rubric, item, criterion id) and a fix. The pair
 * rules (duplicates, contradictions) reuse the generator's wording measures, so lint and the
 * generator's duplicate filter agree on what "near-identical" means.
 */
import { comparableText } from '../generation/criteria.js';
import { textJaccard } from '../generation/measures.js';
import { isRecord } from '../util/is-record.js';
import type { Criterion, Rubric } from '../rubric/schema.js';
import type { LintFinding, LintOptions, LintSeverity, lintRuleIds } from './types.js';
import { polarCore, stackedParts, topicSpecificWords, unanchoredVagueWords, unverifiableReason } from './wording.js';

/** The generator's duplicate threshold (decompose-filter's default): uni- and bigram Jaccard. */
export const nearDuplicateThreshold = 0.8;

/** Pair rules compare every two criteria of a rubric: beyond this many, only the first ones are compared. */
export const maxPairwiseCriteria = 2000;

/** Metadata keys a rubric may state its maximum under. */
const statedMaximumKeys = ['max_points', 'max_score', 'total_points'] as const;

const severities: Record<(typeof lintRuleIds)[number], LintSeverity> = {
  'contradictory-criteria': 'error',
  'double-counted-criteria': 'warning',
  'vague-wording': 'warning',
  'stacked-criterion': 'warning',
  'duplicate-criterion': 'error',
  'near-duplicate-criterion': 'warning',
  'option-substring': 'error',
  'topic-specific-in-generic': 'warning',
  'weights-unreachable': 'error',
  'hard-rule-unverifiable': 'error',
};

interface Where {
  rubric: Rubric;
  itemId: string | null;
}

function finding(where: Where, rule: (typeof lintRuleIds)[number], criterion: Criterion | null, message: string, fix: string, related: Criterion | null = null): LintFinding {
  const name = criterion ? `criterion ${criterion.id}${related ? ` and ${related.id}` : ''} of rubric ${where.rubric.id}` : `rubric ${where.rubric.id}`;
  return {
    rule,
    severity: severities[rule],
    rubric_id: where.rubric.id,
    item_id: where.itemId,
    criterion_id: criterion?.id ?? null,
    related_criterion_id: related?.id ?? null,
    message: `${name}${where.itemId !== null ? ` (item ${where.itemId})` : ''}: ${message}`,
    fix,
  };
}

/** Every finding of one rubric, in criterion order; `itemId` names the item that carries it (null from a rubrics file). */
export function lintRubric(rubric: Rubric, itemId: string | null, options: LintOptions = {}): LintFinding[] {
  const where: Where = { rubric, itemId };
  const generic = options.generic === true || (isRecord(rubric.metadata) && rubric.metadata.generic === true);
  const findings: LintFinding[] = [...weightFindings(where)];
  for (const criterion of rubric.criteria) findings.push(...criterionFindings(where, criterion, generic));
  findings.push(...pairFindings(where, rubric.criteria.slice(0, maxPairwiseCriteria)));
  return findings;
}

/** Rules about one criterion alone. */
function criterionFindings(where: Where, criterion: Criterion, generic: boolean): LintFinding[] {
  const findings: LintFinding[] = [];
  const judged = criterion.check === undefined;
  const binary = criterion.scale === undefined || criterion.scale.type === 'binary';
  if (criterion.scale?.type === 'ordinal') findings.push(...scaleFindings(where, criterion));
  if (judged && criterion.kind === 'hard_rule') {
    const reason = unverifiableReason(criterion.text);
    if (reason) findings.push(finding(where, 'hard-rule-unverifiable', criterion, `hard rule "${criterion.text}" cannot be verified: ${reason}`, 'give it a deterministic `check`, or word it as something visible in the response (a phrase present or absent, a number within bounds), or make it a principle'));
  }
  const vague = judged && !(criterion.scale?.type === 'ordinal' && criterion.scale.choices.some((choice) => choice.description)) ? unanchoredVagueWords(criterion.text) : [];
  if (vague.length > 0) findings.push(finding(where, 'vague-wording', criterion, `"${criterion.text}" grades with ${vague.map((word) => `"${word}"`).join(', ')} and no anchor`, 'say what counts: add "such as …", a threshold, or the concrete things the response must contain'));
  const stacked = judged && binary && criterion.subchecks === undefined ? stackedParts(criterion.text) : undefined;
  if (stacked) findings.push(finding(where, 'stacked-criterion', criterion, `one yes/no verdict for two requirements: "${stacked[0]}" and "${stacked[1]}"`, 'split it into two criteria (or into `subchecks` with a rule), so a response meeting one half is graded for it'));
  const topical = generic && judged ? topicSpecificWords(criterion.text) : [];
  if (topical.length > 0) findings.push(finding(where, 'topic-specific-in-generic', criterion, `a rubric for any prompt names ${topical.slice(0, 5).map((word) => `"${word}"`).join(', ')}`, 'word it for every prompt (the property, not this topic\'s instance), or mark the rubric as prompt-specific'));
  return findings;
}

/** Ordinal labels: one inside another is read as the other by a lenient parser ("bad" in "very bad"). */
function scaleFindings(where: Where, criterion: Criterion): LintFinding[] {
  if (criterion.scale?.type !== 'ordinal') return [];
  const findings: LintFinding[] = [];
  const labels = criterion.scale.choices.map((choice) => choice.label.trim().toLowerCase());
  for (const [index, label] of labels.entries()) {
    const container = labels.findIndex((other, otherIndex) => otherIndex !== index && (other === label ? otherIndex < index : new RegExp(`(^|[^\\p{L}\\p{N}])${escapeRegExp(label)}($|[^\\p{L}\\p{N}])`, 'u').test(other)));
    if (container === -1) continue;
    const same = labels[container] === label;
    findings.push(finding(where, 'option-substring', criterion, same ? `the scale lists the label "${criterion.scale.choices[index].label}" twice` : `the label "${criterion.scale.choices[index].label}" is inside the label "${criterion.scale.choices[container].label}": a reply of one can be read as the other`, 'give each choice a label no other label contains (e.g. "1 - poor", "2 - fair", or "Not met"/"Met" → "No"/"Yes")'));
  }
  const top = Math.max(...criterion.scale.choices.map((choice, index, all) => choice.value ?? index / (all.length - 1)));
  if (top < 1) findings.push(finding(where, 'weights-unreachable', criterion, `the best choice of the scale is worth ${top}, so the criterion can never earn its ${criterion.points} points`, 'give the best choice the value 1 (or leave values out: they default to even steps from 0 to 1)'));
  return findings;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Rules about the rubric's points: a maximum above 0, and the one it states. */
function weightFindings(where: Where): LintFinding[] {
  const positive = where.rubric.criteria.reduce((total, criterion) => total + Math.max(0, criterion.points), 0);
  if (positive <= 0) return [finding(where, 'weights-unreachable', null, 'no criterion has positive points: the maximum is 0, so no score can be computed', 'give the criteria that reward a good response positive points')];
  const metadata = isRecord(where.rubric.metadata) ? where.rubric.metadata : {};
  for (const key of statedMaximumKeys) {
    const stated = metadata[key];
    if (typeof stated !== 'number' || Math.abs(stated - positive) <= 1e-9 * Math.max(1, Math.abs(stated))) continue;
    return [finding(where, 'weights-unreachable', null, `metadata.${key} states ${stated}, but the positive points add up to ${positive}${stated > positive ? ': the stated maximum cannot be reached' : ''}`, `make the points add up to ${stated}, or correct metadata.${key}`)];
  }
  return [];
}

/** Rules about two criteria: duplicates, contradictions, the same thing rewarded twice. */
function pairFindings(where: Where, criteria: readonly Criterion[]): LintFinding[] {
  const findings: LintFinding[] = [];
  const facts = criteria.map((criterion) => ({ criterion, comparable: comparableText(criterion.text), ...polarCore(criterion.text) }));
  for (let first = 0; first < facts.length; first += 1) {
    for (let second = first + 1; second < facts.length; second += 1) {
      const pair = pairFinding(where, facts[first], facts[second]);
      if (pair) findings.push(pair);
    }
  }
  return findings;
}

interface CriterionFacts {
  criterion: Criterion;
  comparable: string;
  core: string;
  negated: boolean;
}

function pairFinding(where: Where, a: CriterionFacts, b: CriterionFacts): LintFinding | undefined {
  if (a.criterion.check !== undefined || b.criterion.check !== undefined) return undefined;
  const sign = (facts: CriterionFacts) => Math.sign(facts.criterion.points) * (facts.negated ? -1 : 1);
  const sameSurface = a.comparable === b.comparable;
  if (a.core === '' || b.core === '') return undefined;
  const coreSimilarity = a.core === b.core ? 1 : textJaccard(a.core, b.core);
  if (coreSimilarity < nearDuplicateThreshold) return undefined;
  const quote = (facts: CriterionFacts) => `"${facts.criterion.text}" (${facts.criterion.points} points)`;
  if (sign(a) !== 0 && sign(b) !== 0 && sign(a) !== sign(b)) {
    return finding(where, 'contradictory-criteria', b.criterion, `${quote(b)} and ${quote(a)} score the same behaviour in opposite directions: whatever a response does, it loses one of them`, 'keep one of them (the one with the intended sign), or reword one so that they ask about different things', a.criterion);
  }
  if (a.negated !== b.negated) {
    return finding(where, 'double-counted-criteria', b.criterion, `${quote(b)} and ${quote(a)} score the same behaviour twice (one rewards it, the other penalises its absence)`, 'keep one of them, with the sum of their weights if the behaviour deserves it', a.criterion);
  }
  if (sameSurface) return finding(where, 'duplicate-criterion', b.criterion, `"${b.criterion.text}" repeats criterion ${a.criterion.id}`, 'delete the repeat (keep the higher points on the one left)', a.criterion);
  // The cores already match; the surface measure is reported when it is the higher (the cores drop filler words).
  const similarity = Math.max(coreSimilarity, textJaccard(a.criterion.text, b.criterion.text));
  return finding(where, 'near-duplicate-criterion', b.criterion, `"${b.criterion.text}" says nearly what criterion ${a.criterion.id} says (word overlap ${similarity.toFixed(2)})`, 'merge the two into one criterion, or make the difference explicit in their wording', a.criterion);
}
