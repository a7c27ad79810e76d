/**
 * The local judge's raw prefill and decode speed, which only a llama.cpp backend can give.
 * The benchmark that grades through the pipeline lives in `src/pipeline/local-judge-benchmark.ts`;
 * replies of a comparable length from random-weight models come from `withExplanationLength`
 * (`src/grading/explanation.ts`).
 */
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
