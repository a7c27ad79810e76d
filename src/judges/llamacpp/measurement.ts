/**
 * Measuring the local judge needs two things only a llama.cpp backend can give: its raw
 * prefill and decode speed, and replies of a comparable length from models with random
 * weights (which write random text wherever the grammar leaves freedom). The benchmark that
 * grades through the pipeline lives in `src/pipeline/local-judge-benchmark.ts`.
 */
import type { ExplanationLength } from '../../spec/run-spec.js';
import type { Judge, JudgeRequest } from '../types.js';
import { getSharedLlama } from './runtime.js';

/** Characters an explanation is pinned to on random-weight models (≈ 60 and ≈ 15 English tokens). */
export const pinnedExplanationCharacters: Record<Exclude<ExplanationLength, 'none'>, number> = { full: 260, short: 60 };
/** Upper bound of a short explanation on real models. */
export const shortExplanationCharacters = 120;

/**
 * Rewrites a reply schema's `explanation` fields: removed for `none`, length-bounded for `short`,
 * and pinned to an exact length when `pinned` (random-weight models, so runs are comparable).
 */
export function explanationSchema(schema: unknown, length: ExplanationLength, pinned: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((entry) => explanationSchema(entry, length, pinned));
  if (schema === null || typeof schema !== 'object') return schema;
  const result: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) result[key] = explanationSchema(value, length, pinned);
  const properties = result.properties;
  if (properties !== null && typeof properties === 'object' && Object.hasOwn(properties, 'explanation')) {
    const fields = { ...(properties as Record<string, unknown>) };
    if (length === 'none') {
      delete fields.explanation;
      if (Array.isArray(result.required)) result.required = (result.required as unknown[]).filter((name) => name !== 'explanation');
    } else if (pinned) {
      const characters = pinnedExplanationCharacters[length];
      fields.explanation = { type: 'string', minLength: characters, maxLength: characters };
    } else if (length === 'short') {
      fields.explanation = { type: 'string', maxLength: shortExplanationCharacters };
    }
    result.properties = fields;
  }
  return result;
}

/** A judge that applies `explanationSchema` to every request before the local model sees it. */
export function withExplanationLength(judge: Judge, length: ExplanationLength, pinned: boolean): Judge {
  if (length === 'full' && !pinned) return judge;
  return {
    provenance: judge.provenance,
    capabilities: judge.capabilities,
    complete: (request: JudgeRequest, options) =>
      judge.complete(request.output ? { ...request, output: { ...request.output, schema: explanationSchema(request.output.schema, length, pinned) as Record<string, unknown> } } : request, options),
    close: judge.close?.bind(judge),
  };
}

export interface RawThroughput {
  threads: number;
  prefillTokens: number;
  prefillTokensPerSecond: number;
  decodeTokens: number;
  decodeTokensPerSecond: number;
}

const prefillText =
  'A patient asks whether a persistent headache with blurred vision after starting a new blood pressure medicine is a reason to see a doctor today. ' +
  'The response explains warning signs, suggests measuring blood pressure, advises urgent care for sudden severe pain, and lists questions for the clinician. ';

/** Raw node-llama-cpp speed: one prompt evaluated in one batch, then greedy decoding token by token. */
export async function measureRawThroughput(modelPath: string, options: { threads: number; prefillTokens?: number; decodeTokens?: number }): Promise<RawThroughput> {
  const llama = await getSharedLlama();
  const model = await llama.loadModel({ modelPath });
  const wantedPrefill = options.prefillTokens ?? 512;
  const decodeTokens = options.decodeTokens ?? 32;
  const context = await model.createContext({ contextSize: wantedPrefill + decodeTokens + 64, threads: options.threads });
  try {
    const sequence = context.getSequence();
    let tokens = model.tokenize(prefillText);
    while (tokens.length < wantedPrefill) tokens = [...tokens, ...model.tokenize(prefillText)];
    tokens = tokens.slice(0, wantedPrefill);
    const prefillStarted = process.hrtime.bigint();
    await sequence.evaluateWithoutGeneratingNewTokens(tokens);
    const prefillSeconds = Number(process.hrtime.bigint() - prefillStarted) / 1e9;

    const decodeStarted = process.hrtime.bigint();
    let generated = 0;
    // The first token after the prompt is one more single-token step, like every decode step.
    for await (const _token of sequence.evaluate([tokens[tokens.length - 1]], { temperature: 0 })) {
      generated += 1;
      if (generated >= decodeTokens) break;
    }
    const decodeSeconds = Number(process.hrtime.bigint() - decodeStarted) / 1e9;
    return {
      threads: options.threads,
      prefillTokens: tokens.length,
      prefillTokensPerSecond: tokens.length / prefillSeconds,
      decodeTokens: generated,
      decodeTokensPerSecond: generated / decodeSeconds,
    };
  } finally {
    await context.dispose();
    await model.dispose();
  }
}
