/** What `rubricate lint` reports: one finding per flaw, with the rule that found it and a fix. */

/** Every static rule, by id. The ids are stable: they appear in `--out` files and in `--lint` refusals. */
export const lintRuleIds = [
  'contradictory-criteria',
  'double-counted-criteria',
  'vague-wording',
  'stacked-criterion',
  'duplicate-criterion',
  'near-duplicate-criterion',
  'option-substring',
  'topic-specific-in-generic',
  'weights-unreachable',
  'hard-rule-unverifiable',
] as const;

/** The meta-rubric's findings (`lint --meta`): a judge's reading of the rubric, never an error. */
export const metaRuleIds = ['meta-grounding-unspecified', 'meta-unverifiable-claim', 'meta-overly-strict', 'meta-not-atomic'] as const;

export type LintRuleId = (typeof lintRuleIds)[number] | (typeof metaRuleIds)[number];

/** `error`: the rubric cannot score as written (exit 3, and `--lint` refuses to start); `warning`: worth a look. */
export type LintSeverity = 'error' | 'warning';

/** One finding. The keys are fixed (the `--out` file's columns); absent values are null. */
export interface LintFinding {
  rule: LintRuleId;
  severity: LintSeverity;
  rubric_id: string;
  /** The first item that carries the rubric; null for a rubric read from a rubrics file. */
  item_id: string | null;
  /** Null for a finding about the rubric as a whole. */
  criterion_id: string | null;
  /** The other criterion of a pair (duplicates, contradictions). */
  related_criterion_id: string | null;
  message: string;
  fix: string;
}

export interface LintOptions {
  /** The rubric is meant for any prompt (`--generic`, or `metadata.generic: true` on the rubric). */
  generic?: boolean;
}
