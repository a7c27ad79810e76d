/**
 * The rubric model. Input shapes are validated by zod at the edges (importers, HTTP);
 * inside, everything works on the normalised types exported at the bottom.
 */
import { z } from 'zod';
import type { SerializedError } from '../errors.js';
import { trajectoryInputSchema, type Trajectory } from '../trajectory/trajectory.js';
import type { ItemImage } from '../images/images.js';

const finiteNumber = z.number().refine(Number.isFinite, { message: 'must be a finite number (not NaN or Infinity)' });

/**
 * A free-form object kept exactly as given. A "__proto__" key is refused: it cannot survive as
 * an ordinary key (copying the object would drop it silently).
 */
export const freeObjectSchema = z
  .custom<Record<string, unknown>>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), { message: 'expected an object' })
  .refine((value) => !Object.hasOwn(value, '__proto__'), { message: 'the key "__proto__" is not allowed', path: ['__proto__'] });

/** A tag: any string but "__proto__", which could not be a key of the per-tag metrics. */
const tagSchema = z.string().refine((tag) => tag !== '__proto__', { message: 'the tag "__proto__" is not allowed' });

/** One ordered choice of an ordinal scale; choices are listed worst → best. */
export const scaleChoiceSchema = z.object({
  label: z.string().min(1),
  /** Normalised value in [0, 1]; defaults to index ÷ (choices − 1). */
  value: finiteNumber.min(0).max(1).optional(),
  description: z.string().optional(),
});

export const scaleSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('binary') }),
  z.object({
    type: z.literal('ordinal'),
    choices: z.array(scaleChoiceSchema).min(2, 'an ordinal scale needs at least two choices'),
    /** Label treated as "met" in binary views (e.g. ResearchRubrics maps Partially → Not). */
    metThreshold: finiteNumber.min(0).max(1).optional(),
  }),
]);

/**
 * A deterministic verifier. `type` names a registered check (see src/checks); the other
 * fields are its parameters, validated by that check's own schema.
 */
export const checkSpecSchema = z.looseObject({ type: z.string().min(1) });

/** How a hierarchical criterion's sub-checks combine into its score. */
export const subcheckRuleSchema = z.enum(['all', 'fraction', 'penalty']);

/**
 * Which assistant turn of a conversation a criterion is about: the last (the graded response,
 * the default), every one, or the Nth (1-based among the assistant turns).
 */
export const criterionTurnSchema = z.union([z.literal('last'), z.literal('every'), z.int().positive()]);

/** How a criterion's verdicts on several turns fold into one: their mean, their minimum, or met only when all are. */
export const turnAggregateSchema = z.enum(['mean', 'min', 'all']);

/**
 * How a step-scoped criterion's per-step values fold into its value (process rewards, see
 * src/rubric/steps.ts): their minimum, their mean, the last step's, or a discounted mean
 * Σ γ^(k−1)·v_k ÷ Σ γ^(k−1) over steps k = 1…n with the declared γ in (0, 1].
 */
export const stepAggregateSchema = z.union([
  z.enum(['min', 'mean', 'last']),
  z.strictObject({ rule: z.enum(['min', 'mean', 'last']) }),
  z.strictObject({ rule: z.literal('discounted'), gamma: z.number().gt(0, 'gamma must be above 0').max(1, 'gamma must be at most 1') }),
]);

/**
 * A criterion's condition: it applies only when the criterion `criterion` got `verdict`. A boolean
 * reads the parent's binary view (met or not; an ordinal parent's met threshold); a label or a list
 * of labels (any of them) reads an ordinal parent's chosen label.
 */
export const criterionConditionSchema = z.object({
  criterion: z.union([z.string().min(1), z.number()]),
  verdict: z.union([z.boolean(), z.string().min(1), z.array(z.string().min(1)).min(1, 'a list of labels needs at least one label')]),
});

export const criterionInputSchema = z.object({
  id: z.union([z.string().min(1), z.number()]).optional(),
  text: z.string().trim().min(1, 'criterion text must not be empty'),
  /** Signed points; when absent, from `importance` (see the rubric's scheme), else 1. */
  points: finiteNumber.optional(),
  /** An importance class (Essential, Pitfall, Critical, …) that sets the points when they are absent. */
  importance: z.string().min(1).optional(),
  tags: z.array(tagSchema).default([]),
  kind: z.enum(['principle', 'hard_rule']).default('principle'),
  scale: scaleSchema.optional(),
  check: checkSpecSchema.optional(),
  /** Binary questions that decide this criterion together (hierarchical criteria). */
  subchecks: z.array(z.string().min(1)).min(1).optional(),
  subcheckRule: subcheckRuleSchema.optional(),
  /** Penalty per failed sub-check for the `penalty` rule, floored at 0. */
  subcheckPenalty: finiteNumber.min(0).optional(),
  /** Per-turn grading of a conversation: each turn judged with the conversation up to it as context. */
  turn: criterionTurnSchema.optional(),
  /** `step`: judged on every step of an agent trajectory (process rewards); `response` (the default): on the whole. */
  scope: z.enum(['response', 'step']).optional(),
  /** Conditional criterion: graded only when every condition holds, else "not applicable" (see src/rubric/conditions.ts). */
  when: z.union([criterionConditionSchema, z.array(criterionConditionSchema).min(1, '`when` needs at least one condition')]).optional(),
  metadata: freeObjectSchema.optional(),
});

