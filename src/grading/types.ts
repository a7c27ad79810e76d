import type { RubricateError, SerializedError } from '../errors.js';
import type { JudgeReply, JudgeRequest, JudgeToolCall } from '../judges/types.js';
import type { ModelLimits } from '../judges/profiles.js';
import type { Criterion, Item, TurnAggregate, StepAggregate } from '../rubric/schema.js';

/** What a judge or a check concluded about one criterion. */
export interface CriterionVerdict {
  /** Binary view: met or not (ordinal: value ≥ the scale's threshold). */
  met: boolean;
  /** Score fraction in [0, 1]: 1/0 for binary, the choice's value for ordinal, P(met) for probability verdicts. */
  value: number;
  /** The chosen label on an ordinal scale. */
  label?: string;
  /** P(met) from token probabilities, when asked for. */
  probability?: number;
  /** The judge answered that it could not assess the criterion (`--abstain`); `met` and `value` are then the policy's. */
  cannotAssess?: boolean;
  explanation?: string;
  source: 'judge' | 'check';
  /** Verdicts of a hierarchical criterion's sub-checks, in order. */
  subchecks?: Array<{ text: string; met: boolean; explanation?: string }>;
  /** The criterion was judged on excerpts of a response too long for the judge's context. */
  evidence?: { chunks: number; quotes: number };
  /** Trajectory items: the step numbers the explanation cites. */
  steps?: number[];
  /** `--verdict expected-score`: the probability-weighted mean of the scale's numeric labels (G-Eval), e.g. 3.7 on 1–5. */
  expectedScore?: number;
  /** Code checks (`code-tests`): tests passed of the total, and how the sandboxed run ended. */
  tests?: { passed: number; total: number; ending: 'finished' | 'time_limit' | 'output_limit' };
  /** The model the provider's reply says answered, when it is not the model the judge asked for (a snapshot behind an alias). */
  judgeModel?: string;
  /** Agentic judges: the tool calls made before this verdict. */
  toolCalls?: JudgeToolCall[];
}

/** A criterion's outcome on one assistant turn of a conversation. */
export interface TurnResult {
  /** 1-based among the conversation's assistant turns (the graded response is the last). */
  turn: number;
  status: 'ok' | 'error' | 'skipped';
  verdict?: CriterionVerdict;
  error?: SerializedError;
}

/** A step-scoped criterion's outcome on one step of a trajectory (process rewards, src/rubric/steps.ts). */
export interface StepResult {
  /** 1-based among the trajectory's steps (its assistant messages). */
  step: number;
  status: 'ok' | 'error' | 'skipped';
  verdict?: CriterionVerdict;
  error?: SerializedError;
}

/** The self-preference guard's finding on an item: the model under test, the judge, how they are related, and the run's policy. */
export interface SelfPreferenceNote {
  modelUnderTest: string;
  judge: string;
  relation: 'same-model' | 'same-family' | 'unrelated';
  policy: 'warn' | 'refuse';
}

/** Which judge of a cascade decided a criterion, and why the earlier ones handed it on. */
export interface CascadeDecision {
  decidedBy: string;
  escalations: Array<{ judge: string; reason: string; probability?: number }>;
}

/** A criterion's outcome in an item: a verdict, an error with its reason, or skipped (and why). */
export interface CriterionResult {
  criterion: Criterion;
  source: 'judge' | 'check';
  status: 'ok' | 'error' | 'skipped';
  verdict?: CriterionVerdict;
  error?: SerializedError;
  /** Why a criterion was not graded (e.g. `gated`). */
  skipReason?: string;
  /** Per-turn criteria: the verdict on each turn it applies to, and how they fold into this result. */
  turns?: { aggregate: TurnAggregate; results: TurnResult[] };
  /** Step-scoped criteria: the verdict on each step of the trajectory, and the fold into this result. */
  process?: { aggregate: StepAggregate; results: StepResult[] };
  /** Cascades: the judge that decided it and the escalations before. */
  cascade?: CascadeDecision;
  /** A check that could not decide (the reason), so the judge did (`fallback: "judge"`). */
  checkUndecided?: string;
}

export interface TaskDecision {
  verdicts: Map<string, CriterionVerdict>;
  /** Criteria of the task the reply did not settle, with the reason. */
  errors: Map<string, RubricateError>;
}

/** One judge call: the criteria it decides, the request, and how to read the reply. */
export interface JudgeTask {
  item: Item;
  criteria: Criterion[];
  request: JudgeRequest;
  templateVersion: string;
  /** Distinguishes repeated samples of the same request (juries, self-consistency). */
  sample?: number;
  /**
   * A string that determines the request's messages exactly, cheaper to hash than the
   * messages (digests of the parts shared by an item's tasks, plus the rest). When present
   * the cache key hashes it instead of the messages, and the messages need only be built
   * when the judge is actually called.
   */
  keyMaterial?: string;
  decide(reply: JudgeReply): TaskDecision;
}

/** Where a graded item stood in the group it was judged with (listwise and tournament judging). */
export interface GroupPlacement {
  /** The group's id: its `--group-by` value, else derived from its prompt, rubric and reference. */
  id: string;
  /** Items in the group. */
  members: number;
  /** This item's place in the group, from 0, in input order. */
  index: number;
  /** Share of this response's verdicts (or comparisons) the two presentation orders agreed on; absent with one order. */
  positionConsistency?: number | null;
  /** Tournament: this response's Bradley–Terry strength (the group's sum to 1); null where undefined. */
  bradleyTerry?: number | null;
}

/** A task as the engine ran it (store, dedupe, calls, retries): the reply's decision or the error that ended it. */
export interface TaskOutcome {
  decision?: TaskDecision;
  error?: RubricateError;
  /** Judge calls made for it (0 when the reply came from the store or an identical call in flight). */
  calls: number;
}

export type VerdictMode = 'binary' | 'probability' | 'expected-score';

export interface SamplingOptions {
  temperature: number;
  maxTokens: number;
  seed?: number;
}

/** A grading mode: how an item's judged criteria become judge calls, and back. */
export interface GradingStrategy {
  readonly name: string;
  readonly templateVersion: string;
  /** `limits`: what the judge knows of its output limit and context, so calls can be sized to fit. */
  plan(item: Item, criteria: Criterion[], limits?: ModelLimits): JudgeTask[];
}
