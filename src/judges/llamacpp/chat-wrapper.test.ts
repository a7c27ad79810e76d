import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect } from 'vitest';
import { writeTinyGguf } from '../../testing/tiny-gguf.js';
import { test } from '../../testing/vitest-fixtures.js';
import { chatWrapperFor } from './chat-wrapper.js';
import { getSharedLlama, loadNodeLlamaCpp } from './runtime.js';
import { hangGuard } from '../../testing/hang-guard.js';

describe('the chat wrapper of a model (real node-llama-cpp, tiny generated models)', () => {
  test('is resolved once per process for the same template, vocabulary and name, and apart for another name', async ({ tempDir }) => {
    const llama = await getSharedLlama();
    const nodeLlamaCpp = await loadNodeLlamaCpp();
    const load = async (folder: string, name: string) => {
      mkdirSync(path.join(tempDir, folder), { recursive: true });
      return llama.loadModel({ modelPath: await writeTinyGguf({ path: path.join(tempDir, folder, name), bias: 'true' }) });
    };
    const models = [await load('a', 'tiny.gguf'), await load('b', 'tiny.gguf'), await load('c', 'other.gguf')];
    try {
      const [first, sameFileElsewhere, otherName] = models.map((model) => chatWrapperFor(nodeLlamaCpp, model));
      expect(first.wrapperName).toBe('ChatML');
      expect(sameFileElsewhere).toBe(first);
      // The file name is one of resolution's inputs, so another name is resolved on its own, to the same kind.
      expect(otherName).not.toBe(first);
      expect(otherName.wrapperName).toBe('ChatML');
      // What is shared renders the tiny model's ChatML template.
      const history = [{ type: 'user' as const, text: 'Hi' }, { type: 'model' as const, response: [] }];
      expect(sameFileElsewhere.generateContextState({ chatHistory: history }).contextText.toString()).toMatch(/<\|im_start\|>user\nHi<\|im_end\|>\n<\|im_start\|>assistant\n$/);
    } finally {
      for (const model of models) await model.dispose();
    }
  }, hangGuard(120_000));
});
