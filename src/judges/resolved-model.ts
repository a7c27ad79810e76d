/**
 * The model a provider says answered: the reply's `model` (OpenAI-compatible servers, Anthropic)
 * or `modelVersion` (Gemini). An alias such as `gpt-4o-mini` resolves to a dated snapshot here,
 * so a silent rotation behind an alias shows in every verdict (`judge_model`) and in the canary.
 */

/** Longer than any model id a provider sends: a longer value is not kept (it is not an id). */
const maxModelIdLength = 200;

/** The reply's model id when it is a plausible one (a non-empty single-line string within the bound), else undefined. */
export function resolvedModelOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const model = value.trim();
  return model !== '' && model.length <= maxModelIdLength && !/[\r\n]/.test(model) ? model : undefined;
}
