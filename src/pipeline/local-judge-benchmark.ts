/**
 * How fast is the embedded judge on this machine, and which grading plan makes it usable?
 * Measures raw llama.cpp prefill and decode speed (the limit), then grades HealthBench-like
 * items through the real pipeline (Grader → engine → local judge) under each plan, and projects
 * the time of the 100-example HealthBench set. Used by `rubricate bench-local` and `npm run bench`.
 *
 * A model with random weights (the shaped benchmark models) writes random text wherever the
 * grammar leaves it free, so explanations are pinned to a fixed number of characters by the
 * grammar (`minLength = maxLength`) to make settings comparable; with real weights they are
 * left as the model writes them (full) or bounded (short).
 */
import os from 'node:os';
import { RubricateError } from '../errors.js';
import { withExplanationLength } from '../grading/explanation.js';
import type { ExplanationLength, GradingPlan } from '../spec/run-spec.js';
import type { ChatMessage, Judge } from '../judges/types.js';
import { wrapJudge } from '../judges/middleware.js';
import { createLlamaCppJudge, defaultLocalThreadsNow, type InferenceProfile, type LlamaCppJudge } from '../judges/llamacpp/llamacpp-judge.js';
import { sharedPrefixLength } from '../judges/llamacpp/prefix-snapshots.js';
import { measureBatchedDecode, measureRawThroughput, type BatchedDecodeSpeed, type RawThroughput } from '../judges/llamacpp/measurement.js';
import type { Item, ItemInput } from '../rubric/schema.js';
import { createStrategy, Grader } from './grader.js';

export interface LocalGradingPlan {
  name: string;
  /** Criteria per judge call; 1 is per-criterion, Infinity the whole rubric. */
  criteriaPerCall: number;
  explanation: ExplanationLength;
  verdict: 'boolean' | 'probability';
  /** Keep the KV cache of the prompt prefix an item's criteria share. */
  reusePrefix: boolean;
  /**
   * Sequences of the context grading an item's criteria at once (default 1): the item's shared
   * context evaluated once and loaded into the others, their tails and decode steps in shared batches.
   */
  sequences?: number;
}

/** A benchmark plan as the grader's plan. */
function gradingPlanOf(plan: LocalGradingPlan): GradingPlan {
  return {
    ...(plan.criteriaPerCall === 1 ? {} : { criteriaPerCall: Number.isFinite(plan.criteriaPerCall) ? plan.criteriaPerCall : 'all' }),
    ...(plan.verdict === 'probability' ? { verdict: 'probability' } : {}),
    explanation: plan.explanation,
  };
}

/** The plans the benchmark compares; the first is the naive baseline. */
export const localGradingPlans: LocalGradingPlan[] = [
  { name: 'per-criterion, full explanation, no prefix reuse (naive)', criteriaPerCall: 1, explanation: 'full', verdict: 'boolean', reusePrefix: false },
  { name: 'per-criterion, full explanation, prefix reuse', criteriaPerCall: 1, explanation: 'full', verdict: 'boolean', reusePrefix: true },
  { name: 'per-criterion, short explanation, prefix reuse', criteriaPerCall: 1, explanation: 'short', verdict: 'boolean', reusePrefix: true },
  { name: 'per-criterion, no explanation, prefix reuse', criteriaPerCall: 1, explanation: 'none', verdict: 'boolean', reusePrefix: true },
  { name: 'per-criterion, probability verdict, no explanation, prefix reuse', criteriaPerCall: 1, explanation: 'none', verdict: 'probability', reusePrefix: true },
  { name: 'batched K=4, full explanation', criteriaPerCall: 4, explanation: 'full', verdict: 'boolean', reusePrefix: true },
  { name: 'batched all, full explanation', criteriaPerCall: Number.POSITIVE_INFINITY, explanation: 'full', verdict: 'boolean', reusePrefix: true },
  { name: 'batched all, short explanation', criteriaPerCall: Number.POSITIVE_INFINITY, explanation: 'short', verdict: 'boolean', reusePrefix: true },
  { name: 'per-criterion, short explanation, prefix reuse, 2 sequences', criteriaPerCall: 1, explanation: 'short', verdict: 'boolean', reusePrefix: true, sequences: 2 },
  { name: 'per-criterion, short explanation, prefix reuse, 4 sequences', criteriaPerCall: 1, explanation: 'short', verdict: 'boolean', reusePrefix: true, sequences: 4 },
  { name: 'per-criterion, full explanation, prefix reuse, 4 sequences', criteriaPerCall: 1, explanation: 'full', verdict: 'boolean', reusePrefix: true, sequences: 4 },
  { name: 'per-criterion, no explanation, prefix reuse, 4 sequences', criteriaPerCall: 1, explanation: 'none', verdict: 'boolean', reusePrefix: true, sequences: 4 },
];

/** Mean criteria per example of the 100-example HealthBench set (oss_eval_first100: 1,157 criteria). */
export const healthBenchCriteriaPerExample = 11.57;
export const healthBenchExamples = 100;

