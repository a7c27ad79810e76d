import { stat } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RubricateError } from '../errors.js';
import { buildTinyGguf, gpt2ByteToUnicode, tinyVocabulary, writeTinyGguf } from './tiny-gguf.js';
import { test } from './vitest-fixtures.js';

/** Walks the GGUF header and metadata section, returning each key's value type and the tensor table. */
function readGgufLayout(bytes: Buffer) {
  let offset = 0;
  const u32 = () => {
    const value = bytes.readUInt32LE(offset);
    offset += 4;
    return value;
  };
  const u64 = () => {
    const value = Number(bytes.readBigUInt64LE(offset));
    offset += 8;
    return value;
  };
  const string = () => {
    const length = u64();
    const value = bytes.subarray(offset, offset + length).toString('utf8');
    offset += length;
    return value;
  };
  const scalarSizes: Record<number, number> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };
  const skipValue = (type: number): void => {
    if (type === 8) string();
    else if (type === 9) {
      const elementType = u32();
      const count = u64();
      for (let index = 0; index < count; index += 1) skipValue(elementType);
    } else offset += scalarSizes[type];
  };
  const magic = bytes.subarray(0, 4).toString('ascii');
  offset = 4;
  const version = u32();
  const tensorCount = u64();
  const keyCount = u64();
  const keyTypes = new Map<string, number>();
  for (let index = 0; index < keyCount; index += 1) {
    const key = string();
    const type = u32();
    keyTypes.set(key, type);
    skipValue(type);
  }
  const tensors: Array<{ name: string; dimensions: number[]; type: number; offset: number }> = [];
  for (let index = 0; index < tensorCount; index += 1) {
    const name = string();
    const dimensionCount = u32();
    const dimensions = Array.from({ length: dimensionCount }, () => u64());
    tensors.push({ name, dimensions, type: u32(), offset: u64() });
  }
  const dataStart = Math.ceil(offset / 32) * 32;
  return { magic, version, tensorCount, keyTypes, tensors, dataStart };
}

describe('tiny GGUF writer', () => {
  it('writes GGUF v3 with the llama keys in the types llama.cpp insists on', () => {
    const layout = readGgufLayout(buildTinyGguf({ layers: 2 }));
    expect(layout.magic).toBe('GGUF');
    expect(layout.version).toBe(3);
    const u32 = 4;
    for (const key of ['llama.context_length', 'llama.embedding_length', 'llama.block_count', 'llama.feed_forward_length', 'llama.attention.head_count', 'llama.rope.dimension_count']) {
      expect(layout.keyTypes.get(key), key).toBe(u32);
    }
    expect(layout.keyTypes.get('llama.attention.layer_norm_rms_epsilon')).toBe(6);
    expect(layout.keyTypes.get('general.architecture')).toBe(8);
    expect(layout.keyTypes.get('tokenizer.ggml.tokens')).toBe(9);
    expect(layout.keyTypes.get('tokenizer.ggml.merges')).toBe(9);
    expect(layout.keyTypes.get('tokenizer.chat_template')).toBe(8);
  });

  it('lists exactly the llama tensors, with 32-byte aligned running offsets', () => {
    const layers = 2;
    const embedding = 48;
    const bytes = buildTinyGguf({ layers, embeddingLength: embedding });
    const layout = readGgufLayout(bytes);
    const perLayer = ['attn_norm', 'attn_q', 'attn_k', 'attn_v', 'attn_output', 'ffn_norm', 'ffn_gate', 'ffn_up', 'ffn_down'];
    const expectedNames = ['token_embd.weight', 'output_norm.weight', 'output.weight', ...Array.from({ length: layers }, (_, layer) => perLayer.map((name) => `blk.${layer}.${name}.weight`)).flat()];
    expect(layout.tensors.map((tensor) => tensor.name)).toEqual(expectedNames);
    expect(layout.tensors[0].dimensions).toEqual([embedding, tinyVocabulary().length]);
    expect(layout.tensors.find((tensor) => tensor.name === 'blk.1.ffn_down.weight')?.dimensions).toEqual([embedding * 2, embedding]);
    let expectedOffset = 0;
    for (const tensor of layout.tensors) {
      expect(tensor.offset % 32).toBe(0);
      expect(tensor.offset).toBe(expectedOffset);
      const size = tensor.dimensions.reduce((product, dimension) => product * dimension, 4);
      expectedOffset += Math.ceil(size / 32) * 32;
    }
    expect(bytes.length).toBe(layout.dataStart + expectedOffset);
  });

  it('is deterministic for a seed and changes with it', () => {
    const first = buildTinyGguf({ bias: 'true', seed: 7 });
    expect(buildTinyGguf({ bias: 'true', seed: 7 }).equals(first)).toBe(true);
    expect(buildTinyGguf({ bias: 'true', seed: 8 }).equals(first)).toBe(false);
    expect(buildTinyGguf({ bias: 'false', seed: 7 }).equals(first)).toBe(false);
  });

  it('has a byte-level vocabulary without duplicates (llama.cpp aborts on those)', () => {
    const vocabulary = tinyVocabulary();
    expect(vocabulary).toHaveLength(259);
    expect(new Set(vocabulary).size).toBe(vocabulary.length);
    const byteTable = gpt2ByteToUnicode();
    expect(byteTable['t'.charCodeAt(0)]).toBe('t');
    expect(byteTable[' '.charCodeAt(0)]).toBe('Ġ');
    expect(byteTable['\n'.charCodeAt(0)]).toBe('Ċ');
    expect(vocabulary.slice(256)).toEqual(['<|endoftext|>', '<|im_start|>', '<|im_end|>']);
  });

  it('refuses shapes llama.cpp would reject', () => {
    expect(() => buildTinyGguf({ embeddingLength: 30 })).toThrow(RubricateError);
    expect(() => buildTinyGguf({ layers: 0 })).toThrow(/layers/);
    expect(() => buildTinyGguf({ contextLength: 10 })).toThrow(/contextLength/);
  });
});

describe('tiny GGUF in the real node-llama-cpp', () => {
  let directory: string;

  test.beforeAll(({ fileTempDir }) => {
    directory = fileTempDir;
  });

  it('loads, tokenizes byte by byte and resolves the ChatML wrapper', async () => {
    const filePath = await writeTinyGguf({ path: path.join(directory, 'nested', 'tiny.gguf'), bias: 'true', embeddingLength: 64, layers: 2 });
    const { size } = await stat(filePath);
    expect(size).toBeGreaterThan(100_000);
    expect(size).toBeLessThan(500_000);

    const { getSharedLlama } = await import('../judges/llamacpp/runtime.js');
    const { resolveChatWrapper } = await import('node-llama-cpp');
    const llama = await getSharedLlama();
    const model = await llama.loadModel({ modelPath: filePath });
    try {
      expect(model.trainContextSize).toBe(4096);
      const tokens = model.tokenize('true');
      expect(tokens).toEqual([...'true'].map((character) => character.charCodeAt(0)));
      expect(model.detokenize(model.tokenize('{"ok": true} ü'))).toBe('{"ok": true} ü');
      expect(model.tokens.eos).toBe(258);
      expect(model.isEogToken(model.tokens.eos ?? undefined)).toBe(true);
      expect(resolveChatWrapper(model).wrapperName).toBe('ChatML');
    } finally {
      await model.dispose();
    }
  });
});
