/**
 * Writes a tiny llama-architecture GGUF file that the real llama.cpp (through node-llama-cpp)
 * loads in milliseconds, so the local judge can be tested end to end without a real model.
 *
 * The weights are seeded random numbers, except for one "rigged" hidden dimension: it is held
 * constant through the residual stream and read by the output head as a per-token logit bias.
 * The bias favours `"`, letters and space and penalises bytes >= 0x80, so grammar-constrained
 * JSON closes its strings within a few tokens; with `bias: 'true' | 'false'` it also pushes the
 * verdict letter (`t` or `f`) so greedy decoding gives a known boolean. The random part still
 * moves the logits a little from one context to the next, so probabilities are never exactly 0 or 1.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { RubricateError } from '../errors.js';
import { seededRandom, type RandomSource } from '../util/random.js';
import { ByteWriter, chatMlTemplate, ggufAlignment, gpt2ByteToUnicode, writeGgufHeader, type MetadataValue } from './gguf-writer.js';

export { gpt2ByteToUnicode } from './gguf-writer.js';

export interface TinyGgufOptions {
  path: string;
  /** Which verdict letter greedy decoding is pushed toward; `none` leaves `t` and `f` level. */
  bias?: 'true' | 'false' | 'none';
  /**
   * Hidden size; must be a multiple of the head count (4). The default, 64, gives heads of 16:
   * llama.cpp's CPU flash attention is about ten times slower on heads of 8 (a hidden size of 32),
   * which made a test prompt's prefill most of a local-judge test's CPU.
   */
  embeddingLength?: number;
  layers?: number;
  /** Trained context length written into the file; contexts are created up to this size. */
  contextLength?: number;
  /** Seed of the weights; the same options always give the same bytes. */
  seed?: number;
}

const ggmlTypeF32 = 0;

/** Token types of llama.cpp's vocabulary (`tokenizer.ggml.token_type`). */
const tokenTypeNormal = 1;
const tokenTypeControl = 3;

export const tinySpecialTokens = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'] as const;
const headCount = 4;
/** Hidden dimension that carries the logit bias from the embedding to the output head. */
const riggedDimension = 0;

/**
 * Logit bias per byte, in logit units, that the rigged dimension adds. `"` is highest so strings
 * close quickly under greedy decoding; the verdict letter sits below `"` but above the other
 * letters and space, which is what greedy sees where only `t`, `f` or a space may follow.
 * The margins (3 logits and more) are far above the random part's effect (a few tenths).
 */
const biasLevels = {
  quote: 10,
  verdictLetter: 7,
  jsonPunctuation: 5,
  letter: 4,
  space: 3,
  endOfTurn: 2,
  otherPrintable: 1,
  control: -4,
  highByte: -10,
  otherSpecial: -10,
} as const;

interface TensorSpec {
  name: string;
  /** Dimensions innermost first, as GGUF stores them. */
  dimensions: number[];
  data: Float32Array;
}

/** Token list of the tiny model: the 256 bytes (id = byte value), then the ChatML specials. */
export function tinyVocabulary(): string[] {
  const tokens = [...gpt2ByteToUnicode(), ...tinySpecialTokens];
  // llama.cpp aborts the whole process (GGML_ASSERT) on duplicate token strings: fail politely first.
  const seen = new Set<string>();
  for (const token of tokens) {
    if (seen.has(token)) throw new RubricateError('INTERNAL', `tiny GGUF vocabulary has a duplicate token ${JSON.stringify(token)}`);
    seen.add(token);
  }
  return tokens;
}

function byteBias(byte: number, bias: 'true' | 'false' | 'none'): number {
  const character = String.fromCharCode(byte);
  if (character === '"') return biasLevels.quote;
  if ((bias === 'true' && character === 't') || (bias === 'false' && character === 'f')) return biasLevels.verdictLetter;
  if (/[A-Za-z]/.test(character)) return biasLevels.letter;
  // Above space, so greedy JSON closes objects without padding (`true}` rather than `true }`).
  if ('{}[],:'.includes(character)) return biasLevels.jsonPunctuation;
  if (character === ' ') return biasLevels.space;
  if (byte >= 0x80) return biasLevels.highByte;
  if (byte < 0x20 || byte === 0x7f) return biasLevels.control;
  return biasLevels.otherPrintable;
}

function gaussian(random: RandomSource): number {
  // Box–Muller; 1 - u keeps the logarithm away from zero.
  const u = 1 - random();
  const v = random();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
}

function randomMatrix(random: RandomSource, size: number, deviation: number): Float32Array {
  const values = new Float32Array(size);
  for (let index = 0; index < size; index += 1) values[index] = gaussian(random) * deviation;
  return values;
}

