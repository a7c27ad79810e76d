/** The embedded default local model, named apart from the code that loads it: messages quote it without loading node-llama-cpp. */

/** Qwen3-4B-Instruct-2507, Apache-2.0, at Q4_K_M. */
export const defaultLocalModelUri = 'hf:unsloth/Qwen3-4B-Instruct-2507-GGUF:Q4_K_M';

/** Its download size, as a person reads it before choosing it. */
export const defaultLocalModelSize = 'about 2.5 GB';
