/**
 * Writes a GGUF model with the architecture and tensor shapes of a real Qwen3 model (layers,
 * heads, KV heads, hidden and FFN sizes, a vocabulary of the real size) and seeded random
 * Q4_0 or Q8_0 weights. llama.cpp's speed depends only on shapes and tensor types, never on
 * what the weights say, so such a file measures how fast the embedded judge really is where
 * the real weights can't be downloaded.
 *
 * The vocabulary is real BPE: cl100k_base's 100,256 tokens, whose merges are rebuilt from their
 * ranks (Qwen's tokenizer descends from it, so prompts tokenize to about the real length),
 * padded with unused tokens to the shape's vocabulary size. The data is streamed to disk tensor
 * by tensor, so a 2.3 GB file never has to fit in memory.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { RubricateError } from '../errors.js';
import { ByteWriter, chatMlTemplate, ggufAlignment, gpt2ByteToUnicode, paddedLength, writeGgufHeader, type MetadataValue, type TensorInfo } from './gguf-writer.js';

export interface ModelShape {
  /** Transformer blocks. */
  layers: number;
  embeddingLength: number;
  feedForwardLength: number;
  headCount: number;
  headCountKv: number;
  headDimension: number;
  vocabularySize: number;
  /** Trained context length written into the file. */
  contextLength: number;
  ropeFreqBase: number;
}

/**
 * Shapes from the models' published configurations. `qwen3-4b` is the default embedded judge's
 * (Qwen3-4B-Instruct-2507); the smaller two are the 1.7B and 0.6B class. `micro` keeps the
 * architecture and the real vocabulary with tiny layers, for tests of the writer itself.
 */
export const modelShapes = {
  'qwen3-4b': { layers: 36, embeddingLength: 2560, feedForwardLength: 9728, headCount: 32, headCountKv: 8, headDimension: 128, vocabularySize: 151_936, contextLength: 262_144, ropeFreqBase: 5_000_000 },
  'qwen3-1.7b': { layers: 28, embeddingLength: 2048, feedForwardLength: 6144, headCount: 16, headCountKv: 8, headDimension: 128, vocabularySize: 151_936, contextLength: 40_960, ropeFreqBase: 1_000_000 },
  'qwen3-0.6b': { layers: 28, embeddingLength: 1024, feedForwardLength: 3072, headCount: 16, headCountKv: 8, headDimension: 128, vocabularySize: 151_936, contextLength: 40_960, ropeFreqBase: 1_000_000 },
  micro: { layers: 2, embeddingLength: 64, feedForwardLength: 128, headCount: 4, headCountKv: 2, headDimension: 16, vocabularySize: 151_936, contextLength: 8192, ropeFreqBase: 1_000_000 },
} as const satisfies Record<string, ModelShape>;

export type ModelShapeName = keyof typeof modelShapes;

/** Quantisations llama.cpp runs on its fast CPU paths; Q4_0 is what Q4 models run at. */
export type ShapedQuantization = 'q4_0' | 'q8_0';

const ggmlType = { f32: 0, q4_0: 2, q8_0: 8 } as const;
const blockWeights = 32;
const blockBytes: Record<ShapedQuantization, number> = { q4_0: 2 + blockWeights / 2, q8_0: 2 + blockWeights };
/** Spread of the random weights: small enough that activations stay finite through every layer. */
const weightDeviation = 0.02;

const tokenType = { normal: 1, control: 3, unused: 5 } as const;
/** Qwen's chat specials, with the ids they have in Qwen3's vocabulary. */
const specialTokens: Array<[number, string]> = [
  [151_643, '<|endoftext|>'],
  [151_644, '<|im_start|>'],
  [151_645, '<|im_end|>'],
  [151_667, '<think>'],
  [151_668, '</think>'],
];

export interface ShapedGgufOptions {
  path: string;
  shape: ModelShapeName | ModelShape;
  quantization?: ShapedQuantization;
  seed?: number;
}

export interface ShapedGgufFile {
  path: string;
  bytes: number;
  parameters: number;
  shape: ModelShape;
  quantization: ShapedQuantization;
}

function resolveShape(shape: ModelShapeName | ModelShape): ModelShape {
  if (typeof shape !== 'string') return shape;
  if (!Object.hasOwn(modelShapes, shape)) {
    throw new RubricateError('CONFIG_INVALID', `unknown model shape "${shape}"; known: ${Object.keys(modelShapes).join(', ')}`, { field: 'shape' });
  }
  return modelShapes[shape];
}

interface Vocabulary {
  tokens: string[];
  types: number[];
  merges: string[];
}

let cachedBpeVocabulary: Promise<{ tokens: string[]; merges: string[] }> | undefined;