/**
 * Weight matrix with GGUF dimensions [inputs, outputs] (row `o` holds the weights of output `o`).
 * The rigged dimension is cut out of both sides so no layer reads it or writes to it: the
 * residual stream carries it unchanged from the embedding to the output head.
 */
function layerMatrix(random: RandomSource, inputs: number, outputs: number, deviation: number, options: { cutInput: boolean; cutOutput: boolean }): Float32Array {
  const values = randomMatrix(random, inputs * outputs, deviation);
  if (options.cutInput) for (let output = 0; output < outputs; output += 1) values[output * inputs + riggedDimension] = 0;
  if (options.cutOutput) values.fill(0, riggedDimension * inputs, riggedDimension * inputs + inputs);
  return values;
}

function buildTensors(options: Required<Omit<TinyGgufOptions, 'path'>>, vocabularySize: number): TensorSpec[] {
  const { embeddingLength, layers, bias, seed } = options;
  const random = seededRandom(seed);
  const feedForwardLength = embeddingLength * 2;
  const ones = () => new Float32Array(embeddingLength).fill(1);
  // Small random parts keep the rigged dimension dominant after RMS normalisation.
  const embeddingDeviation = 0.02;
  const layerDeviation = 1 / Math.sqrt(embeddingLength);
  const outputDeviation = 0.4;

  const tokenEmbedding = randomMatrix(random, embeddingLength * vocabularySize, embeddingDeviation);
  for (let token = 0; token < vocabularySize; token += 1) tokenEmbedding[token * embeddingLength + riggedDimension] = 1;

  // After RMS norm the rigged dimension reads about sqrt(embeddingLength); divide so biases are in logits.
  const riggedScale = Math.sqrt(embeddingLength);
  const output = randomMatrix(random, embeddingLength * vocabularySize, outputDeviation);
  for (let token = 0; token < vocabularySize; token += 1) {
    let logitBias: number;
    if (token < 256) logitBias = byteBias(token, bias);
    else if (tinySpecialTokens[token - 256] === '<|im_end|>') logitBias = biasLevels.endOfTurn;
    else logitBias = biasLevels.otherSpecial;
    output[token * embeddingLength + riggedDimension] = logitBias / riggedScale;
  }

  const tensors: TensorSpec[] = [
    { name: 'token_embd.weight', dimensions: [embeddingLength, vocabularySize], data: tokenEmbedding },
    { name: 'output_norm.weight', dimensions: [embeddingLength], data: ones() },
    { name: 'output.weight', dimensions: [embeddingLength, vocabularySize], data: output },
  ];
  const cut = { cutInput: true, cutOutput: false };
  const cutBoth = { cutInput: true, cutOutput: true };
  for (let layer = 0; layer < layers; layer += 1) {
    const prefix = `blk.${layer}`;
    tensors.push(
      { name: `${prefix}.attn_norm.weight`, dimensions: [embeddingLength], data: ones() },
      { name: `${prefix}.attn_q.weight`, dimensions: [embeddingLength, embeddingLength], data: layerMatrix(random, embeddingLength, embeddingLength, layerDeviation, cut) },
      { name: `${prefix}.attn_k.weight`, dimensions: [embeddingLength, embeddingLength], data: layerMatrix(random, embeddingLength, embeddingLength, layerDeviation, cut) },
      { name: `${prefix}.attn_v.weight`, dimensions: [embeddingLength, embeddingLength], data: layerMatrix(random, embeddingLength, embeddingLength, layerDeviation, cut) },
      // Outputs are scaled down so each layer nudges the residual stream instead of swamping it.
      { name: `${prefix}.attn_output.weight`, dimensions: [embeddingLength, embeddingLength], data: layerMatrix(random, embeddingLength, embeddingLength, layerDeviation * 0.1, cutBoth) },
      { name: `${prefix}.ffn_norm.weight`, dimensions: [embeddingLength], data: ones() },
      { name: `${prefix}.ffn_gate.weight`, dimensions: [embeddingLength, feedForwardLength], data: layerMatrix(random, embeddingLength, feedForwardLength, layerDeviation, cut) },
      { name: `${prefix}.ffn_up.weight`, dimensions: [embeddingLength, feedForwardLength], data: layerMatrix(random, embeddingLength, feedForwardLength, layerDeviation, cut) },
      { name: `${prefix}.ffn_down.weight`, dimensions: [feedForwardLength, embeddingLength], data: layerMatrix(random, feedForwardLength, embeddingLength, (1 / Math.sqrt(feedForwardLength)) * 0.1, { cutInput: false, cutOutput: true }) },
    );
  }
  return tensors;
}

