/**
 * Sampling the model under test (`rubricate eval`): each item's conversation is sent to the model
 * as its messages and the answer becomes the item's response, before grading. The calls go through
 * the grading engine (`GradingEngine.callModel`): the same reply store (a rerun, or a killed run
 * resumed, pays for no response twice: the key is the model, endpoint, messages, settings and
 * sample index), the same call loop (retries, timeouts, Retry-After), adaptive concurrency, circuit
 * breaker and usage. Under `eval --batch` the model is a batch judge (`src/batch/`): the same
 * calls, gathered into its provider's batches, each response marked `batch`. A model that
 * refuses, times out or answers nothing leaves its item without a response, with the reason in
 * `sampled.error`: the grader grades no such item.
 */
import { GradingEngine, type EngineEvent, type ModelCallOutcome } from '../engine/engine.js';
import { addUsage, emptyUsage, type Usage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import type { ChatMessage, Judge, JudgeReply, JudgeRequest } from '../judges/types.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Item, SampledResponse } from '../rubric/schema.js';
import type { CallPolicy, ModelSampling, ModelSpec } from '../spec/run-spec.js';
import type { ReplyStore } from '../store/types.js';
import { mapInOrder } from '../util/ordered-stream.js';
import { redactUrl } from '../util/redact.js';
import { isScriptedModel } from './scripted-model.js';
import { requestSampling } from '../grading/sampling.js';

/** Part of every sampled response's cache key: a sampling call, as against a grading template. */
export const sampleTemplateVersion = 'sample/v1';

export interface SamplerOptions {
  /** The model under test, built as judges are (`createJudge`), or the scripted model. */
  model: Judge;
  /** Its spec as given (`--model`), settings included (reasoning effort, thinking budget), for provenance. */
  spec: ModelSpec;
  sampling: ModelSampling;
  store?: ReplyStore;
  calls?: CallPolicy;
  /** Aborts calls in flight (the drain timeout ran out). */
  signal?: AbortSignal;
  /** No new call starts once aborted (the first Ctrl-C). */
  stopSignal?: AbortSignal;
  onEvent?: (event: EngineEvent) => void;
  /** Each response as it settles (sampled, read from the store, or failed): what a test waits on. */
  onResponse?: (item: Item) => void;
}

const chatRoles = new Set(['system', 'user', 'assistant']);

/** The conversation as the model's messages (`developer` is a system message); any other role is refused for that item. */
export function messagesOf(item: Item): ChatMessage[] {
  return item.prompt.map((message) => {
    const role = message.role === 'developer' ? 'system' : message.role;
    if (!chatRoles.has(role)) throw new RubricateError('CONFIG_INVALID', `item ${item.id}: a "${message.role}" message cannot be sent to the model under test (system, user and assistant only)`, { field: 'prompt' });
    return { role: role as ChatMessage['role'], content: message.content };
  });
}

/** The request for an item: its conversation and the sampling settings given (absent ones are not sent). */
export function sampleRequest(item: Item, sampling: ModelSampling): JudgeRequest {
  return {
    messages: messagesOf(item),
    ...requestSampling(sampling),
  };
}

/** The settings a response was sampled with, as its provenance records them (absent: the model's default). */
export function recordedSettings(spec: ModelSpec, sampling: ModelSampling): Record<string, unknown> {
  const settings: Record<string, unknown> = {
    temperature: sampling.temperature,
    top_p: sampling.topP,
    max_tokens: sampling.maxTokens,
    seed: sampling.seed,
    reasoning_effort: spec.openai?.reasoningEffort,
    thinking_budget: spec.gemini?.thinkingBudget,
    extra_body: spec.endpoint?.extraBody,
  };
  return Object.fromEntries(Object.entries(settings).filter(([, value]) => value !== undefined));
}

/** Why a reply is no response: nothing but whitespace (asked again while attempts remain, then the item's error). */
function problemOf(reply: JudgeReply): RubricateError | undefined {
  if (reply.text.trim() !== '') return undefined;
  const cut = reply.finishReason === 'length' ? ' (cut at the token limit before any text: raise --model-max-tokens)' : '';
  return new RubricateError('RESPONSE_EMPTY', `the model under test answered nothing${cut}`, { finishReason: reply.finishReason });
}

export class Sampler {
  /** What sampling spent in this run (calls, tokens, cache hits). */
  readonly usage: Usage = emptyUsage();
  private readonly engine: GradingEngine;
  private readonly settings: Record<string, unknown>;
  /** Responses being sampled: a stopped run waits for them (within its drain) so each paid reply is stored. */
  private readonly pending = new Set<Promise<Item>>();

  constructor(private readonly options: SamplerOptions) {
    this.engine = new GradingEngine({
      judge: options.model,
      // The engine plans no grading for the model under test: only `callModel` is used.
      strategy: { name: 'sample', templateVersion: sampleTemplateVersion, plan: () => [] },
      store: options.store,
      calls: options.calls,
      signal: options.signal,
      stopSignal: options.stopSignal,
      onEvent: options.onEvent,
    });
    this.settings = recordedSettings(options.spec, options.sampling);
  }

  /** The error that stopped sampling (bad key, the circuit breaker), if any. */
  get fatal(): RubricateError | undefined {
    return this.engine.fatal;
  }

  private get samples(): number {
    return this.options.sampling.samplesPerPrompt ?? 1;
  }

  /** One response of an item: the item with it and its provenance, or without it and with the reason. */
  sampleItem(item: Item, sample: number): Promise<Item> {
    const sampling = this.sampleOne(item, sample);
    this.pending.add(sampling);
    const done = () => this.pending.delete(sampling);
    sampling.then(done, done);
    return sampling;
  }

  /**
   * Resolves once every response started has settled (answered and stored, failed, or cancelled
   * when the drain signal runs out). A run stopped early waits for it before closing the store: a
   * call in flight at the stop lands and is kept, so the rerun does not pay for it again.
   */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async sampleOne(item: Item, sample: number): Promise<Item> {
    const samples = this.samples;
    const id = samples > 1 ? `${item.id}#${sample + 1}` : item.id;
    let request: JudgeRequest;
    try {
      request = sampleRequest(item, this.options.sampling);
    } catch (error) {
      return this.settle({ ...item, id, response: '', sampled: { ...this.provenance(sample, ''), error: (error as RubricateError).toJSON() } });
    }
    const outcome = await this.engine.callModel({ item, request, templateVersion: sampleTemplateVersion, sample, problem: problemOf });
    addUsage(this.usage, outcome.usage);
    const sampled = this.describe(outcome, sample);
    return this.settle({ ...item, id, response: outcome.reply && !outcome.error ? outcome.reply.text : '', sampled });
  }

  /** Each item record as `samplesPerPrompt` records with sampled responses, in input order, within a bounded window. */
  sampleRecords(records: AsyncIterable<ImportRecord>): AsyncGenerator<ImportRecord> {
    const samples = this.samples;
    const concurrency = this.engine.concurrency;
    const expanded = async function* () {
      for await (const record of records) {
        if (record.kind !== 'item') yield { record, sample: 0 };
        else for (let sample = 0; sample < samples; sample += 1) yield { record, sample };
      }
    };
    return mapInOrder(
      expanded(),
      async ({ record, sample }): Promise<ImportRecord> => (record.kind === 'item' ? { kind: 'item', line: record.line, item: await this.sampleItem(record.item, sample) } : record),
      { window: Math.max(64, concurrency * 4), busy: () => this.engine.queuedCalls >= concurrency, stopped: () => this.engine.fatal },
    );
  }

  private settle(item: Item): Item {
    this.options.onResponse?.(item);
    return item;
  }

  private provenance(sample: number, requestHash: string): SampledResponse {
    const model = this.options.model.provenance;
    const endpoint = redactUrl(model.baseUrl);
    return {
      model: this.options.spec.model ?? model.id,
      ...(isScriptedModel(model) ? { scripted: true as const } : {}),
      ...(endpoint && /^https?:/.test(endpoint) ? { endpoint } : {}),
      sample,
      samples: this.samples,
      settings: this.settings,
      request_sha256: requestHash,
    };
  }

  private describe(outcome: ModelCallOutcome, sample: number): SampledResponse {
    const sampled = this.provenance(sample, outcome.key);
    const reply = outcome.reply;
    if (outcome.error || !reply) {
      const error = outcome.error ?? new RubricateError('INTERNAL', 'no response and no error');
      return { ...sampled, error: new RubricateError(error.code, `sampling the model under test failed: ${error.message}`, error.details).toJSON() };
    }
    return {
      ...sampled,
      usage: { input_tokens: reply.usage.inputTokens, output_tokens: reply.usage.outputTokens, cached_input_tokens: reply.usage.cachedInputTokens },
      ...(reply.usage.batch ? { batch: true as const } : {}),
      ...(reply.finishReason !== undefined ? { finish_reason: reply.finishReason } : {}),
      ...(reply.latencyMs !== undefined ? { latency_ms: reply.latencyMs } : {}),
      ...(reply.answeredAt !== undefined ? { sampled_at: reply.answeredAt } : {}),
    };
  }
}