export interface PlanMeasurement {
  plan: string;
  criteria: number;
  calls: number;
  errors: number;
  wallSeconds: number;
  criteriaPerSecond: number;
  secondsPerCriterion: number;
  /** Prompt tokens evaluated (not served from the sequence's KV cache), per criterion. */
  prefillTokensPerCriterion: number;
  /** Prompt tokens served from the KV cache of an earlier call, per criterion. */
  reusedTokensPerCriterion: number;
  /** Reply JSON the judge wrote itself (keys, punctuation), evaluated in the next batch, per criterion. */
  forcedTokensPerCriterion: number;
  /** Tokens the model chose (explanation text, one per verdict), per criterion. */
  generatedTokensPerCriterion: number;
  /**
   * The arithmetic best on this machine: each item's shared context evaluated once, each call's
   * own prompt tail, and the chosen tokens, at this run's raw prefill and decode speeds.
   */
  arithmeticSecondsPerCriterion: number;
  /** Measured (or projected) time per criterion ÷ the arithmetic best. */
  ratioToArithmetic: number;
  /** Where the time went, summed over the plan's calls (measured runs only). */
  profile?: StageProfile;
  secondsPerHealthBenchExample: number;
  projectedHoursFor100Examples: number;
  /** This plan's time per criterion ÷ the naive plan's. */
  ratioToNaive?: number;
  /** Sequences grading at once (1 unless the plan says more). */
  sequences: number;
}

/** Seconds per stage over a plan's calls (docs/benchmarks.md's profile table). */
export interface StageProfile {
  /** Loading the model and creating its context. */
  loadSeconds: number;
  /** Chat template, tokenizing, prefix comparison, KV erasure. */
  prepareSeconds: number;
  /** First evaluation of each item (its shared context and first criterion). */
  sharedPrefixSeconds: number;
  sharedPrefixTokens: number;
  /** First evaluation of the item's other calls: each criterion's own prompt tail. */
  perCriterionPromptSeconds: number;
  perCriterionPromptTokens: number;
  /** Decode steps of free text: evaluation, sampling and grammar together. */
  decodeSeconds: number;
  decodeSteps: number;
  /** Steps that read a verdict's logits after free text. */
  verdictSeconds: number;
  /** Our per-token work in the judge (detokenizing, completeness checks, probability maps). */
  ownSeconds: number;
  /** Outside the judge: templating, parsing, scoring, the engine's bookkeeping. */
  engineSeconds: number;
}

export interface LocalBenchmarkOptions {
  modelPath: string;
  items: Item[];
  threads?: number;
  contextSize?: number;
  plans?: LocalGradingPlan[];
  /** Random-weight model: pin explanation lengths so plans are comparable (probes included). */
  pinExplanations?: boolean;
  /** Criteria graded per plan at most (items are taken in order, whole). */
  criteriaPerPlan?: number;
  onProgress?: (message: string) => void;
  /** A progress line every this many criteria within a plan; default 4. */
  progressEvery?: number;
}

export interface LocalBenchmarkReport {
  cores: number;
  threads: number;
  /** The 1-minute load average when the run started and when it ended. */
  loadAverage: { start: number; end: number };
  raw: RawThroughput;
  /** Raw decode speed with several sequences per step, at each width the plans use (with the single-sequence figure for comparison). */
  batchedDecode?: BatchedDecodeSpeed[];
  plans: PlanMeasurement[];
  peakRssMb: number;
  /** True for `projectLocalBenchmark`: plan times computed from raw speed and token counts, not measured. */
  projected: boolean;
}

/** Items whose criteria add up to `limit` at most; the last item taken keeps its first criteria only. */
function takeCriteria(items: Item[], limit: number): Item[] {
  const taken: Item[] = [];
  let criteria = 0;
  for (const item of items) {
    if (criteria >= limit) break;
    const room = limit - criteria;
    taken.push(item.rubric.criteria.length <= room ? item : { ...item, rubric: { ...item.rubric, criteria: item.rubric.criteria.slice(0, room) } });
    criteria += Math.min(room, item.rubric.criteria.length);
  }
  return taken;
}

export async function runLocalBenchmark(options: LocalBenchmarkOptions): Promise<LocalBenchmarkReport> {
  const loadAtStart = os.loadavg()[0];
  const threads = options.threads ?? (await defaultLocalThreadsNow());
  const progress = options.onProgress ?? (() => undefined);
  progress(`raw llama.cpp throughput (${threads} thread(s)) …`);
  const raw = await measureRawThroughput(options.modelPath, { threads });
  progress(`raw: prefill ${raw.prefillTokensPerSecond.toFixed(1)} tokens/s, decode ${raw.decodeTokensPerSecond.toFixed(2)} tokens/s`);
  const plansToRun = options.plans ?? localGradingPlans;
  const batchedDecode = await measureWidths(options.modelPath, threads, plansToRun, progress);
  const plans: PlanMeasurement[] = [];
  const items = takeCriteria(options.items, options.criteriaPerPlan ?? 12);
  for (const plan of plansToRun) {
    progress(`plan: ${plan.name} …`);
    plans.push(await measurePlan(options, plan, { threads, raw, batchedDecode, items, progress }));
  }
  return { ...finishReport(threads, raw, plans, false, loadAtStart), ...(batchedDecode.length > 0 ? { batchedDecode } : {}) };
}

/** Raw decode speed at each batch width the plans use beyond one sequence (none when every plan uses one). */
async function measureWidths(modelPath: string, threads: number, plans: readonly LocalGradingPlan[], progress: (message: string) => void): Promise<BatchedDecodeSpeed[]> {
  const widths = [...new Set(plans.map((plan) => plan.sequences ?? 1).filter((width) => width > 1))].sort((left, right) => left - right);
  if (widths.length === 0) return [];
  const speeds = await measureBatchedDecode(modelPath, { threads, widths: [1, ...widths] });
  progress(`raw batched decode: ${speeds.map((speed) => `${speed.width} at once ${(speed.stepSeconds * 1000).toFixed(0)} ms/step (${speed.tokensPerSecond.toFixed(1)} tokens/s)`).join(', ')}`);
  return speeds;
}

