/**
 * What a user of the embedded local judge sees: the grading plan at start-up, and once the
 * first items are graded, how long the whole run will take at that pace. A long projection
 * comes with the settings that make it shorter (measured with `rubricate bench-local`).
 */
import type { EngineEvent } from '../engine/engine.js';
import type { ExplanationLength } from '../spec/run-spec.js';

export interface LocalPlan {
  judgeId: string;
  /** Criteria per call; undefined or 1 is per-criterion. */
  criteriaPerCall?: number;
  explanation: ExplanationLength;
  verdict: 'binary' | 'probability' | 'expected-score';
  /** llama.cpp threads the judge chose (the math cores the load average left free, unless given). */
  threads?: number;
  /** Sequences of the context grading at once (`--sequences`); named when more than one. */
  sequences?: number;
}

/** Above this projection the forecast suggests faster settings. */
export const longRunSeconds = 3600;

export function describeLocalPlan(plan: LocalPlan): string {
  const calls =
    plan.criteriaPerCall === undefined || plan.criteriaPerCall === 1
      ? 'one call per criterion reusing the item\'s KV prefix'
      : plan.criteriaPerCall === Number.POSITIVE_INFINITY
        ? 'one call per item (all criteria)'
        : `${plan.criteriaPerCall} criteria per call`;
  const verdict = plan.verdict === 'probability' ? ', P(met) verdicts' : plan.verdict === 'expected-score' ? ', expected-score verdicts' : '';
  const threads = plan.threads === undefined ? '' : `, ${plan.threads} llama.cpp thread${plan.threads === 1 ? '' : 's'} (--threads N to change)`;
  const sequences = (plan.sequences ?? 1) > 1 ? `, ${plan.sequences} sequences at once sharing each item's prefix` : '';
  return `local judge ${plan.judgeId}: ${calls}, ${plan.explanation} explanations${verdict}${sequences}${threads}`;
}

/** The plan in a few words, for the progress bar: "per criterion, short". */
function compactLocalPlan(plan: LocalPlan): string {
  const calls =
    plan.criteriaPerCall === undefined || plan.criteriaPerCall === 1
      ? 'per criterion'
      : plan.criteriaPerCall === Number.POSITIVE_INFINITY
        ? 'all criteria per call'
        : `${plan.criteriaPerCall} per call`;
  return `local: ${calls}, ${plan.explanation}${plan.verdict === 'probability' ? ', P(met)' : plan.verdict === 'expected-score' ? ', expected score' : ''}`;
}

export function formatDuration(seconds: number): string {
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

function fasterSettings(plan: LocalPlan): string[] {
  const suggestions: string[] = [];
  if (plan.explanation !== 'none') suggestions.push('--explanation none (one generated token per verdict)');
  if (plan.explanation === 'full') suggestions.push('--explanation short');
  suggestions.push('an endpoint: --judge openai:MODEL with OPENAI_BASE_URL (vLLM, llama.cpp server, Ollama or a provider)');
  return suggestions;
}

export class LocalJudgeForecast {
  private total: number | undefined;
  private done = 0;
  private reported = false;
  private readonly started: number;
  readonly progressLabel: string;

  /** `now` is injectable so the projection can be tested without a clock. */
  constructor(
    private readonly print: (line: string) => void,
    private readonly plan: LocalPlan,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.started = now();
    this.progressLabel = compactLocalPlan(plan);
    print(`${describeLocalPlan(plan)}; measure this machine with: rubricate bench-local --model PATH`);
  }

  setTotal(total: number): void {
    this.total = total;
  }

  /** Counts graded items; after the first, prints the projection once. */
  readonly onEvent = (event: EngineEvent): void => {
    if (event.type !== 'item' || event.status === 'invalid') return;
    this.done += 1;
    if (this.reported) return;
    this.reported = true;
    const perItem = (this.now() - this.started) / 1000 / this.done;
    const total = this.total;
    if (total === undefined || total <= this.done) {
      this.print(`local judge: first item graded in ${formatDuration(perItem)}`);
      return;
    }
    const projected = perItem * total;
    this.print(`local judge: first item graded in ${formatDuration(perItem)}; at this pace ${total} items take about ${formatDuration(projected)}`);
    if (projected > longRunSeconds) this.print(`local judge: that is a long run; faster: ${fasterSettings(this.plan).join('; or ')}`);
  };
}

/** Calls every listener with each event. */
export function fanOut(...listeners: Array<((event: EngineEvent) => void) | undefined>): (event: EngineEvent) => void {
  return (event) => {
    for (const listener of listeners) listener?.(event);
  };
}