export const rubricInputSchema = z.object({
  id: z.union([z.string().min(1), z.number()]).optional(),
  criteria: z.array(criterionInputSchema).min(1, 'a rubric needs at least one criterion'),
  /** `hard_rules`: a failed hard rule scores the item 0 and skips its judge criteria. */
  gate: z.enum(['hard_rules']).optional(),
  /** How importance classes map to points: rar (default), profbench or prbench. */
  importance_scheme: z.enum(['rar', 'profbench', 'prbench']).optional(),
  /** Per-rubric overrides of the scheme, e.g. {"Pitfall": -3}. */
  importance_points: freeObjectSchema.pipe(z.record(z.string(), finiteNumber)).optional(),
  /** How the verdicts of a criterion graded on several turns fold into its verdict (default mean). */
  turn_aggregate: turnAggregateSchema.optional(),
  /** How the per-step values of step-scoped criteria fold into each one's value (default mean). */
  step_aggregate: stepAggregateSchema.optional(),
  /**
   * Named reward components and their weights, e.g. {"axis:accuracy": 2, "criterion:c3": 1}: a
   * name is a tag (the criteria carrying it) or `criterion:<id>`. When given, the reward is
   * their weighted sum (see src/server/reward-components.ts).
   */
  reward_components: freeObjectSchema.pipe(z.record(z.string().min(1), finiteNumber.min(0))).optional(),
  metadata: freeObjectSchema.optional(),
});

/** Content part types an item may carry: text (OpenAI chat and Responses spellings) and images. */
export const contentPartTypes: readonly string[] = ['text', 'input_text', 'image_url'];

const imageUrlSchema = z.object({ url: z.string().min(1), detail: z.string().optional() });

/**
 * A text part, or an image part {type: "image_url", image_url: {url}} (data URL, http(s) URL or a path relative to the input file).
 * The type is checked first, so an unknown part is named by its `type`, not by a shape it was never meant to have.
 */
export const contentPartSchema = z
  .looseObject({ type: z.string().optional(), text: z.unknown().optional(), image_url: z.unknown().optional() })
  .superRefine((part, context) => {
    if (part.type !== undefined && !contentPartTypes.includes(part.type)) {
      context.addIssue({ code: 'custom', path: ['type'], message: `content part of type "${part.type}" is not supported (${contentPartTypes.join(', ')} are)` });
      return;
    }
    if (part.text !== undefined && typeof part.text !== 'string') context.addIssue({ code: 'custom', path: ['text'], message: `expected string, got ${part.text === null ? 'null' : typeof part.text}` });
    const isImage = part.type === 'image_url' || (part.type === undefined && part.image_url !== undefined);
    if (!isImage) return;
    const image = imageUrlSchema.safeParse(part.image_url);
    for (const issue of image.success ? [] : image.error.issues) context.addIssue({ code: 'custom', path: ['image_url', ...issue.path.map((segment) => (typeof segment === 'symbol' ? String(segment) : segment))], message: issue.message });
  })
  .transform((part) => part as { type?: string; text?: string; image_url?: { url: string; detail?: string }; [key: string]: unknown });

export const messageInputSchema = z.object({
  role: z.string().min(1),
  content: z.union([z.string(), z.array(contentPartSchema)]),
});

export const itemInputSchema = z
  .object({
    id: z.union([z.string().min(1), z.number()]),
    prompt: z.union([z.string(), z.array(messageInputSchema).min(1, 'prompt needs at least one message')]),
    /** The text graded, or an agent trajectory: OpenAI-style messages with tool calls and results. */
    response: z.union([z.string(), trajectoryInputSchema, z.array(contentPartSchema).min(1)]),
    rubric: rubricInputSchema.optional(),
    rubric_id: z.union([z.string().min(1), z.number()]).optional(),
    reference: z.union([z.string(), z.array(contentPartSchema).min(1)]).optional(),
    /** Item-level tags (HealthBench example_tags); item scores are reported per tag. */
    tags: z.array(tagSchema).optional(),
    metadata: freeObjectSchema.optional(),
  })
  .refine((item) => item.rubric !== undefined || item.rubric_id !== undefined, {
    message: 'an item needs either `rubric` or `rubric_id`',
    path: ['rubric'],
  });