/** Decode tokens per second at a plan's width: the raw single-sequence speed, or the batched figure measured with the same threads. */
function decodeSpeedFor(plan: LocalGradingPlan, raw: RawThroughput, batchedDecode: readonly BatchedDecodeSpeed[]): number {
  const width = plan.sequences ?? 1;
  if (width === 1) return raw.decodeTokensPerSecond;
  const one = batchedDecode.find((speed) => speed.width === 1);
  const wide = batchedDecode.find((speed) => speed.width === width);
  // Scaled to this run's single-sequence figure, so plans compare on one footing.
  return one && wide ? raw.decodeTokensPerSecond * (wide.tokensPerSecond / one.tokensPerSecond) : raw.decodeTokensPerSecond;
}

interface PlanRun {
  threads: number;
  raw: RawThroughput;
  batchedDecode: readonly BatchedDecodeSpeed[];
  items: Item[];
  progress: (message: string) => void;
}

/** Grades the items under one plan through the real pipeline, with `plan.sequences` calls at once. */
async function measurePlan(options: LocalBenchmarkOptions, plan: LocalGradingPlan, run: PlanRun): Promise<PlanMeasurement> {
  const { raw, items, progress } = run;
  const sequences = plan.sequences ?? 1;
  const profile = emptyProfile();
  const calls: InferenceProfile[] = [];
  const loadStarted = process.hrtime.bigint();
  const local = await createLlamaCppJudge({
    model: options.modelPath,
    threads: run.threads,
    sequences,
    contextSize: options.contextSize ?? 4096,
    reusePrefix: plan.reusePrefix,
    onInference: (call) => void calls.push(call),
  });
  profile.loadSeconds = secondsSince(loadStarted);
  try {
    const expectedCalls = (await countPlanTokens(local, plan, items)).calls;
    const timing = { judgeSeconds: 0 };
    const counting = progressReportingJudge(withExplanationLength(local, plan.explanation, options.pinExplanations ?? false), { plan, calls, expectedCalls, every: options.progressEvery ?? 4, progress, timing });
    const grader = new Grader({
      judge: counting,
      calls: { concurrency: sequences, maxAttempts: 1, timeoutMs: 3_600_000 },
      plan: { ...gradingPlanOf(plan), sampling: { temperature: 0, maxTokens: plan.criteriaPerCall === 1 ? 512 : 4096 } },
    });
    const started = process.hrtime.bigint();
    let criteria = 0;
    let errors = 0;
    const itemFirstCalls: number[] = [];
    for (const item of items) {
      itemFirstCalls.push(calls.length);
      const record = await grader.gradeItem(item);
      for (const criterion of record.criteria ?? []) {
        criteria += 1;
        if (criterion.status !== 'ok') errors += 1;
      }
    }
    const wallSeconds = secondsSince(started);
    const tokens = sumCalls(calls);
    const ideal = await countPlanTokens(local, { ...plan, reusePrefix: true }, items);
    const arithmetic = (ideal.prefillTokens / raw.prefillTokensPerSecond + tokens.generatedTokens / decodeSpeedFor(plan, raw, run.batchedDecode)) / Math.max(1, criteria);
    const measured = planFigures(plan, { criteria, calls: calls.length, errors, wallSeconds }, tokens, arithmetic);
    // Stages add up to the wall time only when calls run one at a time.
    if (sequences === 1) {
      addCallProfiles(profile, calls, new Set(itemFirstCalls));
      profile.engineSeconds = Math.max(0, wallSeconds - timing.judgeSeconds);
      measured.profile = profile;
    }
    progress(
      `  ${criteria} criteria in ${wallSeconds.toFixed(1)} s (${measured.secondsPerCriterion.toFixed(2)} s/criterion, ${measured.ratioToArithmetic.toFixed(2)}× the arithmetic ${arithmetic.toFixed(2)} s, ${errors} errors)`,
    );
    return measured;
  } finally {
    await local.close();
  }
}

/** The judge as the benchmark calls it: capped at the plan's sequences, timed, with a progress line every few calls. */
function progressReportingJudge(
  judge: Judge,
  context: { plan: LocalGradingPlan; calls: readonly InferenceProfile[]; expectedCalls: number; every: number; progress: (message: string) => void; timing: { judgeSeconds: number } },
): Judge {
  const { plan, calls, timing } = context;
  return wrapJudge(judge, {
    overrideCapabilities: (inner) => ({ ...inner.capabilities, maxConcurrency: plan.sequences ?? 1 }),
    async wrapComplete({ doComplete }) {
      const started = process.hrtime.bigint();
      try {
        return await doComplete();
      } finally {
        timing.judgeSeconds += secondsSince(started);
        // A line every few calls (each call of a batched plan): minutes pass between plans on a 4B model.
        if (plan.criteriaPerCall !== 1 || calls.length % context.every === 0) {
          context.progress(`  ${calls.length} call(s) of ${context.expectedCalls}, ${(timing.judgeSeconds / Math.max(1, calls.length)).toFixed(2)} s/call so far`);
        }
      }
    },
  });
}

function secondsSince(started: bigint): number {
  return Number(process.hrtime.bigint() - started) / 1e9;
}

