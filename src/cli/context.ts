/** What commands share: output channels, the interrupt signal, the exit code to return. */
import type { Usage } from '../engine/usage.js';
import { formatLocation, type RubricateError } from '../errors.js';
import type { Metrics } from '../scoring/types.js';
import { formatErrorCounts, retryAdvice, type ErrorCodeCount } from '../pipeline/error-summary.js';
import { madeUpNotice } from '../util/made-up.js';

export interface CommandContext {
  stdout(text: string): void;
  stderr(text: string): void;
  signal: AbortSignal;
  exitCode: number;
  /** `--config FILE`: the file whose settings the command line was given (see `config-file.ts`). */
  configFile?: string;
}

/** `--quiet`, with one meaning on every command that takes it. */
export const quietHelp = 'only errors and warnings on stderr: no progress bar, summaries, tables or per-item notes';

/** One line per bad input record: where (file:line field) and what. */
export function reportInputError(context: CommandContext, error: RubricateError): void {
  const location = formatLocation(error.details);
  context.stderr(`invalid input: ${location ? `${location}: ` : ''}${error.message} [${error.code}]`);
}

function formatNumber(value: number): string {
  return Number.isInteger(value) ? String(value) : value.toFixed(4);
}

export function printMetricsSummary(
  context: CommandContext,
  metrics: Metrics,
  extra: { usage?: Usage; cost?: number | null; out?: string; checkMode?: string; errors?: readonly ErrorCodeCount[]; sideFileLines?: ReadonlyMap<string, number>; mode?: string; madeUpBy?: string } = {},
): void {
  const lines: string[] = [];
  // Made-up verdicts are said first, before any figure a reader could take for a measurement.
  if (extra.madeUpBy !== undefined) lines.push(madeUpNotice(extra.madeUpBy));
  // A bad line of a side file (--responses) is a results line, not an item of the input.
  const sideLines = [...(extra.sideFileLines ?? new Map<string, number>())];
  const side = sideLines.reduce((total, [, count]) => total + count, 0);
  const counts = `${metrics.n - side} items: ${metrics.n_ok} ok, ${metrics.n_error} error, ${metrics.n_invalid - side} invalid${metrics.n_unscorable ? `, ${metrics.n_unscorable} unscorable` : ''}`;
  lines.push(counts + sideLines.map(([file, count]) => `; ${count} invalid line${count === 1 ? '' : 's'} in ${file}`).join(''));
  // Holistic mode: each item's score is one rating of its whole rubric, whatever the scoring is called.
  const scoreName = extra.mode === 'holistic' ? `score (one holistic rating per item: the judge rated each rubric as a whole, scaled to 0–1; scoring ${metrics.scoring})` : `score (${metrics.scoring})`;
  if (metrics.overall) {
    const { score, bootstrap_std: std, ci95 } = metrics.overall;
    lines.push(`${scoreName}: ${formatNumber(score)} ± ${std.toFixed(4)} (95% CI ${ci95[0].toFixed(4)}–${ci95[1].toFixed(4)}, n=${metrics.overall.n_samples})`);
  } else {
    lines.push(`${scoreName}: none (no gradable items)`);
  }
  const tags = Object.entries(metrics.by_tag);
  if (tags.length > 0) {
    const width = Math.min(48, Math.max(...tags.map(([tag]) => tag.length)));
    for (const [tag, metric] of tags.slice(0, 40)) {
      lines.push(`  ${tag.padEnd(width)}  ${formatNumber(metric.score).padStart(7)}  n=${metric.n_samples}`);
    }
    if (tags.length > 40) lines.push(`  … ${tags.length - 40} more tags in the metrics file`);
  }
  const ifeval = metrics.extra?.ifeval as { prompts: { correct: number; total: number }; instructions: { correct: number; total: number }; prompt_level_accuracy: number; instruction_level_accuracy: number } | undefined;
  if (ifeval) {
    lines.push(`IFEval${extra.checkMode ? ` (${extra.checkMode})` : ''}: prompt-level ${(ifeval.prompt_level_accuracy * 100).toFixed(2)}% (${ifeval.prompts.correct}/${ifeval.prompts.total}), instruction-level ${(ifeval.instruction_level_accuracy * 100).toFixed(2)}% (${ifeval.instructions.correct}/${ifeval.instructions.total})`);
  }
  if (extra.usage) {
    const usage = extra.usage;
    lines.push(
      `judge: ${usage.calls} calls, ${usage.cache_hits} cache hits, ${usage.retries} retries${describeRetryReasons(usage)}${usage.gate_calls_saved ? `, ${usage.gate_calls_saved} calls saved by the hard-rule gate` : ''}, ${usage.prompt_tokens} input tokens (${usage.cached_prompt_tokens} cached${usage.cache_write_prompt_tokens ? `, ${usage.cache_write_prompt_tokens} written to the prompt cache` : ''}), ${usage.completion_tokens} output tokens${
        extra.madeUpBy !== undefined ? ', no cost (no model was asked)' : extra.cost === null ? ', cost unknown (model not in the price table)' : extra.cost !== undefined ? `, $${extra.cost.toFixed(4)}` : ''
      }`,
    );
  }
  lines.push(...runProblemLines(metrics, extra));
  if (extra.out) lines.push(`results: ${extra.out}`);
  context.stderr(lines.join('\n'));
}

/** Why the judge was asked again, by error code: ` (JUDGE_UNPARSEABLE ×3, JUDGE_TIMEOUT ×1)`, or nothing. */
function describeRetryReasons(usage: Usage): string {
  const reasons = Object.entries(usage.retry_reasons ?? {}).filter(([, count]) => count);
  return reasons.length > 0 ? ` (${reasons.sort(([, first], [, second]) => second! - first!).map(([code, count]) => `${code} ×${count}`).join(', ')})` : '';
}

/** What went wrong in a run (implausible token counts, errors by code, the advice to finish it): what `--quiet` still prints. */
function runProblemLines(metrics: Pick<Metrics, 'n_error' | 'n_invalid'>, extra: { usage?: Usage; errors?: readonly ErrorCodeCount[] }): string[] {
  const lines: string[] = [];
  const implausible = extra.usage?.implausible_usage;
  if (implausible) {
    lines.push(`warning: ${implausible.replies} judge ${implausible.replies === 1 ? 'reply' : 'replies'} reported token counts that cannot be true (${implausible.example}): they are left out of the tokens and the cost (usage.implausible_usage)`);
  }
  if (extra.errors) {
    lines.push(...formatErrorCounts(extra.errors));
    lines.push(...retryAdvice({ errors: metrics.n_error, invalid: metrics.n_invalid }).map((advice) => `to finish: ${advice}`));
  }
  return lines;
}

/** The problems of a run alone, for `--quiet` (see `runProblemLines`). */
export function printRunProblems(context: CommandContext, metrics: Pick<Metrics, 'n_error' | 'n_invalid'>, extra: { usage?: Usage; errors?: readonly ErrorCodeCount[] }): void {
  const lines = runProblemLines(metrics, extra);
  if (lines.length > 0) context.stderr(lines.join('\n'));
}
