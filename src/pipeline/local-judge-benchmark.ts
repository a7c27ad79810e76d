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
import { pinnedExplanationCharacters, withExplanationLength } from '../grading/explanation.js';
import type { ExplanationLength, GradingPlan } from '../spec/run-spec.js';
import type { ChatMessage, Judge } from '../judges/types.js';
import { createLlamaCppJudge, type LlamaCppJudge } from '../judges/llamacpp/llamacpp-judge.js';
import { measureRawThroughput, type RawThroughput } from '../judges/llamacpp/measurement.js';
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
  generatedTokensPerCriterion: number;
  secondsPerHealthBenchExample: number;
  projectedHoursFor100Examples: number;
  /** This plan's time per criterion ÷ the naive plan's. */
  ratioToNaive?: number;
}

export interface LocalBenchmarkOptions {
  modelPath: string;
  items: Item[];
  threads?: number;
  contextSize?: number;
  plans?: LocalGradingPlan[];
  /** Random-weight model: pin explanation lengths so plans are comparable. */
  pinExplanations?: boolean;
  /** Criteria graded per plan at most (items are taken in order, whole). */
  criteriaPerPlan?: number;
  onProgress?: (message: string) => void;
}

export interface LocalBenchmarkReport {
  cores: number;
  threads: number;
  raw: RawThroughput;
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
  const threads = options.threads ?? Math.max(1, os.availableParallelism() - 1);
  const progress = options.onProgress ?? (() => undefined);
  progress(`raw llama.cpp throughput (${threads} thread(s)) …`);
  const raw = await measureRawThroughput(options.modelPath, { threads });
  progress(`raw: prefill ${raw.prefillTokensPerSecond.toFixed(1)} tokens/s, decode ${raw.decodeTokensPerSecond.toFixed(2)} tokens/s`);
  const plans: PlanMeasurement[] = [];
  const items = takeCriteria(options.items, options.criteriaPerPlan ?? 12);
  for (const plan of options.plans ?? localGradingPlans) {
    progress(`plan: ${plan.name} …`);
    const local = await createLlamaCppJudge({ model: options.modelPath, threads, sequences: 1, contextSize: options.contextSize ?? 4096, reusePrefix: plan.reusePrefix });
    const judge = withExplanationLength(local, plan.explanation, options.pinExplanations ?? false);
    let calls = 0;
    let promptTokens = 0;
    let reusedTokens = 0;
    let generatedTokens = 0;
    const counting: Judge = {
      provenance: judge.provenance,
      capabilities: { ...judge.capabilities, maxConcurrency: 1 },
      async complete(request, callOptions) {
        const reply = await judge.complete(request, callOptions);
        calls += 1;
        promptTokens += reply.usage.inputTokens;
        reusedTokens += reply.usage.cachedInputTokens;
        generatedTokens += reply.usage.outputTokens;
        return reply;
      },
    };
    try {
      const grader = new Grader({
        judge: counting,
        calls: { concurrency: 1, maxAttempts: 1, timeoutMs: 3_600_000 },
        plan: { ...gradingPlanOf(plan), sampling: { temperature: 0, maxTokens: plan.criteriaPerCall === 1 ? 512 : 4096 } },
      });
      const started = process.hrtime.bigint();
      let criteria = 0;
      let errors = 0;
      for (const item of items) {
        const record = await grader.gradeItem(item);
        for (const criterion of record.criteria ?? []) {
          criteria += 1;
          if (criterion.status !== 'ok') errors += 1;
        }
      }
      const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
      const measured = planFigures(plan, { criteria, calls, errors, wallSeconds }, { promptTokens, reusedTokens, generatedTokens });
      plans.push(measured);
      const secondsPerCriterion = measured.secondsPerCriterion;
      progress(`  ${criteria} criteria in ${wallSeconds.toFixed(1)} s (${secondsPerCriterion.toFixed(2)} s/criterion, ${errors} errors)`);
    } finally {
      await local.close();
    }
  }
  return finishReport(threads, raw, plans, false);
}