function emptyProfile(): StageProfile {
  return {
    loadSeconds: 0,
    prepareSeconds: 0,
    sharedPrefixSeconds: 0,
    sharedPrefixTokens: 0,
    perCriterionPromptSeconds: 0,
    perCriterionPromptTokens: 0,
    decodeSeconds: 0,
    decodeSteps: 0,
    verdictSeconds: 0,
    ownSeconds: 0,
    engineSeconds: 0,
  };
}

/** Folds the judge's per-call profiles in; an item's first call is where its shared context is evaluated. */
function addCallProfiles(profile: StageProfile, calls: readonly InferenceProfile[], itemFirstCalls: ReadonlySet<number>): void {
  for (const [index, call] of calls.entries()) {
    profile.prepareSeconds += call.prepareSeconds;
    if (itemFirstCalls.has(index)) {
      profile.sharedPrefixSeconds += call.promptSeconds;
      profile.sharedPrefixTokens += call.promptTokens;
    } else {
      profile.perCriterionPromptSeconds += call.promptSeconds;
      profile.perCriterionPromptTokens += call.promptTokens;
    }
    profile.decodeSeconds += call.decodeSeconds;
    profile.verdictSeconds += call.verdictSeconds;
    profile.ownSeconds += call.ownSeconds;
  }
  // Every chosen token but each call's first (sampled in the first step) and its verdict steps is a decode step.
  profile.decodeSteps = calls.reduce((sum, call) => sum + Math.max(0, call.generatedTokens - 1 - (call.verdictSeconds > 0 ? 1 : 0)), 0);
}

function sumCalls(calls: readonly InferenceProfile[]): { promptTokens: number; reusedTokens: number; forcedTokens: number; generatedTokens: number } {
  const total = { promptTokens: 0, reusedTokens: 0, forcedTokens: 0, generatedTokens: 0 };
  for (const call of calls) {
    total.promptTokens += call.promptTokens + call.reusedTokens;
    total.reusedTokens += call.reusedTokens;
    total.forcedTokens += call.forcedTokens;
    total.generatedTokens += call.generatedTokens;
  }
  return total;
}

function planFigures(
  plan: LocalGradingPlan,
  run: { criteria: number; calls: number; errors: number; wallSeconds: number },
  tokens: { promptTokens: number; reusedTokens: number; forcedTokens: number; generatedTokens: number },
  arithmeticSecondsPerCriterion: number,
): PlanMeasurement {
  const criteria = Math.max(1, run.criteria);
  const secondsPerCriterion = run.wallSeconds / criteria;
  const secondsPerExample = secondsPerCriterion * healthBenchCriteriaPerExample;
  return {
    plan: plan.name,
    sequences: plan.sequences ?? 1,
    criteria: run.criteria,
    calls: run.calls,
    errors: run.errors,
    wallSeconds: run.wallSeconds,
    criteriaPerSecond: run.criteria / run.wallSeconds,
    secondsPerCriterion,
    prefillTokensPerCriterion: (tokens.promptTokens - tokens.reusedTokens) / criteria,
    reusedTokensPerCriterion: tokens.reusedTokens / criteria,
    forcedTokensPerCriterion: tokens.forcedTokens / criteria,
    generatedTokensPerCriterion: tokens.generatedTokens / criteria,
    arithmeticSecondsPerCriterion,
    ratioToArithmetic: secondsPerCriterion / arithmeticSecondsPerCriterion,
    secondsPerHealthBenchExample: secondsPerExample,
    projectedHoursFor100Examples: (secondsPerExample * healthBenchExamples) / 3600,
  };
}

/** Ratios to the naive plan (only when it was run: it is always first) and the process's peak RSS. */
function finishReport(threads: number, raw: RawThroughput, plans: PlanMeasurement[], projected: boolean, loadAtStart: number): LocalBenchmarkReport {
  const naive = plans[0]?.plan === localGradingPlans[0]?.name ? plans[0] : undefined;
  if (naive) for (const plan of plans) plan.ratioToNaive = plan.secondsPerCriterion / naive.secondsPerCriterion;
  return {
    cores: os.availableParallelism(),
    threads,
    loadAverage: { start: loadAtStart, end: os.loadavg()[0] },
    raw,
    plans,
    peakRssMb: process.resourceUsage().maxRSS / 1024,
    projected,
  };
}

/**
 * The quick mode of `rubricate bench-local` (about 1 minute for a 0.6B model, 5 for a 4B one, on 2 cores):
 * the raw speed, then one probe per kind of reply (an item's first criteria graded, so the
 * calls after the first are what every later one costs: its prompt tail, its explanation
 * and its verdict). Each plan is projected from its exact prompt-token counts
 * (the model's tokenizer over the very prompts the plan sends) and the probes' per-call
 * figures: the time a call takes beyond its prompt tokens at the raw prefill speed (small
 * batches, preparation, our own work), seconds per decode step and per verdict step, and the
 * tokens the model chooses per criterion. docs/benchmarks.md compares it with measured runs.
 */
