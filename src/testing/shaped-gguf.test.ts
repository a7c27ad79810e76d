import path from 'node:path';
import { encode } from 'gpt-tokenizer/encoding/cl100k_base';
import { afterAll, describe, expect, it } from 'vitest';
import { createLlamaCppJudge, type LlamaCppJudge } from '../judges/llamacpp/llamacpp-judge.js';
import { explanationSchema, pinnedExplanationCharacters, withExplanationLength } from '../grading/explanation.js';
import { getSharedLlama } from '../judges/llamacpp/runtime.js';
import { safeParseJson } from '../util/json.js';
import { ensureShapedGguf, modelShapes, shapeParameters, writeShapedGguf, type ShapedGgufFile } from './shaped-gguf.js';
import { test } from './vitest-fixtures.js';
import { hangGuard } from './hang-guard.js';

const texts = [
  'The patient should drink water, rest in a quiet room, and see a doctor if the headache is severe.',
  'Contraindications: renal impairment (low eGFR), hyperkalaemia; naïve café résumé — 東京 🚑',
  '{"explanation": "Mentions NSAIDs", "criteria_met": true}\n\n  indented\tcode()',
];

describe('Qwen3-shaped GGUF models with random weights', () => {
  let directory: string;
  let micro: ShapedGgufFile;
  let judge: LlamaCppJudge;

  test.beforeAll(async ({ fileTempDir }) => {
    directory = fileTempDir;
    micro = await writeShapedGguf({ path: path.join(directory, 'micro.gguf'), shape: 'micro', quantization: 'q4_0' });
    judge = await createLlamaCppJudge({ model: micro.path, threads: 1, contextSize: 1024 });
  }, hangGuard(120_000));

  afterAll(async () => {
    await judge?.close();
  });

  it('writes the shapes it claims: parameter count and Q4_0 size', () => {
    const shape = modelShapes.micro;
    const perLayer =
      shape.embeddingLength * shape.headCount * shape.headDimension * 2 + // q and output projections
      shape.embeddingLength * shape.headCountKv * shape.headDimension * 2 + // k and v
      shape.embeddingLength * shape.feedForwardLength * 3 + // gate, up, down
      shape.embeddingLength * 2 + shape.headDimension * 2; // norms
    const expected = shape.embeddingLength * shape.vocabularySize + shape.embeddingLength + shape.layers * perLayer;
    expect(micro.parameters).toBe(expected);
    // Q4_0 stores 32 weights in 18 bytes; the norms are F32; the header holds the vocabulary.
    const matrixWeights = expected - shape.embeddingLength - shape.layers * (shape.embeddingLength * 2 + shape.headDimension * 2);
    expect(micro.bytes).toBeGreaterThan((matrixWeights / 32) * 18);
    // The real 4B shape has about 4.0B parameters (tied embeddings), as Qwen3-4B does.
    expect(shapeParameters(modelShapes['qwen3-4b']) / 1e9).toBeCloseTo(4.02, 1);
  });

  it('loads in llama.cpp as a qwen3 model with the real vocabulary size', async () => {
    const llama = await getSharedLlama();
    const model = await llama.loadModel({ modelPath: micro.path });
    try {
      expect(model.fileInfo.metadata.general.architecture).toBe('qwen3');
      expect(model.fileInsights.totalLayers).toBeGreaterThanOrEqual(modelShapes.micro.layers);
      // Real BPE: texts tokenize exactly as cl100k_base does, and decode back unchanged.
      for (const text of texts) {
        const tokens = model.tokenize(text);
        expect(tokens.length).toBe(encode(text).length);
        expect(model.detokenize(tokens)).toBe(text);
      }
      // Qwen's pre-tokenizer splits numbers digit by digit (cl100k keeps runs of three).
      expect(model.tokenize('2025').length).toBe(4);
    } finally {
      await model.dispose();
    }
  });

  it('grades through the judge: explanations pinned to a fixed length, and one token for a verdict-only schema', async () => {
    const pinned = withExplanationLength(judge, 'full', true);
    const request = {
      messages: [
        { role: 'system' as const, content: 'Grade the response against the criterion. Reply in JSON.' },
        { role: 'user' as const, content: 'Criterion: mentions hydration.\nResponse: Drink water and rest.' },
      ],
      output: { name: 'verdict', schema: { type: 'object', properties: { explanation: { type: 'string' }, criteria_met: { type: 'boolean' } }, required: ['explanation', 'criteria_met'], additionalProperties: false } },
      temperature: 0,
      maxTokens: 400,
    };
    const reply = await pinned.complete(request, { signal: new AbortController().signal });
    const parsed = safeParseJson(reply.text);
    expect(parsed.ok, reply.text).toBe(true);
    const value = parsed.ok ? (parsed.value as { explanation: string; criteria_met: boolean }) : undefined;
    expect(value?.explanation.length).toBe(pinnedExplanationCharacters.full);
    expect(typeof value?.criteria_met).toBe('boolean');

    const none = await withExplanationLength(judge, 'none', true).complete(request, { signal: new AbortController().signal });
    expect(none.text).toMatch(/^\{"criteria_met": (true|false)\}$/);
    expect(none.usage.outputTokens).toBe(1);
  }, hangGuard(120_000));

  it('rewrites explanation fields in nested (batched) schemas and drops them from required', () => {
    const batched = {
      type: 'object',
      properties: { verdicts: { type: 'object', properties: { c1: { type: 'object', properties: { explanation: { type: 'string' }, criteria_met: { type: 'boolean' } }, required: ['explanation', 'criteria_met'] } } } },
    };
    const none = explanationSchema(batched, 'none', false) as typeof batched;
    expect(none.properties.verdicts.properties.c1).toEqual({ type: 'object', properties: { criteria_met: { type: 'boolean' } }, required: ['criteria_met'] });
    const short = explanationSchema(batched, 'short', false) as typeof batched;
    expect(short.properties.verdicts.properties.c1.properties.explanation).toEqual({ type: 'string', maxLength: 120 });
    // The input is left as it was.
    expect(batched.properties.verdicts.properties.c1.properties.explanation).toEqual({ type: 'string' });
  });

  it('reuses a model file whose inputs are unchanged, under a name that carries their digest', async () => {
    const first = await ensureShapedGguf(directory, 'micro');
    const second = await ensureShapedGguf(directory, 'micro');
    expect(second.path).toBe(first.path);
    expect(path.basename(first.path)).toMatch(/^micro-q4_0-[0-9a-f]{12}\.gguf$/);
    const other = await ensureShapedGguf(directory, 'micro', 'q4_0', 2);
    expect(other.path).not.toBe(first.path);
  }, hangGuard(120_000));
});