function planFigures(
  plan: LocalGradingPlan,
  run: { criteria: number; calls: number; errors: number; wallSeconds: number },
  tokens: { promptTokens: number; reusedTokens: number; generatedTokens: number },
): PlanMeasurement {
  const criteria = Math.max(1, run.criteria);
  const secondsPerCriterion = run.wallSeconds / criteria;
  const secondsPerExample = secondsPerCriterion * healthBenchCriteriaPerExample;
  return {
    plan: plan.name,
    criteria: run.criteria,
    calls: run.calls,
    errors: run.errors,
    wallSeconds: run.wallSeconds,
    criteriaPerSecond: run.criteria / run.wallSeconds,
    secondsPerCriterion,
    prefillTokensPerCriterion: (tokens.promptTokens - tokens.reusedTokens) / criteria,
    reusedTokensPerCriterion: tokens.reusedTokens / criteria,
    generatedTokensPerCriterion: tokens.generatedTokens / criteria,
    secondsPerHealthBenchExample: secondsPerExample,
    projectedHoursFor100Examples: (secondsPerExample * healthBenchExamples) / 3600,
  };
}

/** Ratios to the naive plan (only when it was run: it is always first) and the process's peak RSS. */
function finishReport(threads: number, raw: RawThroughput, plans: PlanMeasurement[], projected: boolean): LocalBenchmarkReport {
  const naive = plans[0]?.plan === localGradingPlans[0]?.name ? plans[0] : undefined;
  if (naive) for (const plan of plans) plan.ratioToNaive = plan.secondsPerCriterion / naive.secondsPerCriterion;
  return { cores: os.availableParallelism(), threads, raw, plans, peakRssMb: process.resourceUsage().maxRSS / 1024, projected };
}

/**
 * The quick mode of `rubricate bench-local` (about a minute even for a 4B model on 2 cores):
 * measure only the raw speed, count each plan's tokens with the model's tokenizer without
 * generating (prompt tokens evaluated, prompt tokens a kept prefix serves, reply tokens at
 * the pinned explanation lengths), and project time = prefill ÷ prefill speed + reply ÷
 * decode speed. Grammar sampling and scheduling are not in the projection, so measured runs
 * come out somewhat slower; docs/benchmarks.md compares the two.
 */
export async function projectLocalBenchmark(options: Omit<LocalBenchmarkOptions, 'pinExplanations'>): Promise<LocalBenchmarkReport> {
  const threads = options.threads ?? Math.max(1, os.availableParallelism() - 1);
  const progress = options.onProgress ?? (() => undefined);
  progress(`raw llama.cpp throughput (${threads} thread(s)) …`);
  const raw = await measureRawThroughput(options.modelPath, { threads, prefillTokens: 256, decodeTokens: 16 });
  progress(`raw: prefill ${raw.prefillTokensPerSecond.toFixed(1)} tokens/s, decode ${raw.decodeTokensPerSecond.toFixed(2)} tokens/s; counting each plan's tokens …`);
  const items = takeCriteria(options.items, options.criteriaPerPlan ?? 12);
  const judge = await createLlamaCppJudge({ model: options.modelPath, threads, sequences: 1, contextSize: 256 });
  const plans: PlanMeasurement[] = [];
  try {
    for (const plan of options.plans ?? localGradingPlans) {
      const counts = await countPlanTokens(judge, plan, items);
      const secondsPerCriterion = (counts.prefillTokens / raw.prefillTokensPerSecond + counts.generatedTokens / raw.decodeTokensPerSecond) / counts.criteria;
      plans.push(planFigures(plan, { criteria: counts.criteria, calls: counts.calls, errors: 0, wallSeconds: secondsPerCriterion * counts.criteria }, counts));
    }
  } finally {
    await judge.close();
  }
  return finishReport(threads, raw, plans, true);
}

interface PlanTokenCounts {
  criteria: number;
  calls: number;
  promptTokens: number;
  prefillTokens: number;
  reusedTokens: number;
  generatedTokens: number;
}

/** A reply at the pinned explanation length, in English-like text, as the reply tokens of one verdict. */
function representativeExplanation(length: ExplanationLength): string {
  if (length === 'none') return '';
  const sentence = 'The response advises same-day care and names the warning signs but does not mention the interaction it should. ';
  return sentence.repeat(4).slice(0, pinnedExplanationCharacters[length]);
}

