/**
 * The meta-rubric (`lint --meta`): a judge grades a rubric itself on published meta-criteria
 * (Autorubric's `grounding_specified`, `unverifiable_claim` and `overly_strict_requirements`, and
 * atomicity). The rubric under review is the graded "response"; each meta-criterion's verdict on
 * it becomes a finding when it says the rubric is flawed. `--meta-rubric FILE` replaces this one.
 */
import { RubricateError } from '../errors.js';
import { normalizeRubric } from '../rubric/normalize.js';
import type { Item, Rubric } from '../rubric/schema.js';
import type { ResultRecord } from '../results/results.js';
import { metaRuleIds, type LintFinding } from './types.js';

/** Each meta-criterion: the rule its finding carries, and whether "met" means the rubric is flawed. */
const metaCriteria = [
  { id: 'grounding_specified', rule: 'meta-grounding-unspecified', flawWhenMet: false, points: 3, text: 'Every criterion says what in the response it looks for (a fact, an element, a step, a behaviour), so two graders reading it would check the same thing.', fix: 'name, in each criterion, the concrete thing a grader should find in the response' },
  { id: 'unverifiable_claim', rule: 'meta-unverifiable-claim', flawWhenMet: true, points: -3, text: 'Some criterion asks for something that cannot be checked from the conversation and the response alone (an intention, an outcome after the conversation, a fact neither given nor checkable).', fix: 'reword it as something visible in the response, or give it a deterministic check' },
  { id: 'overly_strict_requirements', rule: 'meta-overly-strict', flawWhenMet: true, points: -2, text: 'Some criterion demands more than a good answer needs (exact wording, one particular order, format or length the prompt does not ask for), so sound responses would fail it.', fix: 'accept every correct form: state the property, not one wording of it' },
  { id: 'atomicity', rule: 'meta-not-atomic', flawWhenMet: false, points: 2, text: 'Each criterion checks one thing, so a response meeting half of it is never graded as meeting none or all of it.', fix: 'split the criteria that join two requirements into one criterion each' },
] as const satisfies ReadonlyArray<{ id: string; rule: (typeof metaRuleIds)[number]; flawWhenMet: boolean; points: number; text: string; fix: string }>;

/** The built-in meta-rubric, as a rubric like any other (graded through the same `Grader`). */
export function defaultMetaRubric(): Rubric {
  return normalizeRubric({ id: 'rubricate-meta-rubric/v1', criteria: metaCriteria.map(({ id, points, text }) => ({ id, points, text })) }, { file: 'meta-rubric', line: 1 });
}

const metaPrompt = 'Review the grading rubric below, written to grade answers to one prompt. Judge the rubric itself (its criteria), not any answer.';

/** The item a judge grades: the rubric under review, its criteria listed with id, points and kind, as the response. */
export function metaItem(rubric: Rubric, metaRubric: Rubric): Item {
  const lines = rubric.criteria.map((criterion) => `- [${criterion.id}] (${criterion.points} points${criterion.kind === 'hard_rule' ? ', hard rule' : ''}${criterion.check ? `, checked by ${criterion.check.type}` : ''}) ${criterion.text}`);
  return { id: rubric.id, prompt: [{ role: 'user', content: metaPrompt }], response: `Rubric ${rubric.id}:\n${lines.join('\n')}`, rubric: metaRubric };
}

/**
 * The findings of one meta-grading: a criterion of the built-in meta-rubric whose verdict says
 * the rubric is flawed; for a replaced meta-rubric, any criterion not met with positive points or
 * met with negative points. A meta-criterion in error is a finding too: never read as a pass.
 */
export function metaFindings(record: ResultRecord, itemId: string | null): LintFinding[] {
  const findings: LintFinding[] = [];
  for (const criterion of record.criteria) {
    const known = metaCriteria.find((entry) => entry.id === criterion.id);
    const rule = known?.rule ?? (criterion.points < 0 ? 'meta-unverifiable-claim' : 'meta-grounding-unspecified');
    const flawWhenMet = known?.flawWhenMet ?? criterion.points < 0;
    const why = criterion.explanation ? `: ${criterion.explanation}` : '';
    if (criterion.status === 'error') {
      findings.push({ rule, severity: 'warning', rubric_id: record.id, item_id: itemId, criterion_id: null, related_criterion_id: null, message: `rubric ${record.id}: the judge gave no verdict on ${criterion.id} (${criterion.error?.code ?? 'error'}: ${criterion.error?.message ?? ''})`, fix: 'rerun lint --meta (the reply was not usable)' });
      continue;
    }
    if (criterion.status !== 'ok' || criterion.met === null || criterion.met !== flawWhenMet) continue;
    findings.push({ rule, severity: 'warning', rubric_id: record.id, item_id: itemId, criterion_id: null, related_criterion_id: null, message: `rubric ${record.id}: the judge found "${criterion.text ?? criterion.id}" ${flawWhenMet ? 'true' : 'not true'}${why}`, fix: known?.fix ?? 'revise the rubric as the judge explains' });
  }
  return findings;
}

/** A meta-rubric from a rubrics file (`--meta-rubric FILE`): the file must hold exactly one. */
export function singleMetaRubric(rubrics: ReadonlyMap<string, Rubric>, file: string): Rubric {
  if (rubrics.size !== 1) throw new RubricateError('CONFIG_INVALID', `--meta-rubric must hold exactly one rubric, ${file} holds ${rubrics.size}`, { field: 'meta-rubric', file });
  return [...rubrics.values()][0];
}
