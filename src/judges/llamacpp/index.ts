/** Embedded local judge: GGUF models run in-process by llama.cpp through node-llama-cpp (optional dependency). */
export { createLlamaCppJudge, type LlamaCppJudge, type LlamaCppJudgeOptions } from './llamacpp-judge.js';
export {
  defaultLocalModelUri,
  defaultModelCacheDirectory,
  isModelUri,
  resolveDefaultLocalModel,
  resolveModelReference,
  type DownloadProgress,
  type ResolveDefaultLocalModelOptions,
  type ResolveModelReferenceOptions,
} from './model-file.js';
export { toGrammarJsonSchema } from './grammar-schema.js';
