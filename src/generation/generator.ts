/**
 * The rubric generator: a Judge (any endpoint, or the local model) driven by the versioned
 * generation prompts, with schema-constrained answers, bounded retries, and provenance in
 * every rubric it writes (`metadata.generation`).
 */
import type { ReplyStore } from '../store/index.js';
import { emptyUsage, type Usage } from '../engine/usage.js';
import type { Judge, JudgeProvenance, JudgeRequest } from '../judges/types.js';
import type { Criterion, CriterionInput, Message, Rubric } from '../rubric/schema.js';
import { rubricateVersion } from '../version.js';
import { checkCatalogue, type CheckRegistryLike } from './check-catalogue.js';
import { comparableText, convertCriteria, rubricFromInputs, importanceOf, readCriteriaAnswer, type CheckTally, type ConvertCriteriaOptions, type GeneratedCriterion } from './criteria.js';
import { callGenerator, type ReadResult } from './generator-call.js';
import { defaultImportancePoints, type ImportancePoints } from './importance.js';
import {
  contrastiveMessages,
  criteriaOutputSchema,
  decomposeMessages,
  evolveMessages,
  generateMessages,
  promptVersions,
  refineMessages,
  reviseMessages,
  type MissedCriterion,
  type RubricPromptContext,
} from './prompts.js';
import { redactUrl } from '../util/redact.js';
import { recordedSampling, requestSampling } from '../grading/sampling.js';

export interface GeneratorSampling {
  temperature: number;
  maxTokens: number;
  seed?: number;
}

/**
 * The generator's sampling when none is given.
 *
 * @example
 * ```ts
 * import { createJudge } from 'rubricate';
 * import { createRubricGenerator, defaultGeneratorSampling } from 'rubricate/generation';
 * const generator = createRubricGenerator({ generator: await createJudge({ model: 'openai:gpt-4.1' }), sampling: { ...defaultGeneratorSampling, temperature: 0 } });
 * ```
 */
export const defaultGeneratorSampling: GeneratorSampling = { temperature: 0.7, maxTokens: 4096 };

export interface RubricGeneratorOptions {
  generator: Judge;
  importancePoints?: ImportancePoints;
  minCriteria?: number;
  maxCriteria?: number;
  sampling?: Partial<GeneratorSampling>;
  /** Calls per generation before its error is final (transport failures and rejected answers alike). */
  maxAttempts?: number;
  timeoutMs?: number;
  retryBaseDelayMs?: number;
  store?: ReplyStore;
  signal?: AbortSignal;
  /** Checks offered to the generator (default: the check registry). */
  checkRegistry?: CheckRegistryLike;
  validateCheck?: ConvertCriteriaOptions['validateCheck'];
  /** Mark generated rubrics `gate: "hard_rules"` (a failed hard rule zeroes the item). */
  gate?: boolean;
  /** Generator calls in flight at most (also capped by the judge's own maxConcurrency). */
  concurrency?: number;
}

/** What `metadata.generation` of a generated rubric records. */
export interface GenerationProvenance {
  method: 'generate' | 'contrastive' | 'refine';
  prompt_version: string;
  generator: { id: string; model: string; base_url?: string };
  sampling: { temperature: number; max_tokens: number; seed?: number };
  /** Which sample of the same request this is (rejection-sampling attempt, from 0). */
  sample: number;
  checks: CheckTally;
  warnings?: string[];
  rubricate_version: string;
  [key: string]: unknown;
}

export interface GeneratedRubric {
  rubric: Rubric;
  warnings: string[];
  checks: CheckTally;
  /** Generator calls this rubric took (0 when read from the store). */
  calls: number;
}

export interface GeneratedCriteria {
  criteria: CriterionInput[];
  warnings: string[];
  checks: CheckTally;
}

export interface CallContext {
  /** Repeated samples of one request (rejection sampling) are numbered from 0. */
  sample?: number;
  /** Rubric id to use (default: derived from the rubric's content). */
  id?: string;
  /** Extra fields for `metadata.generation`. */
  extra?: Record<string, unknown>;
}

export interface RefineInput {
  prompt: readonly Message[];
  rubric: Rubric;
  responses: [string, string];
  scores: [number | null, number | null];
  /** Per criterion id, the verdicts of the two responses. */
  verdicts: ReadonlyMap<string, [boolean | null, boolean | null]>;
  reference?: string;
}

