import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RubricateError } from '../../errors.js';
import { writeTinyGguf } from '../../testing/tiny-gguf.js';
import { defaultLocalModelUri, defaultModelCacheDirectory, isModelUri, resolveDefaultLocalModel, resolveModelReference } from './model-file.js';
import { test } from '../../testing/vitest-fixtures.js';
import { hangGuard } from '../../testing/hang-guard.js';

function isUnavailable(pattern: RegExp) {
  return (error: unknown) => RubricateError.isInstance(error) && error.code === 'JUDGE_UNAVAILABLE' && pattern.test(error.message);
}

describe('local model resolution', () => {
  let directory: string;

  test.beforeAll(({ fileTempDir }) => {
    directory = fileTempDir;
  });

  it('uses RUBRICATE_MODEL when it names a file', async () => {
    const modelPath = await writeTinyGguf({ path: path.join(directory, 'configured.gguf') });
    const resolved = await resolveDefaultLocalModel({ environment: { RUBRICATE_MODEL: modelPath }, cacheDirectory: path.join(directory, 'unused'), download: false });
    expect(resolved).toBe(modelPath);
  });

  it('says which setting points nowhere', async () => {
    const missing = path.join(directory, 'missing.gguf');
    await expect(resolveDefaultLocalModel({ environment: { RUBRICATE_MODEL: missing }, cacheDirectory: directory, download: true })).rejects.toSatisfy(
      isUnavailable(/RUBRICATE_MODEL: no GGUF model file at/),
    );
  });

  it('finds the default model already in the cache without going online', async () => {
    const cacheDirectory = path.join(directory, 'cache');
    // The file name node-llama-cpp gives the default URI once downloaded.
    const cached = await writeTinyGguf({ path: path.join(cacheDirectory, 'hf_unsloth_Qwen3-4B-Instruct-2507.Q4_K_M.gguf') });
    await expect(resolveDefaultLocalModel({ environment: {}, cacheDirectory, download: false })).resolves.toBe(cached);
  });

  test('fails at once when downloading is off and nothing is cached', async ({ tempDir }) => {
    const cacheDirectory = tempDir;
    await expect(resolveDefaultLocalModel({ environment: {}, cacheDirectory, download: false })).rejects.toSatisfy(
      isUnavailable(/downloading is off.*--judge gguf:.*RUBRICATE_MODEL.*--judge openai:MODEL.*OPENAI_BASE_URL/),
    );
  });

  // This machine has no route to model hubs, so the real download attempt fails; the bounded
  // lookup (5 s) and the test timeout make sure it fails quickly rather than hanging.
  test('fails fast offline with a message naming the alternatives', { timeout: hangGuard(15_000) }, async ({ tempDir }) => {
    const cacheDirectory = tempDir;
    let progressCalls = 0;
    await expect(
      resolveDefaultLocalModel({ environment: {}, cacheDirectory, download: true, onProgress: () => (progressCalls += 1) }),
    ).rejects.toSatisfy(isUnavailable(new RegExp(`${defaultLocalModelUri}.*could not be downloaded.*--judge gguf:/path/model.gguf.*RUBRICATE_MODEL.*--judge openai:MODEL.*OPENAI_API_KEY`)));
    expect(progressCalls).toBe(0);
  });

  test('gives up on a lookup that does not answer in time', async ({ tempDir }) => {
    const cacheDirectory = tempDir;
    // A 1 ms budget is shorter than any real lookup, online or not.
    await expect(resolveModelReference('hf:someone/some-model-GGUF:Q4_K_M', { cacheDirectory, download: true, lookupTimeoutMs: 1 })).rejects.toSatisfy(
      isUnavailable(/could not be downloaded/),
    );
  });

  it('tells URIs from paths and picks a cache folder from the environment', () => {
    expect(isModelUri('hf:user/repo:Q4_K_M')).toBe(true);
    expect(isModelUri('https://example.com/model.gguf')).toBe(true);
    expect(isModelUri('./models/q.gguf')).toBe(false);
    expect(defaultModelCacheDirectory({ RUBRICATE_CACHE_DIR: '/var/cache/r' })).toBe(path.resolve('/var/cache/r/models'));
    expect(defaultModelCacheDirectory({ XDG_CACHE_HOME: '/x' })).toBe(path.resolve('/x/rubricate/models'));
    expect(defaultModelCacheDirectory({})).toBe(path.join(os.homedir(), '.cache', 'rubricate', 'models'));
  });
});
