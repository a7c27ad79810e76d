/**
 * Reading "does not fit" errors of every server we know: which budget was at fault (the
 * prompt, or the output tokens asked for) and the limits the message names, so a run can
 * learn them. Texts as the servers write them:
 *
 *   OpenAI / vLLM (old)  This model's maximum context length is 8192 tokens. However, you requested 9000 tokens (1000 in the messages, 8000 in the completion).
 *   OpenAI               This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.
 *   OpenAI               max_tokens is too large: 30720. This model supports at most 16384 completion tokens, whereas you provided 30720.
 *   vLLM                 You passed 1200 input tokens and requested 30720 output tokens. However, the model's context length is only 8192 tokens, …
 *   vLLM                 max_tokens=30720 cannot be greater than max_model_len=8192. …
 *   llama.cpp server     request (9000 tokens) exceeds the available context size (8192 tokens), try increasing it
 *                        the request exceeds the available context size, try increasing it   (older builds)
 *   Anthropic            prompt is too long: 210000 tokens > 200000 maximum
 *   Anthropic            input length and `max_tokens` exceed context limit: 188240 + 21333 > 200000, decrease input length or `max_tokens` and try again
 *   Anthropic            max_tokens: 64001 > 64000, which is the maximum allowed number of output tokens for claude-…
 *   Gemini               The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).
 */

export interface BudgetOverflow {
  /** `prompt`: the input alone does not fit; `output`: the output budget asked for does not. */
  cause: 'prompt' | 'output';
  promptTokens?: number;
  requestedOutputTokens?: number;
  contextWindow?: number;
  maxOutputTokens?: number;
}

const number = (text: string | undefined): number | undefined => (text === undefined ? undefined : Number(text.replace(/,/g, '')));

/** Recognises a budget overflow in an error message (and optional structured fields); undefined when it is not one. */
export function readBudgetOverflow(message: string, fields: Record<string, unknown> = {}): BudgetOverflow | undefined {
  let match = /supports at most ([\d,]+) completion tokens/i.exec(message);
  if (match) return { cause: 'output', maxOutputTokens: number(match[1]), requestedOutputTokens: number(/too large: ([\d,]+)/i.exec(message)?.[1]) };
  match = /max_tokens: ([\d,]+) > ([\d,]+), which is the maximum allowed number of output tokens/i.exec(message);
  if (match) return { cause: 'output', requestedOutputTokens: number(match[1]), maxOutputTokens: number(match[2]) };
  match = /You passed ([\d,]+) input tokens and requested ([\d,]+) output tokens\. However, the model's context length is only ([\d,]+)/i.exec(message);
  if (match) {
    const [promptTokens, requestedOutputTokens, contextWindow] = [number(match[1])!, number(match[2]), number(match[3])!];
    return { cause: promptTokens >= contextWindow ? 'prompt' : 'output', promptTokens, requestedOutputTokens, contextWindow };
  }
  match = /max_(?:completion_)?tokens=([\d,]+) cannot be greater than max_model_len=([\d,]+)/i.exec(message);
  if (match) return { cause: 'output', requestedOutputTokens: number(match[1]), contextWindow: number(match[2]) };
  match = /maximum context length is ([\d,]+) tokens?\. However, you requested ([\d,]+) tokens \(([\d,]+) in the messages, ([\d,]+) in the completion\)/i.exec(message);
  if (match) {
    const [contextWindow, promptTokens, requestedOutputTokens] = [number(match[1])!, number(match[3])!, number(match[4])];
    return { cause: promptTokens >= contextWindow ? 'prompt' : 'output', promptTokens, requestedOutputTokens, contextWindow };
  }
  match = /maximum context length is ([\d,]+) tokens?\. However, you requested ([\d,]+) output tokens and your prompt contains at least ([\d,]+) input tokens/i.exec(message);
  if (match) {
    const [contextWindow, requestedOutputTokens, promptTokens] = [number(match[1])!, number(match[2]), number(match[3])!];
    return { cause: promptTokens >= contextWindow ? 'prompt' : 'output', promptTokens, requestedOutputTokens, contextWindow };
  }
  match = /input length and `?max_tokens`? exceed context limit: ([\d,]+) \+ ([\d,]+) > ([\d,]+)/i.exec(message);
  if (match) {
    const [promptTokens, requestedOutputTokens, contextWindow] = [number(match[1])!, number(match[2]), number(match[3])!];
    return { cause: promptTokens >= contextWindow ? 'prompt' : 'output', promptTokens, requestedOutputTokens, contextWindow };
  }
  match = /prompt is too long: ([\d,]+) tokens > ([\d,]+)/i.exec(message);
  if (match) return { cause: 'prompt', promptTokens: number(match[1]), contextWindow: number(match[2]) };
  match = /input token count \(([\d,]+)\) exceeds the maximum number of tokens allowed \(([\d,]+)\)/i.exec(message);
  if (match) return { cause: 'prompt', promptTokens: number(match[1]), contextWindow: number(match[2]) };
  if (/exceeds the available context size|exceed_context_size_error/i.test(message) || fields.type === 'exceed_context_size_error') {
    // llama.cpp rejects only prompts that do not fit (a long output stops at the context end instead).
    match = /request \(([\d,]+) tokens?\) exceeds the available context size \(([\d,]+) tokens?\)/i.exec(message);
    return {
      cause: 'prompt',
      promptTokens: number(match?.[1]) ?? (typeof fields.n_prompt_tokens === 'number' ? fields.n_prompt_tokens : undefined),
      contextWindow: number(match?.[2]) ?? (typeof fields.n_ctx === 'number' ? fields.n_ctx : undefined),
    };
  }
  match = /maximum context length is ([\d,]+) tokens?/i.exec(message);
  if (match) return { cause: 'prompt', contextWindow: number(match[1]) };
  if (/context[_ ]length[_ ]exceeded|context window|too many tokens|prompt is too long|input is too long/i.test(message) || fields.code === 'context_length_exceeded') {
    return { cause: 'prompt' };
  }
  return undefined;
}

/** A one-line explanation of an overflow that names the budget at fault. */
export function describeBudgetOverflow(overflow: BudgetOverflow): string {
  if (overflow.cause === 'output') {
    if (overflow.maxOutputTokens !== undefined) {
      return `the output budget${overflow.requestedOutputTokens !== undefined ? ` of ${overflow.requestedOutputTokens} tokens` : ''} is above the model's output limit of ${overflow.maxOutputTokens}`;
    }
    return `the prompt${overflow.promptTokens !== undefined ? ` (${overflow.promptTokens} tokens)` : ''} plus the output budget${overflow.requestedOutputTokens !== undefined ? ` (${overflow.requestedOutputTokens})` : ''} exceed the judge's context${overflow.contextWindow !== undefined ? ` of ${overflow.contextWindow} tokens` : ''}`;
  }
  return `prompt too long for the judge${overflow.promptTokens !== undefined ? ` (${overflow.promptTokens} tokens` : ''}${overflow.promptTokens !== undefined && overflow.contextWindow !== undefined ? ` > ${overflow.contextWindow})` : overflow.promptTokens !== undefined ? ')' : ''}`;
}