export interface RubricGenerator {
  readonly provenance: JudgeProvenance;
  readonly sampling: GeneratorSampling;
  readonly importancePoints: ImportancePoints;
  readonly minCriteria: number;
  readonly maxCriteria: number;
  /** Tokens, calls, retries and store hits of every call made so far. */
  readonly usage: Usage;
  /** A rubric for a prompt (optionally with a reference answer). */
  generate(input: { prompt: readonly Message[]; reference?: string }, context?: CallContext): Promise<GeneratedRubric>;
  /** A rubric that explains why `chosen` beats `rejected`. */
  contrast(input: { prompt: readonly Message[]; chosen: string; rejected: string; reference?: string }, context?: CallContext): Promise<GeneratedRubric>;
  /** The rubric revised so the two responses are told apart. */
  refine(input: RefineInput, context?: CallContext): Promise<GeneratedRubric>;
  /** Finer criteria to replace one that (almost) every response meets or fails. */
  decompose(input: { prompt: readonly Message[]; criterion: Criterion; passRate: number; examples: readonly string[] }, context?: CallContext): Promise<GeneratedCriteria>;
  /** New criteria from the differences between rollouts (evolving rubrics). */
  propose(
    input: { prompt: readonly Message[]; rollouts: readonly string[]; referenceRollouts?: readonly string[]; existing: readonly Criterion[]; maxNew: number },
    context?: CallContext,
  ): Promise<GeneratedCriteria>;
  /**
   * Criteria for a task whose messages the caller built (query-agnostic distillation's templates),
   * with the same schema, retries, cache and check validation as every other task.
   */
  askCriteria(promptVersion: string, messages: JudgeRequest['messages'], bounds: { minItems: number; maxItems: number }, context?: CallContext): Promise<GeneratedCriteria>;
  /** What the generation prompts are told: importance points, criteria counts, the check catalogue. */
  readonly promptContext: RubricPromptContext;
  /** One response to the prompt, sampled from the generator model (plain text, no schema). */
  sampleResponse(prompt: readonly Message[], options: ResponseOptions): Promise<string>;
  /** A revision of `response` that fixes the criteria it missed (plain text); an empty or unreadable answer is an error. */
  reviseResponse(input: { prompt: readonly Message[]; response: string; missed: readonly MissedCriterion[] }, options: ResponseOptions): Promise<string>;
}

/** Sampling of a response the generator writes: which sample (a cache key part), temperature, length. */
export interface ResponseOptions {
  sample: number;
  temperature?: number;
  maxTokens?: number;
}

/** What every generator call reads: the settings, the prompt context, the usage it adds to, the concurrency limit. */
interface GeneratorState {
  options: RubricGeneratorOptions;
  importancePoints: ImportancePoints;
  minCriteria: number;
  maxCriteria: number;
  sampling: GeneratorSampling;
  usage: Usage;
  catalogue: ReturnType<typeof checkCatalogue>;
  checkTypes: string[];
  promptContext: RubricPromptContext;
  provenance: JudgeProvenance;
  limit: ReturnType<typeof createSemaphore>;
}

function generatorState(options: RubricGeneratorOptions): GeneratorState {
  const importancePoints = options.importancePoints ?? defaultImportancePoints;
  const minCriteria = options.minCriteria ?? 7;
  const maxCriteria = options.maxCriteria ?? 20;
  const catalogue = checkCatalogue(options.checkRegistry);
  return {
    options,
    importancePoints,
    minCriteria,
    maxCriteria,
    sampling: { ...defaultGeneratorSampling, ...options.sampling },
    usage: emptyUsage(),
    catalogue,
    checkTypes: catalogue.map((entry) => entry.type),
    promptContext: { importancePoints, minCriteria, maxCriteria, catalogue },
    provenance: options.generator.provenance,
    limit: createSemaphore(Math.max(1, Math.min(options.concurrency ?? Number.POSITIVE_INFINITY, options.generator.capabilities.maxConcurrency ?? Number.POSITIVE_INFINITY))),
  };
}

/**
 * A rubric generator on a model: rubrics from prompts (and references), checked and normalised.
 *
 * @example
 * ```ts
 * import { createJudge } from 'rubricate';
 * import { createRubricGenerator } from 'rubricate/generation';
 * const generator = createRubricGenerator({ generator: await createJudge({ model: 'openai:gpt-4.1' }), maxCriteria: 12 });
 * const { rubric, warnings } = await generator.generate({ prompt: [{ role: 'user', content: 'Plan a week of vegetarian dinners.' }] });
 * ```
 */
