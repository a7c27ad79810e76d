/**
 * Abstaining (`--abstain POLICY`, off by default): the judge may answer that the material does
 * not let it assess a criterion, and the run's policy says how such a criterion counts. With the
 * policy unset, templates, reply schemas, cache keys and results are exactly those of a run
 * without this module.
 *
 * The reply gains one boolean, `cannot_assess`, before the verdict (`criteria_met` or `choice`):
 * a boolean every structured-output backend can force, and one that leaves P(met) readable
 * from the verdict's tokens. The policy is applied when an item's criteria come back from the
 * judge, so the results line, every scoring and every re-score see the same numbers; the line
 * keeps `cannot_assess: true` on the criterion, and the metrics count abstentions apart from
 * errors.
 */
import { RubricateError } from '../errors.js';
import type { AbstainPolicy } from '../spec/run-spec.js';
import { readBoolean } from './parse.js';
import type { CriterionResult, CriterionVerdict } from './types.js';

/** What the skip reason of an abstained criterion says (`skip` and `fail`). */
export const cannotAssessReason = 'cannot_assess';

const abstainRule =
  '- If the conversation, reference and response do not let you decide the criterion at all (the response is cut off or missing the part the criterion is about, is in a form you cannot read, or the criterion asks about something the material cannot show), set "cannot_assess" to true; its verdict is then ignored. Otherwise set it to false and decide. Do not use it to avoid a hard call: a response that simply fails to do what the criterion asks does not meet it.';

/** Template versions of abstaining runs: their replies are never served to a run without it, or back. */
export function abstainVersion(version: string, policy: AbstainPolicy | undefined): string {
  return policy === undefined ? version : `${version}+abstain`;
}

/**
 * A grading template that offers `cannot_assess`: the rule joins the "How to decide" list and
 * each reply shape gains the field before its verdict.
 */
export function withAbstainRule(template: string, policy: AbstainPolicy | undefined): string {
  if (policy === undefined) return template;
  const reply = template.lastIndexOf('\n\nReply with a JSON object');
  if (reply < 0) throw new RubricateError('INTERNAL', 'a grading template has no reply-format paragraph to extend with cannot_assess');
  const body = template.slice(reply).replaceAll('"criteria_met": <true or false>', '"cannot_assess": <true or false>, "criteria_met": <true or false>').replaceAll('"choice": "', '"cannot_assess": <true or false>, "choice": "');
  return `${template.slice(0, reply)}\n${abstainRule}${body}`;
}

const abstainSchemaMemo = new WeakMap<object, Record<string, unknown>>();

/** A verdict's reply schema with the required boolean `cannot_assess` before its verdict field. */
export function withAbstainField(schema: Record<string, unknown>): Record<string, unknown> {
  let extended = abstainSchemaMemo.get(schema);
  if (extended) return extended;
  const properties = schema.properties as Record<string, unknown>;
  const ordered: Record<string, unknown> = {};
  if ('explanation' in properties) ordered.explanation = properties.explanation;
  ordered.cannot_assess = { type: 'boolean' };
  for (const [name, property] of Object.entries(properties)) if (name !== 'explanation') ordered[name] = property;
  const required = (schema.required as string[]).filter((name) => name !== 'explanation');
  extended = { ...schema, properties: ordered, required: [...('explanation' in properties ? ['explanation'] : []), 'cannot_assess', ...required] };
  abstainSchemaMemo.set(schema, extended);
  return extended;
}

/**
 * Whether a reply entry abstains: true or false as written, absent (a verdict without the
 * field is an assessment), or an error for anything else.
 */
export function readCannotAssess(entry: Record<string, unknown>, criterionId: string): boolean | RubricateError {
  if (entry.cannot_assess === undefined || entry.cannot_assess === null) return false;
  const value = readBoolean(entry.cannot_assess);
  if (value === undefined) return new RubricateError('JUDGE_UNPARSEABLE', `"cannot_assess" for criterion ${criterionId} is ${JSON.stringify(entry.cannot_assess)}, not true or false`);
  return value;
}

/** The verdict of an abstention before a policy counts it: not met, worth nothing, marked. */
export function abstention(explanation: string | undefined): CriterionVerdict {
  return { met: false, value: 0, cannotAssess: true, source: 'judge', ...(explanation !== undefined ? { explanation } : {}) };
}

/** One criterion's result under the policy: `not_met` and `half` score it, `skip` and `fail` leave it out (and `fail` fails the item). */
export function applyAbstainPolicy(result: CriterionResult, policy: AbstainPolicy | undefined): CriterionResult {
  const verdict = result.verdict;
  if (policy === undefined || result.status !== 'ok' || !verdict?.cannotAssess) return result;
  if (policy === 'not_met') return { ...result, verdict: { ...verdict, met: false, value: 0 } };
  if (policy === 'half') return { ...result, verdict: { ...verdict, met: false, value: 0.5 } };
  return { ...result, status: 'skipped', skipReason: cannotAssessReason };
}

/** Whether an item fails as a whole under the policy: `fail`, and a criterion abstained. */
export function failsItem(results: readonly CriterionResult[], policy: AbstainPolicy | undefined): boolean {
  return policy === 'fail' && results.some((result) => result.verdict?.cannotAssess === true);
}

/** A hard rule the item fails: not met, unless it abstained and the policy gave it half its points. */
export function failsHardRule(result: CriterionResult | undefined): boolean {
  return result?.status === 'ok' && result.verdict?.met === false && !(result.verdict.cannotAssess && result.verdict.value > 0);
}
