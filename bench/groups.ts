/**
 * One HealthBench-shaped RL step (64 prompts × 8 responses, each prompt's rubric) graded by
 * group with each judging mode against the judge simulator: per-criterion, batched (the whole
 * rubric per call), listwise (one or two orders) and tournaments (circular and all pairs).
 * Per group: judge calls, input and output tokens, and the time from a group's start to its
 * last reward; per step: the wall time with every group started at once.
 */
import { healthbenchItems, loadLibrary, simulatedJudge, syntheticItems } from './grading.js';
import { peakRssBytes } from './support/measure.js';
import { startSimulatorProcess } from './support/simulator-process.js';
import type { SimulatorOptions } from './simulator/types.js';
import type { GraderOptions } from '../src/pipeline/grader.js';

export interface GroupRow {
  scenario: string;
  groups: number;
  responses_per_group: number;
  criteria_per_prompt: number;
  calls_per_group: number;
  input_tokens_per_group: number;
  cached_input_share: number;
  output_tokens_per_group: number;
  group_wall_s_mean: number;
  group_wall_s_max: number;
  step_wall_s: number;
  items_ok: number;
  items_error: number;
  peak_rss_mb: number;
}

interface StepGroup {
  id: string;
  lines: string[];
}

/** 64 prompts with their rubrics, 8 responses each: the prompt's ideal completion and seven others of realistic length. */
export function healthbenchStep(file: string | undefined, prompts = 64, responses = 8): StepGroup[] {
  const rows = (file ? healthbenchItems(file) : syntheticItems(prompts + responses, 10, 3)).map((line) => JSON.parse(line) as { id: string; prompt: unknown; response: string; rubric: unknown });
  return rows.slice(0, prompts).map((row, index) => ({
    id: row.id,
    lines: Array.from({ length: responses }, (_, member) => JSON.stringify({ id: `${row.id}/${member}`, prompt: row.prompt, response: rows[(index + member * 7) % rows.length].response, rubric: row.rubric })),
  }));
}

export async function runGroupModes(step: StepGroup[], simulatorOptions: SimulatorOptions, modes: ReadonlyArray<readonly [string, Partial<GraderOptions>]>): Promise<GroupRow[]> {
  const library = await loadLibrary();
  const simulator = await startSimulatorProcess(simulatorOptions);
  const judge = await simulatedJudge(library, simulator.url);
  const groups = step.map((group) => group.lines.map((line) => library.normalizeItem(JSON.parse(line))));
  const criteria = groups.reduce((total, group) => total + group[0].rubric.criteria.length, 0) / groups.length;
  const rows: GroupRow[] = [];
  try {
    for (const [name, options] of modes) {
      await simulator.reset();
      // No cache: every mode pays for its own calls.
      const grader = new library.Grader({ judge, scoring: 'healthbench', ...options, calls: { concurrency: 64, timeoutMs: 600_000, ...options.calls } });
      const started = performance.now();
      const outcomes = await Promise.all(
        groups.map(async (items) => {
          const began = performance.now();
          const results = await grader.gradeGroup(items);
          return { seconds: (performance.now() - began) / 1000, ok: results.filter((result) => result.status === 'ok').length };
        }),
      );
      const stepSeconds = (performance.now() - started) / 1000;
      const stats = await simulator.stats();
      const ok = outcomes.reduce((total, outcome) => total + outcome.ok, 0);
      rows.push({
        scenario: name,
        groups: groups.length,
        responses_per_group: groups[0].length,
        criteria_per_prompt: criteria,
        calls_per_group: stats.completed / groups.length,
        input_tokens_per_group: stats.inputTokens / groups.length,
        cached_input_share: stats.inputTokens > 0 ? stats.cachedInputTokens / stats.inputTokens : 0,
        output_tokens_per_group: stats.outputTokens / groups.length,
        group_wall_s_mean: outcomes.reduce((total, outcome) => total + outcome.seconds, 0) / outcomes.length,
        group_wall_s_max: Math.max(...outcomes.map((outcome) => outcome.seconds)),
        step_wall_s: stepSeconds,
        items_ok: ok,
        items_error: groups.length * groups[0].length - ok,
        peak_rss_mb: peakRssBytes() / 1e6,
      });
    }
  } finally {
    await judge.close?.();
    await simulator.stop();
  }
  return rows;
}

/** The modes compared on one step. */
export const groupModes: ReadonlyArray<readonly [string, Partial<GraderOptions>]> = [
  ['per-criterion', {}],
  ['batched (whole rubric)', { plan: { criteriaPerCall: 'all' } }],
  ['listwise', { plan: { mode: 'listwise' } }],
  ['listwise, 2 orders', { plan: { mode: 'listwise', orders: 2 } }],
  ['tournament, circular', { plan: { mode: 'tournament', tournament: 'circular' }, scoring: 'weighted_mean' }],
  ['tournament, all pairs', { plan: { mode: 'tournament' }, scoring: 'weighted_mean' }],
];