export function createRubricGenerator(options: RubricGeneratorOptions): RubricGenerator {
  const state = generatorState(options);
  const { importancePoints, catalogue } = state;
  return {
    provenance: state.provenance,
    sampling: state.sampling,
    importancePoints,
    minCriteria: state.minCriteria,
    maxCriteria: state.maxCriteria,
    usage: state.usage,
    generate(input, context) {
      return rubricFrom(state, 'generate', promptVersions.generate, generateMessages(input, state.promptContext), context);
    },
    contrast(input, context) {
      return rubricFrom(state, 'contrastive', promptVersions.contrastive, contrastiveMessages(input, state.promptContext), context);
    },
    refine(input, context) {
      return refineRubricWith(state, input, context);
    },
    async decompose(input, context = {}) {
      const bounds = { minItems: 2, maxItems: 5 };
      const messages = decomposeMessages(
        {
          prompt: input.prompt,
          criterion: { text: input.criterion.text, importance: importanceOf(input.criterion, importancePoints), kind: input.criterion.kind },
          passRate: input.passRate,
          examples: input.examples,
        },
        { importancePoints, catalogue, minParts: bounds.minItems, maxParts: bounds.maxItems },
      );
      return criteriaFrom(state, promptVersions.decompose, messages, bounds, context.sample ?? 0);
    },
    propose(input, context = {}) {
      const bounds = { minItems: 0, maxItems: Math.max(0, input.maxNew) };
      const messages = evolveMessages(
        {
          prompt: input.prompt,
          rollouts: input.rollouts,
          referenceRollouts: input.referenceRollouts,
          existing: input.existing.map((criterion) => ({ text: criterion.text, importance: importanceOf(criterion, importancePoints) })),
        },
        { importancePoints, catalogue, maxNew: bounds.maxItems },
      );
      return criteriaFrom(state, promptVersions.evolve, messages, bounds, context.sample ?? 0);
    },
    askCriteria(promptVersion, messages, bounds, context = {}) {
      return criteriaFrom(state, promptVersion, messages, bounds, context.sample ?? 0);
    },
    promptContext: state.promptContext,
    sampleResponse(prompt, sampleOptions) {
      return writeResponse(state, prompt.map((message) => ({ role: chatRole(message.role), content: message.content })), promptVersions.respond, sampleOptions);
    },
    reviseResponse(input, reviseOptions) {
      return writeResponse(state, reviseMessages(input), promptVersions.revise, reviseOptions);
    },
  };
}

function criteriaRequest(state: GeneratorState, messages: JudgeRequest['messages'], minItems: number, maxItems: number): JudgeRequest {
  const { sampling } = state;
  return {
    messages,
    output: criteriaOutputSchema({ minItems, maxItems, checkTypes: state.checkTypes }),
    ...requestSampling(sampling),
  };
}

async function askForCriteria(state: GeneratorState, promptVersion: string, messages: JudgeRequest['messages'], bounds: { minItems: number; maxItems: number }, sample: number) {
  const { options } = state;
  return state.limit(() => callGenerator<GeneratedCriterion[]>({
    generator: options.generator,
    request: criteriaRequest(state, messages, bounds.minItems, bounds.maxItems),
    promptVersion,
    read: (value) => readCriteriaAnswer(value, bounds),
    maxAttempts: options.maxAttempts,
    timeoutMs: options.timeoutMs,
    retryBaseDelayMs: options.retryBaseDelayMs,
    signal: options.signal,
    store: options.store,
    sample,
    usage: state.usage,
  }));
}

async function criteriaFrom(state: GeneratorState, promptVersion: string, messages: JudgeRequest['messages'], bounds: { minItems: number; maxItems: number }, sample: number): Promise<GeneratedCriteria> {
  const answer = await askForCriteria(state, promptVersion, messages, bounds, sample);
  return convertCriteria(answer.value, { importancePoints: state.importancePoints, validateCheck: state.options.validateCheck });
}

