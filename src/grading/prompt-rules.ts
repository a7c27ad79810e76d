/**
 * The rules a run adds to rubricate's own grading prompts, applied in one place and one order:
 * the explanation length rewrites the reply-format sentence, abstaining adds its rule and the
 * `cannot_assess` field, an alignment adds the rule about its examples. Each rule also marks the
 * template version, so that the replies of one set of rules never answer another from the cache.
 */
import type { Alignment } from '../spec/alignment.js';
import type { AbstainPolicy, ExplanationLength } from '../spec/run-spec.js';
import { abstainVersion, withAbstainRule } from './abstain.js';
import { alignedVersion, withExamplesRule } from './alignment.js';
import { explanationVersion, withExplanationRule } from './explanation.js';

/** The settings the prompt rules read; an absent one leaves the template as it is. */
export interface PromptRuleSettings {
  explanation?: ExplanationLength;
  abstain?: AbstainPolicy;
  alignment?: Alignment;
}

/** Which reply sentence the explanation rule rewrites; a template without one (pairwise) keeps its own explanation. */
export type ReplyKind = Parameters<typeof withExplanationRule>[1];

interface PromptRule {
  apply(template: string, kind: ReplyKind | undefined, settings: PromptRuleSettings): string;
  version(version: string, settings: PromptRuleSettings): string;
}

/** In the order they are applied (a later rule sees the earlier ones' text). */
const promptRules: readonly PromptRule[] = [
  {
    apply: (template, kind, { explanation }) => (kind === undefined ? template : withExplanationRule(template, kind, explanation ?? 'full')),
    version: (version, { explanation }) => explanationVersion(version, explanation ?? 'full'),
  },
  { apply: (template, _kind, { abstain }) => withAbstainRule(template, abstain), version: (version, { abstain }) => abstainVersion(version, abstain) },
  { apply: (template, _kind, { alignment }) => withExamplesRule(template, alignment), version: (version, { alignment }) => alignedVersion(version, alignment) },
];

/** A grading template with every rule the settings ask for. */
export function withPromptRules(template: string, kind: ReplyKind | undefined, settings: PromptRuleSettings): string {
  return promptRules.reduce((text, rule) => rule.apply(text, kind, settings), template);
}

/** The template version under the same rules. */
export function promptRulesVersion(version: string, settings: PromptRuleSettings): string {
  return promptRules.reduce((marked, rule) => rule.version(marked, settings), version);
}
