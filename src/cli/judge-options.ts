/**
 * The judge side of every command that calls one: its flags (the model flags and the run-setting
 * groups the command reads, from `run-spec-flags.ts`, plus where replies are stored) and the
 * judges a run spec names, built with the key given beside it.
 */
import type { Command } from 'commander';
import { RubricateError } from '../errors.js';
import { configuredJudgeSpec, createJudge, noJudgeConfigured } from '../judges/registry.js';
import type { Judge } from '../judges/types.js';
import type { Credentials, ModelSpec, RunSpec } from '../spec/run-spec.js';
import type cliProgress from 'cli-progress';
import { loadProgressBars } from './progress.js';
import { addModelOptions, addRunOptions, refuseUnreadModelFlags, type FlagGroup } from './run-spec-flags.js';
import { addStoreOptions, applyFleetLimitsFrom, type StoreFlags } from './store-options.js';

export { parseNumber, parsePositiveInteger } from './run-spec-flags.js';

/** What a command that grades reads: every group of the run spec. */
export const gradingFlagGroups: readonly FlagGroup[] = ['plan', 'alignment', 'batching', 'sampling', 'protocol', 'template', 'calls', 'jury', 'scoring', 'fleet', 'limits'];

/** `--judge` and its model flags, the run-setting flags of `groups`, and the store flags. */
export function addJudgeOptions(command: Command, groups: readonly FlagGroup[] = gradingFlagGroups): Command {
  addModelOptions(command, 'judge');
  addRunOptions(command, groups);
  return addStoreOptions(command);
}

/**
 * Builds every judge the spec names (a jury when several; none: the default rule), with fleet
 * limits applied. A model flag the chosen backend does not read is refused first, by name.
 */
export async function buildJudges(spec: Pick<RunSpec, 'judges' | 'fleet'>, credentials: Credentials, store: StoreFlags, options: { fleetLimits?: boolean } = {}): Promise<Judge[]> {
  const models = (spec.judges.length > 0 ? spec.judges : [{}]).map((model) => withConfiguredModel(model, 'judge'));
  refuseUnreadModelFlags(models, credentials, 'judge');
  const judges: Judge[] = [];
  try {
    for (const model of models) {
      const judge = await createJudge(model, { ...credentials, onDownloadProgress: downloadProgressBar() });
      if (judge) judges.push(judge);
      else if (models.length > 1) throw new RubricateError('CONFIG_INVALID', '"none" cannot be a member of a jury', { field: 'judge' });
    }
  } catch (error) {
    for (const judge of judges) await judge.close?.();
    throw error;
  }
  return options.fleetLimits === false ? judges : applyFleetLimitsFrom(judges, store, spec.fleet);
}

/**
 * A model spec with its model named: the one given, else the one the environment configures
 * (RUBRICATE_JUDGE, an OpenAI endpoint or key, RUBRICATE_MODEL). With none, the command stops
 * (exit 2) before anything is built or spent, listing the ways forward: never a silent download.
 */
export function withConfiguredModel(model: ModelSpec, role: 'judge' | 'generator'): ModelSpec & { model: string } {
  if (model.model !== undefined) return model as ModelSpec & { model: string };
  const configured = configuredJudgeSpec();
  if (configured === undefined) throw noJudgeConfigured(role);
  return { ...model, model: configured };
}

/** A one-time model download shows a byte progress bar on a terminal, and a line per 10% otherwise. */
function downloadProgressBar(): (done: number, total: number) => void {
  let bar: cliProgress.SingleBar | undefined;
  let lastDecile = -1;
  return (done, total) => {
    if (process.stderr.isTTY) {
      if (!bar) {
        const bars = loadProgressBars();
        bar = new bars.SingleBar({ format: 'downloading model {bar} {percentage}% | {value}/{total} MB', stream: process.stderr }, bars.Presets.shades_classic);
        bar.start(Math.round(total / 1e6), 0);
      }
      bar.update(Math.round(done / 1e6));
      if (done >= total) bar.stop();
      return;
    }
    const decile = total > 0 ? Math.floor((done / total) * 10) : 0;
    if (decile !== lastDecile) {
      lastDecile = decile;
      process.stderr.write(`downloading model: ${decile * 10}% of ${Math.round(total / 1e6)} MB\n`);
    }
  };
}