/** Tokens one plan evaluates, reuses and generates on these items, as one sequence would see them. */
async function countPlanTokens(judge: Pick<LlamaCppJudge, 'promptTokenIds' | 'countTextTokens'>, plan: LocalGradingPlan, items: Item[]): Promise<PlanTokenCounts> {
  const strategy = createStrategy(gradingPlanOf(plan));
  const explanation = representativeExplanation(plan.explanation);
  const counts: PlanTokenCounts = { criteria: 0, calls: 0, promptTokens: 0, prefillTokens: 0, reusedTokens: 0, generatedTokens: 0 };
  let previous: readonly number[] = [];
  for (const item of items) {
    for (const task of strategy.plan(item, item.rubric.criteria)) {
      const tokens = judge.promptTokenIds(task.request.messages);
      let reused = 0;
      const reusable = plan.reusePrefix ? Math.min(previous.length, tokens.length - 1) : 0;
      while (reused < reusable && previous[reused] === tokens[reused]) reused += 1;
      previous = tokens;
      counts.calls += 1;
      counts.criteria += task.criteria.length;
      counts.promptTokens += tokens.length;
      counts.reusedTokens += reused;
      counts.prefillTokens += tokens.length - reused;
      if (plan.criteriaPerCall === 1) {
        // No explanation: the verdict-only path reads one token's logits (binary and probability alike).
        counts.generatedTokens += plan.explanation === 'none' ? 1 : judge.countTextTokens(JSON.stringify({ explanation, criteria_met: true }));
      } else {
        const verdicts = Object.fromEntries(task.criteria.map((criterion) => [criterion.id, plan.explanation === 'none' ? { criteria_met: true } : { explanation, criteria_met: true }]));
        counts.generatedTokens += judge.countTextTokens(JSON.stringify({ verdicts }));
      }
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

/** Formats a report as the table `rubricate bench-local` prints and docs/benchmarks.md shows. */
export function formatLocalBenchmark(report: LocalBenchmarkReport, modelLabel: string): string {
  const lines: string[] = [];
  const fixed = (value: number, digits = 2) => (Number.isFinite(value) ? value.toFixed(digits) : '–');
  lines.push(`model: ${modelLabel}`);
  lines.push(`cores: ${report.cores}, llama.cpp threads: ${report.threads}, peak RSS: ${fixed(report.peakRssMb, 0)} MB`);
  lines.push(
    `raw: prefill ${fixed(report.raw.prefillTokensPerSecond, 1)} tokens/s (${report.raw.prefillTokens} tokens), decode ${fixed(report.raw.decodeTokensPerSecond, 2)} tokens/s (${report.raw.decodeTokens} tokens)`,
  );
  if (report.projected) lines.push('plan times projected from the raw speed and each plan\'s token counts (no verdicts generated); measured runs add grammar and scheduling time');
  lines.push('');
  lines.push('| plan | criteria | calls | criteria/s | s/criterion | × naive | prefill tok/criterion | reused tok/criterion | generated tok/criterion | s per HealthBench example | 100 examples (h) |');
  lines.push('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const plan of report.plans) {
    lines.push(
      `| ${plan.plan} | ${plan.criteria}${plan.errors ? ` (${plan.errors} errors)` : ''} | ${plan.calls} | ${fixed(plan.criteriaPerSecond, 3)} | ${fixed(plan.secondsPerCriterion, 2)} | ${fixed(plan.ratioToNaive ?? Number.NaN, 2)} | ${fixed(plan.prefillTokensPerCriterion, 0)} | ${fixed(plan.reusedTokensPerCriterion, 0)} | ${fixed(plan.generatedTokensPerCriterion, 1)} | ${fixed(plan.secondsPerHealthBenchExample, 0)} | ${fixed(plan.projectedHoursFor100Examples, 2)} |`,
    );
  }
  return lines.join('\n');
}

export function assertPlansKnown(names: string[]): LocalGradingPlan[] {
  const plans = names.map((name) => localGradingPlans.find((plan) => plan.name === name));
  const missing = names.filter((_, index) => plans[index] === undefined);
  if (missing.length > 0) throw new RubricateError('CONFIG_INVALID', `unknown plan(s): ${missing.join(', ')}`, { field: 'plans' });
  return plans as LocalGradingPlan[];
}