/**
 * cl100k_base's tokens in GPT-2's printable byte form, with the merge list that rebuilds them:
 * each token of two bytes or more splits into the two lower-ranked tokens that BPE over lower
 * ranks leaves (the same rule that turns a tiktoken rank table into GPT-2 merges).
 */
function cl100kVocabulary(): Promise<{ tokens: string[]; merges: string[] }> {
  cachedBpeVocabulary ??= (async () => {
    const ranksModule = (await import('gpt-tokenizer/bpeRanks/cl100k_base')) as { default: Array<string | number[]> };
    const latin1Tokens = ranksModule.default.map((entry) => (typeof entry === 'string' ? Buffer.from(entry, 'utf8') : Buffer.from(entry)).toString('latin1'));
    const rankOf = new Map<string, number>();
    latin1Tokens.forEach((bytes, rank) => rankOf.set(bytes, rank));
    const byteToUnicode = gpt2ByteToUnicode();
    // Byte strings as latin1 text (one char per byte) are the Map keys and the merge parts, so the
    // BPE replay below works on strings alone; each part is made printable once, at the end.
    const printable = (latin1: string) => {
      let text = '';
      for (let index = 0; index < latin1.length; index += 1) text += byteToUnicode[latin1.charCodeAt(index)];
      return text;
    };
    const tokens = latin1Tokens.map(printable);
    const merges: string[] = [];
    latin1Tokens.forEach((bytes, rank) => {
      if (bytes.length < 2) return;
      const parts = Array.from(bytes);
      while (parts.length > 2) {
        let bestIndex = -1;
        let bestRank = rank;
        for (let index = 0; index + 1 < parts.length; index += 1) {
          const pairRank = rankOf.get(parts[index] + parts[index + 1]);
          if (pairRank !== undefined && pairRank < bestRank) {
            bestRank = pairRank;
            bestIndex = index;
          }
        }
        if (bestIndex < 0) break;
        parts.splice(bestIndex, 2, parts[bestIndex] + parts[bestIndex + 1]);
      }
      // A token BPE can't reach in two parts is simply left without a merge (never seen in cl100k).
      if (parts.length !== 2) return;
      merges.push(`${printable(parts[0])} ${printable(parts[1])}`);
    });
    return { tokens, merges };
  })();
  return cachedBpeVocabulary;
}

async function buildVocabulary(size: number): Promise<Vocabulary> {
  const { tokens: bpeTokens, merges } = await cl100kVocabulary();
  // Qwen's ids where the vocabulary is real-sized; otherwise the specials take its last ids.
  const realIds = size > Math.max(...specialTokens.map(([id]) => id));
  const specialIds = new Map(specialTokens.map(([id, text], index) => [realIds ? id : size - specialTokens.length + index, text]));
  if (size < bpeTokens.length + specialTokens.length) {
    throw new RubricateError('CONFIG_INVALID', `vocabularySize must be at least ${bpeTokens.length + specialTokens.length}`, { field: 'vocabularySize' });
  }
  const tokens: string[] = new Array(size);
  const types: number[] = new Array(size);
  for (let id = 0; id < size; id += 1) {
    const special = specialIds.get(id);
    if (special !== undefined) {
      tokens[id] = special;
      types[id] = tokenType.control;
    } else if (id < bpeTokens.length) {
      tokens[id] = bpeTokens[id];
      types[id] = tokenType.normal;
    } else {
      // Unused padding, as real vocabularies pad to a round size; BPE never produces these.
      tokens[id] = `[PAD${id}]`;
      types[id] = tokenType.unused;
    }
  }
  return { tokens, types, merges };
}

function tokenId(vocabulary: Vocabulary, text: string): number {
  const id = vocabulary.tokens.indexOf(text);
  if (id < 0) throw new RubricateError('INTERNAL', `shaped GGUF vocabulary lacks ${text}`);
  return id;
}