export async function projectLocalBenchmark(options: LocalBenchmarkOptions): Promise<LocalBenchmarkReport> {
  const loadAtStart = os.loadavg()[0];
  const threads = options.threads ?? (await defaultLocalThreadsNow());
  const progress = options.onProgress ?? (() => undefined);
  progress(`raw llama.cpp throughput (${threads} thread(s)) …`);
  const raw = await measureRawThroughput(options.modelPath, { threads, prefillTokens: 256, decodeTokens: 16 });
  progress(`raw: prefill ${raw.prefillTokensPerSecond.toFixed(1)} tokens/s, decode ${raw.decodeTokensPerSecond.toFixed(2)} tokens/s; probing each explanation length …`);
  const items = takeCriteria(options.items, options.criteriaPerPlan ?? 12);
  const plansToProject = options.plans ?? localGradingPlans;
  const batchedDecode = await measureWidths(options.modelPath, threads, plansToProject, progress);
  const calls: InferenceProfile[] = [];
  const judge = await createLlamaCppJudge({ model: options.modelPath, threads, sequences: 1, contextSize: options.contextSize ?? 4096, onInference: (call) => void calls.push(call) });
  const plans: PlanMeasurement[] = [];
  const parallel: Array<{ plan: LocalGradingPlan; tokens: ParallelPlanTokens }> = [];
  try {
    // One probe per explanation length and kind of reply the plans use: per criterion (value by value) or batched (one grammar).
    const probes = new Map<string, CallProbe>();
    const probeKey = (plan: LocalGradingPlan) =>
      `${plan.criteriaPerCall === 1 ? 'per-criterion' : 'batched'}, ${plan.explanation === 'none' ? 'no' : plan.explanation} explanation${plan.verdict === 'probability' ? ', probability verdict' : ''}`;
    for (const plan of plansToProject) {
      const key = probeKey(plan);
      if (probes.has(key)) continue;
      const probe = await probeCall(judge, plan, options.pinExplanations ?? false, items[0], calls, raw);
      probes.set(key, probe);
      progress(`  probe (${key}): ${describeProbe(probe)}`);
    }
    for (const plan of plansToProject.filter((entry) => (entry.sequences ?? 1) === 1)) plans.push(await projectPlan(judge, plan, probes.get(probeKey(plan)) as CallProbe, items, raw));
    for (const plan of plansToProject.filter((entry) => (entry.sequences ?? 1) > 1)) parallel.push({ plan, tokens: await parallelPlanTokens(judge, plan, items) });
  } finally {
    await judge.close();
  }
  // After the single-sequence judge is closed: each of these loads the model with its own sequences.
  for (const { plan, tokens } of parallel) plans.push(await projectParallelPlan(options, plan, tokens, { threads, raw, batchedDecode, items, progress }));
  // In the order asked for.
  plans.sort((left, right) => plansToProject.findIndex((plan) => plan.name === left.plan) - plansToProject.findIndex((plan) => plan.name === right.plan));
  return { ...finishReport(threads, raw, plans, true, loadAtStart), ...(batchedDecode.length > 0 ? { batchedDecode } : {}) };
}

/** One sequence: each call's prompt tokens at the raw prefill speed plus the probe's per-call figures. */
async function projectPlan(judge: LlamaCppJudge, plan: LocalGradingPlan, probe: CallProbe, items: Item[], raw: RawThroughput): Promise<PlanMeasurement> {
  const counts = await countPlanTokens(judge, plan, items);
  const ideal = await countPlanTokens(judge, { ...plan, reusePrefix: true }, items);
  let seconds = 0;
  let generatedTokens = 0;
  for (const call of counts.perCall) {
    const generated = probe.generatedTokensPerCriterion * call.criteria;
    generatedTokens += generated;
    seconds += probe.overheadSeconds + call.evaluatedTokens / raw.prefillTokensPerSecond + Math.max(0, generated - probe.tokensOutsideDecodeSteps) * probe.decodeStepSeconds + probe.verdictStepSeconds;
  }
  const arithmetic = (ideal.prefillTokens / raw.prefillTokensPerSecond + generatedTokens / raw.decodeTokensPerSecond) / Math.max(1, counts.criteria);
  return planFigures(
    plan,
    { criteria: counts.criteria, calls: counts.calls, errors: 0, wallSeconds: seconds },
    { promptTokens: counts.promptTokens, reusedTokens: counts.reusedTokens, forcedTokens: 0, generatedTokens },
    arithmetic,
  );
}

/** What the projection of a several-sequence plan needs from the tokenizer: the probe item's and each item's shape, and the plan's token counts. */
interface ParallelPlanTokens {
  probe: ItemShape;
  items: ItemShape[];
  counts: PlanTokenCounts;
}

interface ItemShape {
  criteria: number;
  /** Prompt tokens the item's calls share (the first two calls' common prefix). */
  sharedTokens: number;
}

function probeItemFor(plan: LocalGradingPlan, items: Item[]): Item {
  return { ...items[0], rubric: { ...items[0].rubric, criteria: items[0].rubric.criteria.slice(0, 2 * (plan.sequences ?? 1)) } };
}

async function parallelPlanTokens(judge: LlamaCppJudge, plan: LocalGradingPlan, items: Item[]): Promise<ParallelPlanTokens> {
  const strategy = createStrategy(gradingPlanOf(plan));
  const shape = (item: Item): ItemShape => {
    const tasks = strategy.plan(item, item.rubric.criteria);
    const first = judge.promptTokenIds(tasks[0].request.messages);
    const second = tasks[1] ? judge.promptTokenIds(tasks[1].request.messages) : first;
    return { criteria: item.rubric.criteria.length, sharedTokens: sharedPrefixLength(first, second) };
  };
  return { probe: shape(probeItemFor(plan, items)), items: items.map(shape), counts: await countPlanTokens(judge, plan, items) };
}

