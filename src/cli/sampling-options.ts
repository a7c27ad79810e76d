/**
 * The model under test of `rubricate eval`: its flags (`--model` and the `--model-…` flags, from
 * the one flag table in `run-spec-flags.ts`), the model built from the run spec as judges are
 * (same registry and provider layer; `scripted` made up here), wrapped for `--dry-run`, and the
 * `Sampler` that feeds the grader. Closed with the run's session.
 */
import type { Command } from 'commander';
import { createPlanningDryRunJudge, estimateCost, type DryRunJudge } from '../batch/dry-run.js';
import type { EngineEvent } from '../engine/engine.js';
import { costOf, priceFor, type ModelPrice } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import type { Judge } from '../judges/types.js';
import { Sampler } from '../sampling/sampler.js';
import { createScriptedModel, isScriptedModel, isScriptedSpec } from '../sampling/scripted-model.js';
import type { Credentials, RunSpec } from '../spec/run-spec.js';
import { batchEngineOptions } from './batch-options.js';
import type { CommandContext } from './context.js';
import { buildJudges } from './judge-options.js';
import { addModelOptions, addRunOptions, refuseUnreadModelFlags } from './run-spec-flags.js';
import type { RunSession } from './session.js';
import type { StoreFlags } from './store-options.js';

/** `--model`, its key and endpoint flags, and the sampling flags (`--model-temperature`, `--samples-per-prompt`…). */
export function addSamplingOptions(command: Command): Command {
  addModelOptions(command, 'model');
  return addRunOptions(command, ['model']);
}

export interface OpenSampling {
  sampler: Sampler;
  model: Judge;
  /** The counting model of a dry run (its answers are synthetic, so the judges' calls are counted too). */
  dryRun?: DryRunJudge;
  /** The sampling part of the run's summary: model, usage and cost. */
  summary(prices: Readonly<Record<string, ModelPrice>>): Record<string, unknown>;
  /** The sampling part of a dry run's estimate. */
  estimate(prices: Readonly<Record<string, ModelPrice>>): Record<string, unknown>;
}

/** Builds the model under test the spec names: the scripted one, or any judge backend (same specs, same providers). */
async function buildModel(spec: RunSpec, credentials: Credentials, store: StoreFlags): Promise<Judge> {
  const [model, ...others] = spec.models;
  if (!model?.model) throw new RubricateError('CONFIG_INVALID', 'eval samples a model: give --model SPEC (openai:MODEL, anthropic:MODEL, gguf:PATH, … or scripted to try it offline)', { field: 'model' });
  if (others.length > 0) throw new RubricateError('INTERNAL', 'one model under test per sampling run (several models run one after the other)');
  refuseUnreadModelFlags([model], credentials, 'model');
  if (isScriptedSpec(model.model)) return createScriptedModel(model.model);
  if (model.model === 'none') throw new RubricateError('CONFIG_INVALID', `--model ${model.model}: the model under test is a provider model or "scripted"`, { field: 'model' });
  const [built] = await buildJudges({ judges: [model], fleet: spec.fleet }, credentials, store);
  return built;
}

/** Under `--batch`: the model under test sent through its provider's Batch API, in batches of its own (role `model` in the ledger). */
async function batched(session: RunSession, built: Judge, credentials: Credentials): Promise<Judge> {
  if (!session.batching) return built;
  try {
    return session.wrap(built, { role: 'model', model: session.spec.models[0], credentials });
  } catch (error) {
    // Refused (a model without a Batch API): the model built for it is closed here, never adopted.
    await built.close?.();
    throw error;
  }
}

export async function openSampling(
  session: RunSession,
  credentials: Credentials,
  flags: StoreFlags & { dryRun?: boolean },
  events: { context: CommandContext; signal?: AbortSignal; stopSignal?: AbortSignal; onEvent?: (event: EngineEvent) => void },
): Promise<OpenSampling> {
  const spec = session.spec;
  const built = await buildModel(spec, credentials, flags);
  const dryRun = flags.dryRun ? createPlanningDryRunJudge(built) : undefined;
  const model = dryRun ?? (await batched(session, built, credentials));
  // The outermost model is closed with the session (a batch wrapper closes the model it wraps).
  session.adopt(model);
  if (isScriptedModel(built.provenance) && !flags.dryRun) events.context.stderr('note: --model scripted: the responses are made up (no model was asked); each is labelled "scripted" in the results');
  const hits = { count: 0 };
  const sampler = new Sampler({
    model,
    spec: spec.models[0],
    sampling: spec.sampling,
    store: session.storeFor(hits),
    // Under --batch every call waits in a batch: the engine hands over all it has, as the judges' engine does.
    calls: session.batching ? { ...spec.calls, ...batchEngineOptions } : spec.calls,
    signal: events.signal,
    stopSignal: events.stopSignal,
    onEvent: events.onEvent,
  });
  const name = built.provenance.model;
  return {
    sampler,
    model,
    dryRun,
    summary: (prices) => ({ model: built.provenance.id, usage: { ...sampler.usage, cost_usd: isScriptedModel(built.provenance) ? 0 : costOf(sampler.usage, priceFor(name, prices)) } }),
    estimate: (prices) => {
      const totals = dryRun!.totals;
      return {
        model: built.provenance.id,
        model_calls: totals.calls,
        cache_hits: hits.count,
        input_tokens: totals.input_tokens,
        expected_output_tokens: totals.expected_output_tokens,
        responses_assumed_tokens: 'each response as long as --model-max-tokens, at most 256 tokens',
        cost_usd: isScriptedModel(built.provenance) ? { synchronous: 0, batch: 0, prompt_cached: 0 } : estimateCost(totals, priceFor(name, prices)),
      };
    },
  };
}
