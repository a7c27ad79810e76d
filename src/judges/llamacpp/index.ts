/** Embedded local judge: GGUF models run in-process by llama.cpp through node-llama-cpp (optional dependency). */
export { createLlamaCppJudge } from './llamacpp-judge.js';
export { defaultModelCacheDirectory, resolveDefaultLocalModel } from './model-file.js';