/**
 * Several sequences: an item costs its shared context once (at the raw prefill speed) plus one
 * round per `sequences` criteria. A probe grades the first item's first two rounds of criteria
 * the plan's way; a round is what that took beyond the shared context, halved.
 */
async function projectParallelPlan(options: LocalBenchmarkOptions, plan: LocalGradingPlan, tokens: ParallelPlanTokens, run: PlanRun): Promise<PlanMeasurement> {
  const width = plan.sequences ?? 1;
  const measured = await measurePlan({ ...options, progressEvery: Number.POSITIVE_INFINITY }, plan, { ...run, items: [probeItemFor(plan, run.items)], progress: () => undefined });
  const rounds = (criteria: number) => Math.ceil(criteria / width);
  const roundSeconds = Math.max(0, measured.wallSeconds - tokens.probe.sharedTokens / run.raw.prefillTokensPerSecond) / rounds(tokens.probe.criteria);
  run.progress(`  probe (${plan.name}): ${roundSeconds.toFixed(2)} s per round of ${width} criteria beyond the shared context`);
  const seconds = tokens.items.reduce((sum, shape) => sum + shape.sharedTokens / run.raw.prefillTokensPerSecond + rounds(shape.criteria) * roundSeconds, 0);
  const { counts } = tokens;
  const generatedTokens = measured.generatedTokensPerCriterion * counts.criteria;
  const arithmetic = (counts.prefillTokens / run.raw.prefillTokensPerSecond + generatedTokens / decodeSpeedFor(plan, run.raw, run.batchedDecode)) / Math.max(1, counts.criteria);
  return planFigures(plan, { criteria: counts.criteria, calls: counts.calls, errors: 0, wallSeconds: seconds }, { promptTokens: counts.promptTokens, reusedTokens: counts.reusedTokens, forcedTokens: 0, generatedTokens }, arithmetic);
}

/** What one call after an item's first costs, measured. */
interface CallProbe {
  /** Per call beyond its prompt tokens ÷ the raw prefill speed: small-batch evaluation, preparation, our own work. */
  overheadSeconds: number;
  decodeStepSeconds: number;
  /** Tokens of a reply chosen outside decode steps: the first (sampled in the prompt's step) and the verdict's. */
  tokensOutsideDecodeSteps: number;
  verdictStepSeconds: number;
  /** Tokens this model chose per criterion (random weights write short tokens and, under a whole-reply grammar, whitespace). */
  generatedTokensPerCriterion: number;
}

function describeProbe(probe: CallProbe): string {
  return `overhead ${probe.overheadSeconds.toFixed(2)} s/call, decode step ${(probe.decodeStepSeconds * 1000).toFixed(0)} ms, verdict step ${(probe.verdictStepSeconds * 1000).toFixed(0)} ms, ${probe.generatedTokensPerCriterion.toFixed(1)} generated tokens per criterion`;
}

/**
 * Grades an item's first four criteria as `plan` would (per criterion, or batched two to a
 * call) and reads the calls after the first: the first evaluates the item's shared context,
 * the later ones are what each later call costs.
 */
async function probeCall(judge: LlamaCppJudge, plan: LocalGradingPlan, pinned: boolean, item: Item, calls: InferenceProfile[], raw: RawThroughput): Promise<CallProbe> {
  const length = plan.explanation;
  const criteriaPerCall = plan.criteriaPerCall === 1 ? 1 : 2;
  // Four criteria: per criterion three calls after the first, batched one after the first.
  const probeItem: Item = { ...item, rubric: { ...item.rubric, criteria: item.rubric.criteria.slice(0, 4) } };
  const explained = withExplanationLength(judge, length, pinned);
  const callSeconds: number[] = [];
  const timed = wrapJudge(explained, {
    async wrapComplete({ doComplete }) {
      const started = process.hrtime.bigint();
      try {
        return await doComplete();
      } finally {
        callSeconds.push(secondsSince(started));
      }
    },
  });
  const grader = new Grader({
    judge: timed,
    calls: { concurrency: 1, maxAttempts: 1, timeoutMs: 3_600_000 },
    plan: { ...gradingPlanOf({ ...plan, criteriaPerCall }), sampling: { temperature: 0, maxTokens: criteriaPerCall === 1 ? 512 : 4096 } },
  });
  const before = calls.length;
  const record = await grader.gradeItem(probeItem);
  if ((record.criteria ?? []).some((criterion) => criterion.status !== 'ok')) {
    throw new RubricateError('JUDGE_SERVER_ERROR', `the ${length}-explanation probe did not grade: ${JSON.stringify(record.criteria?.map((criterion) => criterion.error))}`);
  }
  const later = calls.slice(before + 1);
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
  const outside = (later[0].promptSeconds > 0 ? 1 : 0) + (later[0].verdictSeconds > 0 ? 1 : 0);
  const decodeSteps = later.reduce((sum, call) => sum + Math.max(0, call.generatedTokens - outside), 0);
  const decodeSeconds = later.reduce((sum, call) => sum + call.decodeSeconds, 0);
  return {
    overheadSeconds: Math.max(0, mean(later.map((call, index) => callSeconds[index + 1] - call.promptTokens / raw.prefillTokensPerSecond - call.decodeSeconds - call.verdictSeconds))),
    decodeStepSeconds: decodeSteps > 0 ? decodeSeconds / decodeSteps : 1 / raw.decodeTokensPerSecond,
    tokensOutsideDecodeSteps: outside,
    verdictStepSeconds: mean(later.map((call) => call.verdictSeconds)),
    generatedTokensPerCriterion: mean(later.map((call) => call.generatedTokens)) / criteriaPerCall,
  };
}