export type ScaleChoice = z.infer<typeof scaleChoiceSchema>;
export type Scale = z.infer<typeof scaleSchema>;
export type CheckSpec = z.infer<typeof checkSpecSchema>;
export type SubcheckRule = z.infer<typeof subcheckRuleSchema>;
export type CriterionTurn = z.infer<typeof criterionTurnSchema>;
export type TurnAggregate = z.infer<typeof turnAggregateSchema>;
/** A declared step fold, as normalised. */
export type StepAggregate = { rule: 'min' | 'mean' | 'last' } | { rule: 'discounted'; gamma: number };
/** A condition as normalised: the parent's id, and `true`/`false` (its met view) or the labels that satisfy it. */
export interface CriterionCondition {
  criterion: string;
  verdict: boolean | string[];
}
export type CriterionInput = z.input<typeof criterionInputSchema>;
export type RubricInput = z.input<typeof rubricInputSchema>;
export type ItemInput = z.input<typeof itemInputSchema>;

export interface Criterion {
  id: string;
  text: string;
  points: number;
  tags: string[];
  kind: 'principle' | 'hard_rule';
  scale?: Scale;
  check?: CheckSpec;
  subchecks?: string[];
  subcheckRule?: SubcheckRule;
  subcheckPenalty?: number;
  /** Absent: the last turn (the response). */
  turn?: CriterionTurn;
  /** `step`: graded on each step of a trajectory (process rewards); absent: on the whole response. */
  scope?: 'step';
  /** Absent: always graded. Else graded only when every condition holds (all on criteria of the same rubric). */
  when?: CriterionCondition[];
  metadata?: Record<string, unknown>;
}

export interface Rubric {
  id: string;
  criteria: Criterion[];
  gate?: 'hard_rules';
  /** Absent: `mean` (only read when a criterion is graded on several turns). */
  turnAggregate?: TurnAggregate;
  /** Absent: `mean` (only read when a criterion is step-scoped). */
  stepAggregate?: StepAggregate;
  /** Declared reward components: name → weight (`reward_components`). */
  rewardComponents?: Record<string, number>;
  metadata?: Record<string, unknown>;
}

export interface Message {
  role: string;
  content: string;
}

/**
 * Where a response sampled from the model under test came from (`rubricate eval`), written on its
 * results line as `sampled`. With `error`, the model gave no usable response: the item is not graded.
 */
export interface SampledResponse {
  /** The model spec as written (`openai:gpt-4.1-mini`, `scripted`). */
  model: string;
  /** Made up by `--model scripted`: no model was asked. */
  scripted?: true;
  /** The endpoint, without credentials (absent for local and scripted models). */
  endpoint?: string;
  /** This response's place among the prompt's samples (from 0) and their number. */
  sample: number;
  samples: number;
  /** The sampling settings sent (absent: the model's default). */
  settings: Record<string, unknown>;
  /** sha256 of the request: model, endpoint, messages, settings and sample index (the cache key). */
  request_sha256: string;
  usage?: { input_tokens: number; output_tokens: number; cached_input_tokens: number };
  /** Answered through the provider's Batch API (`eval --batch`, billed at its batch discount); a cached response keeps it. */
  batch?: true;
  finish_reason?: string;
  latency_ms?: number;
  /** When the model answered (a cached response keeps the time it was first sampled). */
  sampled_at?: string;
  error?: SerializedError;
}

export interface Item {
  id: string;
  prompt: Message[];
  /** The graded text; for a trajectory, its numbered-step rendering (what judges read). */
  response: string;
  /** The response as an agent trajectory, when it was given as messages (read by trajectory checks). */
  trajectory?: Trajectory;
  /** Images of the prompt, reference and response, in order; their placeholders stand in the text. */
  images?: ItemImage[];
  rubric: Rubric;
  reference?: string;
  tags?: string[];
  metadata?: Record<string, unknown>;
  /** The response was sampled from the model under test (`rubricate eval`): its provenance. */
  sampled?: SampledResponse;
}

/** Which of a pair's responses is better, or neither: a gold label or a judge's verdict. */
export type PairLabel = 'A' | 'B' | 'tie';

/** Two responses to one prompt, judged against each other (LLMBar, PandaLM, JudgeBench, …). */
export interface PairwiseItem {
  id: string;
  prompt: Message[];
  responseA: string;
  responseB: string;
  /** Gold preference when the data has one. */
  label?: PairLabel;
  /** Optional rubric: pairwise verdicts per criterion as well as overall. */
  rubric?: Rubric;
  /** Subset or category the pair comes from (LLMBar set, JudgeBench source, HHH source). */
  source?: string;
  metadata?: Record<string, unknown>;
}

/**
 * A prompt with several candidate responses, the correct ones first (RewardBench 2's chosen then
 * rejected; RM-Bench's three chosen then three rejected styles): what best-of-N benchmarks judge.
 */
export interface BestOfNItem {
  id: string;
  prompt: Message[];
  responses: string[];
  /** How many of `responses`, from the first, are correct. */
  correct: number;
  /** The benchmark's subset (RewardBench 2) or domain (RM-Bench). */
  subset: string;
  metadata?: Record<string, unknown>;
}