function buildMetadata(shape: ModelShape, vocabulary: Vocabulary, name: string): Array<[string, MetadataValue]> {
  const endOfText = tokenId(vocabulary, '<|endoftext|>');
  const endOfTurn = tokenId(vocabulary, '<|im_end|>');
  return [
    ['general.architecture', { type: 'string', value: 'qwen3' }],
    ['general.name', { type: 'string', value: name }],
    ['general.alignment', { type: 'u32', value: ggufAlignment }],
    ['qwen3.context_length', { type: 'u32', value: shape.contextLength }],
    ['qwen3.embedding_length', { type: 'u32', value: shape.embeddingLength }],
    ['qwen3.block_count', { type: 'u32', value: shape.layers }],
    ['qwen3.feed_forward_length', { type: 'u32', value: shape.feedForwardLength }],
    ['qwen3.attention.head_count', { type: 'u32', value: shape.headCount }],
    ['qwen3.attention.head_count_kv', { type: 'u32', value: shape.headCountKv }],
    ['qwen3.attention.key_length', { type: 'u32', value: shape.headDimension }],
    ['qwen3.attention.value_length', { type: 'u32', value: shape.headDimension }],
    ['qwen3.attention.layer_norm_rms_epsilon', { type: 'f32', value: 1e-6 }],
    ['qwen3.rope.freq_base', { type: 'f32', value: shape.ropeFreqBase }],
    ['tokenizer.ggml.model', { type: 'string', value: 'gpt2' }],
    ['tokenizer.ggml.pre', { type: 'string', value: 'qwen2' }],
    ['tokenizer.ggml.tokens', { type: 'stringArray', value: vocabulary.tokens }],
    ['tokenizer.ggml.token_type', { type: 'i32Array', value: vocabulary.types }],
    ['tokenizer.ggml.merges', { type: 'stringArray', value: vocabulary.merges }],
    ['tokenizer.ggml.bos_token_id', { type: 'u32', value: endOfText }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: endOfTurn }],
    ['tokenizer.ggml.padding_token_id', { type: 'u32', value: endOfText }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: false }],
    ['tokenizer.chat_template', { type: 'string', value: chatMlTemplate }],
  ];
}

interface PlannedTensor extends TensorInfo {
  /** Norm weights are F32 ones; matrices are quantised random blocks. */
  fill: 'ones' | 'random';
}

function matrix(name: string, inputs: number, outputs: number, quantization: ShapedQuantization): PlannedTensor {
  if (inputs % blockWeights !== 0) throw new RubricateError('CONFIG_INVALID', `${name}: row length ${inputs} is not a multiple of ${blockWeights}`, { field: 'shape' });
  return {
    name,
    dimensions: [inputs, outputs],
    ggmlType: ggmlType[quantization],
    byteLength: (inputs / blockWeights) * outputs * blockBytes[quantization],
    fill: 'random',
  };
}

function norm(name: string, length: number): PlannedTensor {
  return { name, dimensions: [length], ggmlType: ggmlType.f32, byteLength: length * 4, fill: 'ones' };
}

/** Qwen3's tensors; the output head is tied to the token embedding, as in the real models. */
function planTensors(shape: ModelShape, quantization: ShapedQuantization): PlannedTensor[] {
  const { embeddingLength: embedding, feedForwardLength: feedForward, headDimension } = shape;
  const queryWidth = shape.headCount * headDimension;
  const keyValueWidth = shape.headCountKv * headDimension;
  const tensors: PlannedTensor[] = [matrix('token_embd.weight', embedding, shape.vocabularySize, quantization), norm('output_norm.weight', embedding)];
  for (let layer = 0; layer < shape.layers; layer += 1) {
    const prefix = `blk.${layer}`;
    tensors.push(
      norm(`${prefix}.attn_norm.weight`, embedding),
      matrix(`${prefix}.attn_q.weight`, embedding, queryWidth, quantization),
      matrix(`${prefix}.attn_k.weight`, embedding, keyValueWidth, quantization),
      matrix(`${prefix}.attn_v.weight`, embedding, keyValueWidth, quantization),
      matrix(`${prefix}.attn_output.weight`, queryWidth, embedding, quantization),
      norm(`${prefix}.attn_q_norm.weight`, headDimension),
      norm(`${prefix}.attn_k_norm.weight`, headDimension),
      norm(`${prefix}.ffn_norm.weight`, embedding),
      matrix(`${prefix}.ffn_gate.weight`, embedding, feedForward, quantization),
      matrix(`${prefix}.ffn_up.weight`, embedding, feedForward, quantization),
      matrix(`${prefix}.ffn_down.weight`, feedForward, embedding, quantization),
    );
  }
  return tensors;
}

/** IEEE 754 half-precision bits of a small positive normal number (all our block scales are). */
function halfBits(value: number): number {
  const float = new Float32Array([value]);
  const bits = new Uint32Array(float.buffer)[0];
  const exponent = ((bits >>> 23) & 0xff) - 127 + 15;
  const mantissa = (bits >>> 13) & 0x3ff;
  return (exponent << 10) | mantissa;
}

/** Block scale giving the random weights about `weightDeviation` of spread. */
function blockScaleBits(quantization: ShapedQuantization): number {
  // Uniform 4-bit values minus 8 have a deviation of about 4.61; uniform int8 values about 73.9.
  return halfBits(weightDeviation / (quantization === 'q4_0' ? 4.61 : 73.9));
}