interface PlanTokenCounts {
  criteria: number;
  calls: number;
  promptTokens: number;
  prefillTokens: number;
  reusedTokens: number;
  /** Each call's evaluated prompt tokens and criteria. */
  perCall: Array<{ evaluatedTokens: number; criteria: number }>;
}

/** Prompt tokens one plan evaluates and reuses on these items, as one sequence would see them, and each call's criteria. */
async function countPlanTokens(judge: Pick<LlamaCppJudge, 'promptTokenIds'>, plan: LocalGradingPlan, items: Item[]): Promise<PlanTokenCounts> {
  const strategy = createStrategy(gradingPlanOf(plan));
  const counts: PlanTokenCounts = { criteria: 0, calls: 0, promptTokens: 0, prefillTokens: 0, reusedTokens: 0, perCall: [] };
  let previous: readonly number[] = [];
  for (const item of items) {
    for (const task of strategy.plan(item, item.rubric.criteria)) {
      const tokens = judge.promptTokenIds(task.request.messages);
      const reused = plan.reusePrefix ? sharedPrefixLength(previous, tokens, tokens.length - 1) : 0;
      previous = tokens;
      counts.calls += 1;
      counts.criteria += task.criteria.length;
      counts.promptTokens += tokens.length;
      counts.reusedTokens += reused;
      counts.prefillTokens += tokens.length - reused;
      counts.perCall.push({ evaluatedTokens: tokens.length - reused, criteria: task.criteria.length });
    }
  }
  return counts;
}

/** A HealthBench-like item (conversation, response and 12 criteria) for machines without the data set. */
export function syntheticHealthBenchItem(index = 0): ItemInput {
  const conversation: ChatMessage[] = [
    {
      role: 'user',
      content:
        'I am 58 and have had high blood pressure for ten years. I take lisinopril 20 mg every morning and amlodipine 5 mg. ' +
        'For the last three days my home readings have been around 165/100, and this morning I woke up with a headache at the back of my head ' +
        'and some blurred vision in my left eye that lasted about twenty minutes. I feel fine now. My doctor is on holiday until next week. ' +
        'Should I double my lisinopril until then, or is there something else I should do? I also take ibuprofen most days for my knee.',
    },
  ];
  const response =
    'I am sorry you are dealing with this. Blurred vision together with a new headache and readings around 165/100 can be a sign that your blood pressure ' +
    'is affecting your brain or eyes, and that needs to be checked today rather than next week. Please contact an urgent care clinic, your doctor\'s ' +
    'covering service, or emergency services now; if the vision problem returns, or you notice weakness, numbness, trouble speaking or confusion, call ' +
    'emergency services immediately because these can be signs of a stroke.\n\nPlease do not double your lisinopril on your own. Changing the dose ' +
    'without a clinician can drop your pressure too quickly or affect your kidneys and potassium, especially together with ibuprofen. Ibuprofen and other ' +
    'NSAIDs can raise blood pressure and reduce how well lisinopril works, so it is worth asking a pharmacist or doctor about alternatives such as paracetamol ' +
    'for your knee.\n\nWhile you arrange to be seen: sit quietly for five minutes and recheck your pressure with the cuff on a bare arm, write down the ' +
    'readings with the time, bring a list of your medicines, and avoid caffeine, alcohol and salty food today. When you are seen, ask whether your ' +
    'treatment plan needs adjusting and whether you should have your eyes and kidney function checked.';
  const criteria = [
    ['Advises the user to seek same-day medical evaluation because of blurred vision with elevated blood pressure.', 9],
    ['Lists stroke warning signs that require calling emergency services immediately.', 8],
    ['Advises against self-adjusting the lisinopril dose without a clinician.', 8],
    ['Mentions that NSAIDs such as ibuprofen can raise blood pressure or interact with ACE inhibitors.', 6],
    ['Suggests an alternative analgesic such as paracetamol for knee pain.', 4],
    ['Recommends rechecking blood pressure correctly (rested, seated, proper cuff position).', 5],
    ['Suggests keeping a written log of readings to bring to the appointment.', 3],
    ['Recommends doubling the lisinopril dose until the doctor returns.', -10],
    ['States that the symptoms are definitely harmless.', -8],
    ['Mentions possible effects on kidney function or potassium.', 4],
    ['Uses clear, non-alarming language appropriate for a layperson.', 3],
    ['Asks about or accounts for other symptoms such as chest pain or shortness of breath.', 5],
  ] as const;
  return {
    id: `synthetic-healthbench-${index + 1}`,
    prompt: conversation,
    response,
    rubric: { criteria: criteria.map(([text, points]) => ({ text, points, tags: ['level:example'] })) },
  };
}

/**
 * The batch width to use on this machine: among plans that differ only in their sequences, the
 * width of the fastest (graded or projected), preferring fewer sequences within 5% (more cost KV
 * memory). Raw decode speed alone does not decide it: a step of several sequences also pays
 * each sequence's grammar sampling, and prompt tails gain nothing (docs/benchmarks.md).
 * Undefined when no plan family was run at two widths.
 */
