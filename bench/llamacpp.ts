/**
 * Local judge benchmark on the tiny generated GGUF model:
 * - criteria per second with 1, 2 and 4 sequences (grammar-constrained verdicts, greedy);
 * - the same with token probabilities asked for (1 sequence);
 * - the overhead of our judge layer against the shortest code that gets the same replies from
 *   node-llama-cpp directly (same model, context, prompts, grammar, prefix reuse and stop rule).
 *   Target: judge time ≤ 1.1 × direct time.
 *
 * Threads are fixed at 1. On a two-core machine llama.cpp with more threads than free cores
 * slows down badly (a round goes from ~0.2 s to many seconds), and the tiny model's matrices
 * are too small for threads to help anyway; parallelism is measured through sequences instead.
 *
 * Run: npx tsx bench/llamacpp.ts
 */
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import type { Token } from 'node-llama-cpp';
import type { ChatMessage, JudgeRequest } from '../src/judges/types.js';
import { createLlamaCppJudge } from '../src/judges/llamacpp/llamacpp-judge.js';
import { toGrammarJsonSchema } from '../src/judges/llamacpp/grammar-schema.js';
import { getSharedLlama, loadNodeLlamaCpp } from '../src/judges/llamacpp/runtime.js';
import { writeTinyGguf } from '../src/testing/tiny-gguf.js';
import { safeParseJson } from '../src/util/json.js';

export interface ThroughputFigure {
  sequences: number;
  criteria: number;
  wallMs: number;
  criteriaPerSecond: number;
}

export interface LlamaCppBenchmarkFigures {
  model: { embeddingLength: number; layers: number; fileBytes: number };
  threads: number;
  criteria: number;
  meanPromptTokens: number;
  meanReplyTokens: number;
  throughput: ThroughputFigure[];
  withLogprobs: ThroughputFigure;
  overhead: {
    judgeMsPerCriterion: number;
    directMsPerCriterion: number;
    /** judge ÷ direct wall time (medians per criterion); the target is ≤ 1.1. */
    ratio: number;
    judgeCpuMsPerCriterion: number;
    directCpuMsPerCriterion: number;
    /** The same ratio in process CPU time. */
    cpuRatio: number;
    /** Both paths produced exactly the same replies (so they did the same work). */
    sameReplies: boolean;
  };
}

export interface LlamaCppBenchmarkOptions {
  criteria?: number;
  embeddingLength?: number;
  layers?: number;
  /** Passes over the criteria per figure; medians are reported (the machine may be shared). */
  rounds?: number;
}

const verdictSchema = z.toJSONSchema(z.object({ explanation: z.string(), criteria_met: z.boolean() })) as Record<string, unknown>;
const threads = 1;
const maxTokens = 96;

const response =
  'For a mild tension headache, drink a glass of water, rest in a quiet dark room and consider an over-the-counter pain reliever ' +
  'such as paracetamol at the dose on the label. See a doctor at once if the headache is sudden and severe, follows a head injury, ' +
  'or comes with fever, a stiff neck, confusion, weakness or trouble speaking.';
const criterionTopics = ['hydration', 'rest', 'dosage', 'red flags', 'head injury', 'fever', 'neck stiffness', 'confusion', 'weakness', 'speech', 'follow-up', 'tone'];

function criterionMessages(index: number): ChatMessage[] {
  const topic = criterionTopics[index % criterionTopics.length];
  return [
    {
      role: 'system',
      content: 'You are a strict grader. Decide whether the response meets the rubric criterion. Reply with JSON: {"explanation": string, "criteria_met": boolean}.',
    },
    { role: 'user', content: `Conversation response:\n${response}\n\nRubric criterion #${index + 1}: the response addresses ${topic} correctly.` },
  ];
}

