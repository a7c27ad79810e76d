import { describe, expect, it } from 'vitest';
import { RubricateError } from '../../errors.js';
import { importOptionalPackage, installHint, loadNodeLlamaCpp } from './runtime.js';

describe('optional node-llama-cpp runtime', () => {
  it('turns a missing package into JUDGE_UNAVAILABLE that says how to install it', async () => {
    const attempt = importOptionalPackage('rubricate-package-that-does-not-exist');
    await expect(attempt).rejects.toSatisfy(
      (error) =>
        RubricateError.isInstance(error) &&
        error.code === 'JUDGE_UNAVAILABLE' &&
        error.message.includes('npm install node-llama-cpp@3.21.1') &&
        error.details.package === 'rubricate-package-that-does-not-exist',
    );
    expect(installHint).toMatch(/--judge openai:MODEL/);
  });

  it('loads the installed package once', async () => {
    const first = await loadNodeLlamaCpp();
    expect(typeof first.getLlama).toBe('function');
    expect(await loadNodeLlamaCpp()).toBe(first);
  });
});