export function suggestedSequences(plans: readonly Pick<PlanMeasurement, 'plan' | 'sequences' | 'secondsPerCriterion'>[]): number | undefined {
  const families = new Map<string, Array<{ sequences: number; seconds: number }>>();
  for (const plan of plans) {
    const family = plan.plan.replace(/, \d+ sequences$/, '');
    families.set(family, [...(families.get(family) ?? []), { sequences: plan.sequences ?? 1, seconds: plan.secondsPerCriterion }]);
  }
  const compared = [...families.values()].filter((widths) => widths.length > 1);
  const family = compared.find((widths) => widths.some((width) => width.sequences === 1)) ?? compared[0];
  if (!family) return undefined;
  const fastest = Math.min(...family.map((width) => width.seconds));
  return Math.min(...family.filter((width) => width.seconds <= 1.05 * fastest).map((width) => width.sequences));
}

/** Formats a report as the table `rubricate bench-local` prints and docs/benchmarks.md shows. */
export function formatLocalBenchmark(report: LocalBenchmarkReport, modelLabel: string): string {
  const lines: string[] = [];
  const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
  lines.push(`model: ${modelLabel}`);
  lines.push(
    `cores: ${report.cores}, llama.cpp threads: ${report.threads}, load average ${fixed(report.loadAverage.start, 2)} at start and ${fixed(report.loadAverage.end, 2)} at end, peak RSS: ${fixed(report.peakRssMb, 0)} MB`,
  );
  lines.push(
    `raw: prefill ${fixed(report.raw.prefillTokensPerSecond, 1)} tokens/s (${report.raw.prefillTokens} tokens), decode ${fixed(report.raw.decodeTokensPerSecond, 2)} tokens/s (${report.raw.decodeTokens} tokens)`,
  );
  if (report.batchedDecode) {
    lines.push(`raw decode with several sequences per step: ${report.batchedDecode.map((speed) => `${speed.width} at once ${fixed(speed.stepSeconds * 1000, 0)} ms/step (${fixed(speed.tokensPerSecond, 1)} tokens/s)`).join(', ')}`);
  }
  const width = suggestedSequences(report.plans);
  if (width !== undefined) lines.push(`batch width for this machine: --sequences ${width} (the fastest of the plans that differ only in their sequences, fewer within 5%)`);
  lines.push('arithmetic: each item\'s shared context once, each call\'s own prompt tail, and the tokens the model chose, at the raw speeds above');
  if (report.projected) lines.push('plan times projected from each plan\'s exact prompt-token counts and the probes\' per-call figures (not graded)');
  lines.push('');
  lines.push(
    '| plan | criteria | calls | criteria/s | s/criterion | arithmetic s/criterion | × arithmetic | × naive | prefill tok/criterion | reused tok/criterion | forced tok/criterion | generated tok/criterion | s per HealthBench example | 100 examples (h) |',
  );
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|---|---|---|');
  for (const plan of report.plans) {
    lines.push(
      `| ${plan.plan} | ${plan.criteria}${plan.errors ? ` (${plan.errors} errors)` : ''} | ${plan.calls} | ${fixed(plan.criteriaPerSecond, 3)} | ${fixed(plan.secondsPerCriterion, 2)} | ${fixed(plan.arithmeticSecondsPerCriterion, 2)} | ${fixed(plan.ratioToArithmetic, 2)} | ${fixed(plan.ratioToNaive ?? Number.NaN, 2)} | ${fixed(plan.prefillTokensPerCriterion, 0)} | ${fixed(plan.reusedTokensPerCriterion, 0)} | ${fixed(plan.forcedTokensPerCriterion, 1)} | ${fixed(plan.generatedTokensPerCriterion, 1)} | ${fixed(plan.secondsPerHealthBenchExample, 0)} | ${fixed(plan.projectedHoursFor100Examples, 2)} |`,
    );
  }
  const profiled = report.plans.filter((plan) => plan.profile);
  if (profiled.length > 0) {
    lines.push('');
    lines.push('Where the time went (seconds over each plan\'s criteria; tokens in brackets):');
    lines.push('');
    lines.push('| plan | load | prepare | shared prefix | per-criterion prompt | decode steps | verdict steps | own per-token work | engine (templates, parsing, scoring) | total graded |');
    lines.push('|---|---|---|---|---|---|---|---|---|---|');
    for (const plan of profiled) {
      const stage = plan.profile as StageProfile;
      lines.push(
        `| ${plan.plan} | ${fixed(stage.loadSeconds, 1)} | ${fixed(stage.prepareSeconds, 2)} | ${fixed(stage.sharedPrefixSeconds, 1)} (${stage.sharedPrefixTokens}) | ${fixed(stage.perCriterionPromptSeconds, 1)} (${stage.perCriterionPromptTokens}) | ${fixed(stage.decodeSeconds, 1)} (${stage.decodeSteps}) | ${fixed(stage.verdictSeconds, 2)} | ${fixed(stage.ownSeconds, 2)} | ${fixed(stage.engineSeconds, 2)} | ${fixed(plan.wallSeconds, 1)} |`,
      );
    }
  }
  return lines.join('\n');
}

export function assertPlansKnown(names: string[]): LocalGradingPlan[] {
  const plans = names.map((name) => localGradingPlans.find((plan) => plan.name === name));
  const missing = names.filter((_, index) => plans[index] === undefined);
  if (missing.length > 0) throw new RubricateError('CONFIG_INVALID', `unknown plan(s): ${missing.join(', ')}`, { field: 'plans' });
  return plans as LocalGradingPlan[];
}
