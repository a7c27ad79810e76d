/**
 * The local judge's raw prefill and decode speed, which only a llama.cpp backend can give.
 * The benchmark that grades through the pipeline lives in `src/pipeline/local-judge-benchmark.ts`;
 * replies of a comparable length from random-weight models come from `withExplanationLength`
 * (`src/grading/explanation.ts`).
 */
import { batchWhenAllQueued, type BatchingState } from './batching.js';
import { getSharedLlama } from './runtime.js';

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

/** Decode steps of several sequences at once: what one step costs at each width. */
export interface BatchedDecodeSpeed {
  width: number;
  stepSeconds: number;
  /** Tokens per second over all the sequences. */
  tokensPerSecond: number;
}

/**
 * Raw decode speed with `width` sequences decoding together in one batch per step (greedy, no
 * grammar), for each width: the figure the batch width of the local judge is chosen from. Each
 * sequence first evaluates its own short prompt; the steps are timed from the first token on.
 */
export async function measureBatchedDecode(modelPath: string, options: { threads: number; widths: readonly number[]; steps?: number; promptTokens?: number }): Promise<BatchedDecodeSpeed[]> {
  const llama = await getSharedLlama();
  const model = await llama.loadModel({ modelPath });
  const steps = options.steps ?? 16;
  const promptTokens = options.promptTokens ?? 64;
  const widest = Math.max(1, ...options.widths);
  const batching: BatchingState = { decoding: 0, context: undefined };
  const context = await model.createContext({ contextSize: promptTokens + steps + 64, sequences: widest, threads: options.threads, batching: { dispatchSchedule: batchWhenAllQueued(batching) } });
  batching.context = context;
  try {
    const sequences = Array.from({ length: widest }, () => context.getSequence());
    const speeds: BatchedDecodeSpeed[] = [];
    for (const width of options.widths) {
      const prompts = sequences.slice(0, width).map((_, index) => model.tokenize(`${index}: ${prefillText}`).slice(0, promptTokens));
      await Promise.all(prompts.map(async (prompt, index) => {
        await sequences[index].clearHistory();
        await sequences[index].evaluateWithoutGeneratingNewTokens(prompt.slice(0, -1));
      }));
      batching.decoding = width;
      const started = process.hrtime.bigint();
      await Promise.all(prompts.map(async (prompt, index) => {
        let generated = 0;
        for await (const _token of sequences[index].evaluate([prompt[prompt.length - 1]], { temperature: 0 })) {
          generated += 1;
          if (generated >= steps) break;
        }
      }));
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      speeds.push({ width, stepSeconds: seconds / steps, tokensPerSecond: (width * steps) / seconds });
    }
    return speeds;
  } finally {
    batching.decoding = 0;
    await context.dispose();
    await model.dispose();
  }
}
