/**
 * Which models are the same, or of one family, for the self-preference guard: a judge tends to
 * prefer its own answers (GPT-4 picked its own 87.2% of the time in FastChat's published
 * judgments) and those of its siblings. Names are compared without their provider prefix
 * (`openai:`, `openai/`, `models/`), directory (GGUF paths), file extension, quantisation suffix
 * and release date; a family is the vendor's line of models (every GPT and o-series model is
 * OpenAI's, every Claude Anthropic's), else the name's first word.
 */

const families: ReadonlyArray<[RegExp, string]> = [
  [/^(gpt|chatgpt|o\d|davinci|text-davinci|codex)(\b|-|$)/, 'openai'],
  [/^claude/, 'anthropic'],
  [/^(gemini|gemma|palm|bard)/, 'google'],
  [/^(llama|meta-llama|codellama)/, 'meta-llama'],
  [/^(qwen|qwq)/, 'qwen'],
  [/^(mistral|mixtral|ministral|codestral|magistral|pixtral|devstral)/, 'mistral'],
  [/^deepseek/, 'deepseek'],
  [/^grok/, 'xai'],
  [/^phi-?\d/, 'microsoft-phi'],
  [/^(command|c4ai|aya)/, 'cohere'],
];

/** A model name as compared: lower case, without provider, path, extension, quantisation or date. */
export function canonicalModelName(model: string): string {
  let name = model.trim().toLowerCase();
  name = name.replace(/^[a-z]+:(?!\/\/)/, '').replace(/^models\//, '');
  name = name.slice(name.lastIndexOf('/') + 1);
  name = name.replace(/\.gguf$/, '').replace(/[-._](q\d[\w]*|f16|bf16|fp16|int[48]|awq|gptq)$/, '');
  return name.replace(/-(\d{4}-\d{2}-\d{2}|\d{8}|\d{4}|latest|preview)$/, '');
}

/** The family a model belongs to (its vendor's line), from its canonical name. */
export function modelFamily(model: string): string {
  const name = canonicalModelName(model);
  for (const [pattern, family] of families) if (pattern.test(name)) return family;
  return name.split(/[-_.\s]/)[0] ?? name;
}

export type ModelRelation = 'same-model' | 'same-family' | 'unrelated';

/** How a judge model relates to the model whose answers it grades. */
export function modelRelation(judgeModel: string, modelUnderTest: string): ModelRelation {
  if (canonicalModelName(judgeModel) === canonicalModelName(modelUnderTest)) return 'same-model';
  return modelFamily(judgeModel) === modelFamily(modelUnderTest) ? 'same-family' : 'unrelated';
}
