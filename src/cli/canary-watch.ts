/**
 * `grade --canary DIR` and `eval --canary DIR`: a run that uses the judge is checked against the
 * canary baseline pinned in DIR (`rubricate canary --baseline DIR`). At the start, the judge's
 * identity as configured (spec, model, template and its hash, mode, verdict settings) is compared
 * with the pinned one; at the end, the models the provider's replies named (each verdict's
 * `judge_model`) are compared with the pinned resolved models, which is how a provider's alias
 * quietly moving to another snapshot shows. A difference is a warning that says which fields changed
 * and how to re-grade the golden set; the run's own exit code is unchanged.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { changedIdentityFields, identityOfJudge, parseBaseline, type CanaryBaseline } from '../meta/canary.js';
import { readResults, type JudgeInfo } from '../results/results.js';
import { RubricateError } from '../errors.js';
import type { CommandContext } from './context.js';

export interface CanaryWatch {
  /** Compares the models the results' verdicts name with the pinned ones. */
  afterRun(resultsFile: string): Promise<void>;
}

/** Distinct models collected from a results file at most (a provider names one or two). */
const maxResolvedModels = 64;

export async function watchCanary(directory: string, judge: JudgeInfo | undefined, context: CommandContext): Promise<CanaryWatch | undefined> {
  const file = join(directory, 'baseline.json');
  if (!existsSync(file)) {
    context.stderr(`warning: --canary ${directory}: no baseline is pinned there (rubricate canary --baseline ${directory} pins one): the judge is not checked`);
    return undefined;
  }
  const baseline = parseBaseline(readBaselineJson(file), file);
  if (!judge) return undefined;
  const current = identityOfJudge(judge);
  const changed = changedIdentityFields(baseline.identity, current, ['resolved_models']);
  if (changed.length > 0) {
    const what = changed.map((key) => `${key} ${JSON.stringify(baseline.identity[key])} → ${JSON.stringify(current[key])}`).join('; ');
    context.stderr(`warning: canary: the judge differs from the one pinned in ${file}: ${what}. ${regradeHint(directory)}`);
  }
  return { afterRun: (resultsFile) => compareResolvedModels(baseline, resultsFile, directory, context) };
}

function regradeHint(directory: string): string {
  return `Re-grade the golden set with the same judge settings: rubricate canary --golden … --labels … --baseline ${directory}`;
}

async function compareResolvedModels(baseline: CanaryBaseline, resultsFile: string, directory: string, context: CommandContext): Promise<void> {
  const named = new Set<string>();
  for await (const entry of readResults(resultsFile)) {
    if (entry.kind === 'invalid' || !entry.record.judge) continue;
    for (const criterion of entry.record.criteria) {
      if (criterion.source !== 'judge' || criterion.status !== 'ok') continue;
      named.add(typeof criterion.judge_model === 'string' ? criterion.judge_model : entry.record.judge.model);
    }
    if (named.size >= maxResolvedModels) break;
  }
  const pinned = new Set(baseline.identity.resolved_models);
  const unpinned = [...named].filter((model) => !pinned.has(model)).sort();
  if (unpinned.length === 0) return;
  context.stderr(`warning: canary: this run's verdicts came from ${unpinned.join(', ')}, which the baseline in ${join(directory, 'baseline.json')} never saw (it pinned ${baseline.identity.resolved_models.join(', ') || 'none'}): the judge may have changed behind its name. ${regradeHint(directory)}`);
}

function readBaselineJson(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (error) {
    throw new RubricateError('INPUT_INVALID', `the canary baseline is not readable JSON: ${error instanceof Error ? error.message : String(error)}`, { file });
  }
}