function buildMetadata(options: Required<Omit<TinyGgufOptions, 'path'>>, tokens: string[]): Array<[string, MetadataValue]> {
  const { embeddingLength, layers, contextLength } = options;
  const tokenTypes = tokens.map((_, index) => (index < 256 ? tokenTypeNormal : tokenTypeControl));
  const endOfText = 256 + tinySpecialTokens.indexOf('<|endoftext|>');
  const endOfTurn = 256 + tinySpecialTokens.indexOf('<|im_end|>');
  // Only u32 is accepted for these hyper-parameters (llama.cpp rejects i32 here).
  return [
    ['general.architecture', { type: 'string', value: 'llama' }],
    ['general.name', { type: 'string', value: 'rubricate tiny test model' }],
    ['general.alignment', { type: 'u32', value: ggufAlignment }],
    ['llama.context_length', { type: 'u32', value: contextLength }],
    ['llama.embedding_length', { type: 'u32', value: embeddingLength }],
    ['llama.block_count', { type: 'u32', value: layers }],
    ['llama.feed_forward_length', { type: 'u32', value: embeddingLength * 2 }],
    ['llama.attention.head_count', { type: 'u32', value: headCount }],
    ['llama.attention.head_count_kv', { type: 'u32', value: headCount }],
    ['llama.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-5 }],
    // Must equal the head size or loading fails.
    ['llama.rope.dimension_count', { type: 'u32', value: embeddingLength / headCount }],
    ['llama.rope.freq_base', { type: 'f32', value: 10000 }],
    ['tokenizer.ggml.model', { type: 'string', value: 'gpt2' }],
    ['tokenizer.ggml.pre', { type: 'string', value: 'default' }],
    ['tokenizer.ggml.tokens', { type: 'stringArray', value: tokens }],
    ['tokenizer.ggml.token_type', { type: 'i32Array', value: tokenTypes }],
    // No merges: every byte stays its own token, so `true` starts with the single token `t`.
    ['tokenizer.ggml.merges', { type: 'stringArray', value: [] }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: endOfText }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: endOfTurn }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: false }],
    ['tokenizer.chat_template', { type: 'string', value: chatMlTemplate }],
  ];
}

/**
 * Serialises the tiny model to GGUF v3 bytes.
 *
 * @example
 * ```ts
 * import { buildTinyGguf } from 'rubricate/testing';
 * const bytes = buildTinyGguf({ bias: 'false' });
 * ```
 */
export function buildTinyGguf(options: Omit<TinyGgufOptions, 'path'> = {}): Buffer {
  const resolved: Required<Omit<TinyGgufOptions, 'path'>> = {
    bias: options.bias ?? 'none',
    embeddingLength: options.embeddingLength ?? 64,
    layers: options.layers ?? 1,
    contextLength: options.contextLength ?? 4096,
    seed: options.seed ?? 1,
  };
  if (!Number.isInteger(resolved.embeddingLength) || resolved.embeddingLength < headCount * 2 || resolved.embeddingLength % headCount !== 0) {
    throw new RubricateError('INPUT_INVALID', `embeddingLength must be a multiple of ${headCount} and at least ${headCount * 2}`, { field: 'embeddingLength' });
  }
  if (!Number.isInteger(resolved.layers) || resolved.layers < 1) throw new RubricateError('INPUT_INVALID', 'layers must be a positive integer', { field: 'layers' });
  if (!Number.isInteger(resolved.contextLength) || resolved.contextLength < 64) throw new RubricateError('INPUT_INVALID', 'contextLength must be an integer of at least 64', { field: 'contextLength' });

  const tokens = tinyVocabulary();
  const metadata = buildMetadata(resolved, tokens);
  const tensors = buildTensors(resolved, tokens.length);

  const writer = new ByteWriter();
  writeGgufHeader(
    writer,
    metadata,
    tensors.map((tensor) => ({ name: tensor.name, dimensions: tensor.dimensions, ggmlType: ggmlTypeF32, byteLength: tensor.data.byteLength })),
  );
  for (const tensor of tensors) {
    writer.bytes(new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength));
    writer.padTo(ggufAlignment);
  }
  return writer.result();
}

/**
 * Writes the tiny model to `options.path` (creating its folder) and returns the absolute path.
 *
 * @example
 * ```ts
 * import { createJudge } from 'rubricate';
 * import { writeTinyGguf } from 'rubricate/testing';
 * const path = await writeTinyGguf({ path: 'tiny.gguf', bias: 'true' });
 * const judge = await createJudge({ model: `gguf:${path}` });
 * ```
 */
export async function writeTinyGguf(options: TinyGgufOptions): Promise<string> {
  const { path: filePath, ...modelOptions } = options;
  const bytes = buildTinyGguf(modelOptions);
  const absolutePath = path.resolve(filePath);
  await mkdir(path.dirname(absolutePath), { recursive: true });
  await writeFile(absolutePath, bytes);
  return absolutePath;
}