function provenanceRecord(state: GeneratorState, method: GenerationProvenance['method'], promptVersion: string, sample: number, checks: CheckTally, warnings: string[], extra?: Record<string, unknown>): GenerationProvenance {
  const { provenance, sampling } = state;
  return {
    method,
    prompt_version: promptVersion,
    generator: { id: provenance.id, model: provenance.model, ...(provenance.baseUrl ? { base_url: redactUrl(provenance.baseUrl) } : {}) },
    sampling: recordedSampling(sampling),
    sample,
    checks,
    ...(warnings.length > 0 ? { warnings } : {}),
    rubricate_version: rubricateVersion,
    ...extra,
  };
}

/** A criterion copied unchanged from the previous rubric keeps its id, so rounds can be compared criterion by criterion. */
function keepPreviousIds(criteria: CriterionInput[], previous: Rubric): void {
  const idsByText = new Map(previous.criteria.map((criterion) => [comparableText(criterion.text), criterion.id]));
  const used = new Set<string>();
  for (const criterion of criteria) {
    const id = idsByText.get(comparableText(criterion.text));
    if (id !== undefined && !used.has(id)) {
      criterion.id = id;
      used.add(id);
    }
  }
}

async function rubricFrom(
  state: GeneratorState,
  method: GenerationProvenance['method'],
  promptVersion: string,
  messages: JudgeRequest['messages'],
  context: CallContext = {},
  previous?: Rubric,
): Promise<GeneratedRubric> {
  const sample = context.sample ?? 0;
  const answer = await askForCriteria(state, promptVersion, messages, { minItems: state.minCriteria, maxItems: state.maxCriteria }, sample);
  const conversion = convertCriteria(answer.value, { importancePoints: state.importancePoints, validateCheck: state.options.validateCheck });
  if (previous) keepPreviousIds(conversion.criteria, previous);
  const rubric = rubricFromInputs(conversion.criteria, {
    gate: state.options.gate,
    id: context.id,
    metadata: { generation: provenanceRecord(state, method, promptVersion, sample, conversion.checks, conversion.warnings, context.extra) },
  });
  return { rubric, warnings: conversion.warnings, checks: conversion.checks, calls: answer.calls };
}

function refineRubricWith(state: GeneratorState, input: RefineInput, context?: CallContext): Promise<GeneratedRubric> {
  const views = input.rubric.criteria.map((criterion) => ({
    id: criterion.id,
    text: criterion.text,
    importance: importanceOf(criterion, state.importancePoints),
    kind: criterion.kind,
    verdicts: input.verdicts.get(criterion.id) ?? ([null, null] as [null, null]),
  }));
  const messages = refineMessages({ prompt: input.prompt, criteria: views, responses: input.responses, scores: input.scores, reference: input.reference }, state.promptContext);
  return rubricFrom(state, 'refine', promptVersions.refine, messages, context, input.rubric);
}

/** A plain-text answer of the generator (a response, a revision); empty is an error after the attempts. */
async function writeResponse(state: GeneratorState, messages: JudgeRequest['messages'], promptVersion: string, sampleOptions: ResponseOptions): Promise<string> {
  const { options, sampling } = state;
  const result = await state.limit(() => callGenerator<string>({
    generator: options.generator,
    request: {
      messages,
      ...requestSampling({ temperature: sampleOptions.temperature ?? 1, maxTokens: sampleOptions.maxTokens ?? 1024, seed: sampling.seed === undefined ? undefined : sampling.seed + sampleOptions.sample }),
    },
    promptVersion,
    replyFormat: 'text',
    read: readResponseText,
    maxAttempts: options.maxAttempts,
    timeoutMs: options.timeoutMs,
    retryBaseDelayMs: options.retryBaseDelayMs,
    signal: options.signal,
    store: options.store,
    sample: sampleOptions.sample,
    usage: state.usage,
  }));
  return result.value;
}

/** At most `limit` tasks at once; a released slot goes straight to the next waiter. */
function createSemaphore(limit: number) {
  let active = 0;
  const waiting: Array<() => void> = [];
  return async <T>(task: () => Promise<T>): Promise<T> => {
    if (active >= limit) await new Promise<void>((resolve) => waiting.push(resolve));
    else active += 1;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else active -= 1;
    }
  };
}

function chatRole(role: string): 'system' | 'user' | 'assistant' {
  return role === 'system' || role === 'assistant' ? role : 'user';
}

const thinkBlock = /<think>[\s\S]*?<\/think>/gi;

function readResponseText(value: unknown): ReadResult<string> {
  const text = typeof value === 'string' ? value.replace(thinkBlock, '').trim() : '';
  return text === '' ? { ok: false, reason: 'empty response' } : { ok: true, value: text };
}
