/**
 * Lazy access to node-llama-cpp. It is an optional dependency: API-only users never load it,
 * and when it is missing the local judge says how to install it instead of crashing on import.
 */
import { RubricateError } from '../../errors.js';

export type NodeLlamaCpp = typeof import('node-llama-cpp');
export type Llama = import('node-llama-cpp').Llama;

// A computed specifier keeps bundlers (tsup/esbuild) from inlining the native package.
const moduleName = 'node-llama-cpp';

let modulePromise: Promise<NodeLlamaCpp> | undefined;
let llamaPromise: Promise<Llama> | undefined;

export const installHint =
  'the local GGUF judge needs the optional package node-llama-cpp: install it with `npm install node-llama-cpp@3.21.1` ' +
  '(or use an HTTP judge such as `--judge openai:MODEL` with OPENAI_BASE_URL/OPENAI_API_KEY, ' +
  'or try the pipeline offline on made-up verdicts with `--judge scripted` or `rubricate fake-judge`)';

/** Imports an optional package; a missing or broken one becomes JUDGE_UNAVAILABLE with the install hint. */
export async function importOptionalPackage<T>(name: string): Promise<T> {
  try {
    return (await import(name)) as T;
  } catch (error) {
    throw new RubricateError('JUDGE_UNAVAILABLE', `${installHint} (${error instanceof Error ? error.message : String(error)})`, { package: name }, { cause: error });
  }
}

export function loadNodeLlamaCpp(): Promise<NodeLlamaCpp> {
  modulePromise ??= importOptionalPackage<NodeLlamaCpp>(moduleName).catch((error: unknown) => {
    // Let a later call try again (e.g. after the package was installed).
    modulePromise = undefined;
    throw error;
  });
  return modulePromise;
}

/**
 * One llama.cpp binding per process. Creating it tests the prebuilt binary in a child process
 * (over a second on Linux), so every judge shares it. Never builds from source: that would need
 * a toolchain and network at grading time.
 */
export function getSharedLlama(): Promise<Llama> {
  llamaPromise ??= (async () => {
    const nodeLlamaCpp = await loadNodeLlamaCpp();
    try {
      return await nodeLlamaCpp.getLlama({
        build: 'never',
        progressLogs: false,
        logLevel: nodeLlamaCpp.LlamaLogLevel.error,
      });
    } catch (error) {
      throw new RubricateError(
        'JUDGE_UNAVAILABLE',
        `node-llama-cpp found no working llama.cpp binary for this machine: ${error instanceof Error ? error.message : String(error)}; use an HTTP judge (\`--judge openai:MODEL\`), or try the pipeline offline with \`--judge scripted\``,
        {},
        { cause: error },
      );
    }
  })().catch((error: unknown) => {
    llamaPromise = undefined;
    throw error;
  });
  return llamaPromise;
}