function median(values: number[]): number {
  const sorted = [...values].sort((left, right) => left - right);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** Runs `tasks` with at most `concurrency` in flight. */
async function runWithConcurrency<T>(count: number, concurrency: number, task: (index: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  const workers = Array.from({ length: concurrency }, async () => {
    while (next < count) {
      const index = next;
      next += 1;
      results[index] = await task(index);
    }
  });
  await Promise.all(workers);
  return results;
}

async function measureThroughput(
  modelPath: string,
  sequences: number,
  criteria: number,
  rounds: number,
  request: Partial<JudgeRequest> = {},
): Promise<ThroughputFigure & { promptTokens: number[]; replyTokens: number[] }> {
  const judge = await createLlamaCppJudge({ model: modelPath, threads, sequences, contextSize: 1024 });
  try {
    const signal = new AbortController().signal;
    const grade = (index: number) =>
      judge.complete({ messages: criterionMessages(index), output: { name: 'verdict', schema: verdictSchema }, temperature: 0, maxTokens, ...request }, { signal });
    // Warm-up: the first decodes allocate buffers.
    await runWithConcurrency(sequences, sequences, grade);
    const wallTimes: number[] = [];
    let replies: Awaited<ReturnType<typeof grade>>[] = [];
    for (let round = 0; round < rounds; round += 1) {
      const started = performance.now();
      replies = await runWithConcurrency(criteria, sequences, grade);
      wallTimes.push(performance.now() - started);
    }
    const wallMs = median(wallTimes);
    return {
      sequences,
      criteria,
      wallMs,
      criteriaPerSecond: (criteria / wallMs) * 1000,
      promptTokens: replies.map((reply) => reply.usage.inputTokens),
      replyTokens: replies.map((reply) => reply.usage.outputTokens),
    };
  } finally {
    await judge.close();
  }
}

/**
 * The direct path: what a caller writes with node-llama-cpp alone to get the same replies —
 * chat template, tokenize, keep the shared prefix, grammar-constrained greedy generation,
 * stop at end of turn or once the JSON object is closed.
 */
async function createDirectRunner(modelPath: string): Promise<{ generate(messages: ChatMessage[]): Promise<string>; close(): Promise<void> }> {
  const nodeLlamaCpp = await loadNodeLlamaCpp();
  const llama = await getSharedLlama();
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({ contextSize: 1024, sequences: 1, threads });
  const sequence = context.getSequence();
  const chatWrapper = nodeLlamaCpp.resolveChatWrapper(model);
  const grammar = await llama.createGrammarForJsonSchema(toGrammarJsonSchema(verdictSchema) as Parameters<typeof llama.createGrammarForJsonSchema>[0]);
  return {
    async generate(messages) {
      const { contextText } = chatWrapper.generateContextState({
        chatHistory: [
          { type: 'system', text: messages[0].content },
          { type: 'user', text: messages[1].content },
          { type: 'model', response: [] },
        ],
      });
      const tokens = contextText.tokenize(model.tokenizer);
      const last = tokens.pop() as Token;
      await sequence.adaptStateToTokens(tokens, false);
      tokens.push(last);
      const generated: Token[] = [];
      let text = '';
      const grammarEvaluationState = new nodeLlamaCpp.LlamaGrammarEvaluationState({ model, grammar });
      for await (const token of sequence.evaluate(tokens.slice(sequence.nextTokenIndex), { temperature: 0, grammarEvaluationState })) {
        generated.push(token);
        text += model.detokenize([token]);
        if (text.endsWith('}') && safeParseJson(text).ok) break;
        if (generated.length >= maxTokens) break;
      }
      return model.detokenize(generated);
    },
    async close() {
      await context.dispose();
      await model.dispose();
    },
  };
}

/**
 * Judge and direct path side by side, one criterion each in turn, so load from anything else
 * on the machine hits both alike; reports the median per-criterion time of each.
 */
async function measureOverhead(modelPath: string, criteria: number, rounds: number): Promise<LlamaCppBenchmarkFigures['overhead']> {
  const judge = await createLlamaCppJudge({ model: modelPath, threads, sequences: 1, contextSize: 1024 });
  const direct = await createDirectRunner(modelPath);
  const signal = new AbortController().signal;
  const judgeTimes: number[] = [];
  const directTimes: number[] = [];
  // CPU time of the whole process (all llama.cpp threads included) is less disturbed than wall
  // time when other work shares the machine.
  const judgeCpu: number[] = [];
  const directCpu: number[] = [];
  let sameReplies = true;
  try {
    const judgeReply = async (index: number) =>
      (await judge.complete({ messages: criterionMessages(index), output: { name: 'verdict', schema: verdictSchema }, temperature: 0, maxTokens }, { signal })).text;
    await judgeReply(0);
    await direct.generate(criterionMessages(0));
    for (let round = 0; round < rounds; round += 1) {
      for (let index = 0; index < criteria; index += 1) {
        // Alternate which path goes first so neither always inherits a warm cache.
        const judgeFirst = (round + index) % 2 === 0;
        let judged = '';
        let directed = '';
        for (const path of judgeFirst ? ['judge', 'direct'] : ['direct', 'judge']) {
          const started = performance.now();
          const cpuBefore = process.cpuUsage();
          if (path === 'judge') judged = await judgeReply(index);
          else directed = await direct.generate(criterionMessages(index));
          const cpu = process.cpuUsage(cpuBefore);
          (path === 'judge' ? judgeTimes : directTimes).push(performance.now() - started);
          (path === 'judge' ? judgeCpu : directCpu).push((cpu.user + cpu.system) / 1000);
        }
        sameReplies &&= judged === directed;
      }
    }
  } finally {
    await judge.close();
    await direct.close();
  }
  const judgeMsPerCriterion = median(judgeTimes);
  const directMsPerCriterion = median(directTimes);
  const judgeCpuMsPerCriterion = median(judgeCpu);
  const directCpuMsPerCriterion = median(directCpu);
  return {
    judgeMsPerCriterion,
    directMsPerCriterion,
    ratio: judgeMsPerCriterion / directMsPerCriterion,
    judgeCpuMsPerCriterion,
    directCpuMsPerCriterion,
    cpuRatio: judgeCpuMsPerCriterion / directCpuMsPerCriterion,
    sameReplies,
  };
}

export async function runLlamaCppBenchmark(options: LlamaCppBenchmarkOptions = {}): Promise<LlamaCppBenchmarkFigures> {
  const criteria = options.criteria ?? 48;
  const embeddingLength = options.embeddingLength ?? 64;
  const layers = options.layers ?? 2;
  const rounds = options.rounds ?? 3;
  const directory = await mkdtemp(path.join(os.tmpdir(), 'rubricate-bench-llamacpp-'));
  try {
    const modelPath = await writeTinyGguf({ path: path.join(directory, 'tiny.gguf'), bias: 'true', embeddingLength, layers });
    const fileBytes = (await stat(modelPath)).size;

    const throughput: ThroughputFigure[] = [];
    let promptTokens: number[] = [];
    let replyTokens: number[] = [];
    for (const sequences of [1, 2, 4]) {
      const { promptTokens: prompts, replyTokens: outputs, ...figure } = await measureThroughput(modelPath, sequences, criteria, rounds);
      throughput.push(figure);
      promptTokens = prompts;
      replyTokens = outputs;
    }
    const { promptTokens: _prompts, replyTokens: _outputs, ...withLogprobs } = await measureThroughput(modelPath, 1, criteria, rounds, { logprobs: { top: 5 } });

    const overhead = await measureOverhead(modelPath, criteria, rounds);

    return {
      model: { embeddingLength, layers, fileBytes },
      threads,
      criteria,
      meanPromptTokens: promptTokens.reduce((sum, value) => sum + value, 0) / promptTokens.length,
      meanReplyTokens: replyTokens.reduce((sum, value) => sum + value, 0) / replyTokens.length,
      throughput,
      withLogprobs,
      overhead,
    };
  } finally {
    await rm(directory, { recursive: true, force: true });
  }
}

function printFigures(figures: LlamaCppBenchmarkFigures): void {
  const round = (value: number, digits = 1) => Number(value.toFixed(digits));
  console.log(`tiny model: embedding ${figures.model.embeddingLength}, ${figures.model.layers} layers, ${round(figures.model.fileBytes / 1024)} KB; threads ${figures.threads}`);
  console.log(`${figures.criteria} criteria, mean prompt ${round(figures.meanPromptTokens)} tokens, mean reply ${round(figures.meanReplyTokens)} tokens`);
  console.table(
    [...figures.throughput.map((figure) => ({ run: `${figure.sequences} sequence(s)`, ...figure })), { run: '1 sequence + logprobs', ...figures.withLogprobs }].map((row) => ({
      run: row.run,
      'criteria/s': round(row.criteriaPerSecond),
      'wall ms': round(row.wallMs, 0),
    })),
  );
  const { judgeMsPerCriterion, directMsPerCriterion, ratio, judgeCpuMsPerCriterion, directCpuMsPerCriterion, cpuRatio, sameReplies } = figures.overhead;
  console.log(
    `judge layer overhead: ${round(judgeMsPerCriterion, 2)} ms vs direct ${round(directMsPerCriterion, 2)} ms per criterion = ${round(ratio, 3)}x wall ` +
      `(target ≤ 1.1x) ${ratio <= 1.1 ? 'OK' : 'OVER TARGET'}; CPU ${round(judgeCpuMsPerCriterion, 2)} vs ${round(directCpuMsPerCriterion, 2)} ms = ${round(cpuRatio, 3)}x; ` +
      `same replies: ${sameReplies}`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  runLlamaCppBenchmark()
    .then((figures) => {
      printFigures(figures);
      console.log(JSON.stringify(figures));
    })
    .catch((error: unknown) => {
      console.error(error);
      process.exitCode = 1;
    });
}