/** xorshift32: seeded, and fast enough to fill gigabytes in seconds. */
function fillRandom(target: Buffer, state: { value: number }): void {
  const words = new Uint32Array(target.buffer, target.byteOffset, target.byteLength >>> 2);
  let x = state.value;
  for (let index = 0; index < words.length; index += 1) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[index] = x >>> 0;
  }
  state.value = x;
}

const chunkBlocks = 1 << 18;

async function writeTensorData(
  handle: import('node:fs/promises').FileHandle,
  tensor: PlannedTensor,
  quantization: ShapedQuantization,
  seed: number,
  position: number,
): Promise<number> {
  if (tensor.fill === 'ones') {
    const data = Buffer.alloc(paddedLength(tensor.byteLength));
    for (let index = 0; index < tensor.byteLength / 4; index += 1) data.writeFloatLE(1, index * 4);
    await handle.write(data, 0, data.length, position);
    return position + data.length;
  }
  const bytesPerBlock = blockBytes[quantization];
  const scaleBits = blockScaleBits(quantization);
  const totalBlocks = tensor.byteLength / bytesPerBlock;
  // Whole 4-byte words for the generator, whole blocks for the scales.
  const chunk = Buffer.alloc(Math.ceil((chunkBlocks * bytesPerBlock) / 4) * 4);
  const state = { value: (seed * 2_654_435_761) >>> 0 || 1 };
  let written = 0;
  while (written < totalBlocks) {
    const blocks = Math.min(chunkBlocks, totalBlocks - written);
    const bytes = blocks * bytesPerBlock;
    fillRandom(chunk, state);
    for (let block = 0; block < blocks; block += 1) chunk.writeUInt16LE(scaleBits, block * bytesPerBlock);
    await handle.write(chunk, 0, bytes, position);
    position += bytes;
    written += blocks;
  }
  const padding = paddedLength(tensor.byteLength) - tensor.byteLength;
  if (padding > 0) {
    await handle.write(Buffer.alloc(padding), 0, padding, position);
    position += padding;
  }
  return position;
}

/** Parameter count of a shape (weights of every tensor). */
export function shapeParameters(shape: ModelShape): number {
  return planTensors(shape, 'q8_0').reduce((sum, tensor) => sum + tensor.dimensions.reduce((product, dimension) => product * dimension, 1), 0);
}

/**
 * Writes the model to `options.path` (through a temporary file in the same folder, renamed at the
 * end, so an interrupted write never leaves a half model under the final name).
 */
export async function writeShapedGguf(options: ShapedGgufOptions): Promise<ShapedGgufFile> {
  const shape = resolveShape(options.shape);
  const quantization = options.quantization ?? 'q4_0';
  const seed = options.seed ?? 1;
  const shapeName = typeof options.shape === 'string' ? options.shape : 'custom';
  const vocabulary = await buildVocabulary(shape.vocabularySize);
  const tensors = planTensors(shape, quantization);
  const header = new ByteWriter();
  writeGgufHeader(header, buildMetadata(shape, vocabulary, `rubricate benchmark model (${shapeName} shape, ${quantization}, random weights)`), tensors);

  const target = path.resolve(options.path);
  await mkdir(path.dirname(target), { recursive: true });
  const temporary = `${target}.${process.pid}.partial`;
  const handle = await open(temporary, 'w');
  try {
    const headerBytes = header.result();
    await handle.write(headerBytes, 0, headerBytes.length, 0);
    let position = headerBytes.length;
    for (const [index, tensor] of tensors.entries()) position = await writeTensorData(handle, tensor, quantization, seed + index, position);
    await handle.close();
    await rename(temporary, target);
  } catch (error) {
    await handle.close().catch(() => undefined);
    await rm(temporary, { force: true });
    throw error;
  }
  const { size } = await stat(target);
  return { path: target, bytes: size, parameters: shapeParameters(shape), shape, quantization };
}

/**
 * Returns the model for `shape` in `folder`, writing it first if it isn't there. The file name
 * carries a digest of everything that decides its bytes, so a changed writer never reuses a stale file.
 */
export async function ensureShapedGguf(folder: string, shape: ModelShapeName, quantization: ShapedQuantization = 'q4_0', seed = 1): Promise<ShapedGgufFile> {
  const resolved = resolveShape(shape);
  const digest = createHash('sha256').update(JSON.stringify({ writer: 1, resolved, quantization, seed })).digest('hex').slice(0, 12);
  const target = path.join(folder, `${shape}-${quantization}-${digest}.gguf`);
  const existing = await stat(target).catch(() => undefined);
  if (existing) return { path: target, bytes: existing.size, parameters: shapeParameters(resolved), shape: resolved, quantization };
  return writeShapedGguf({ path: target, shape, quantization, seed });
}
