/**
 * Trainers send text that went through a chat template. These helpers recover what the
 * judge should see: the response alone, and the prompt as messages.
 *
 * Response of a templated query (OpenRLHF `query` = templated prompt + response):
 *   1. if the query starts with the templated prompt, the response is the rest;
 *   2. else it is the text after the last assistant-turn marker of a known template
 *      (ChatML, Llama 3, Gemma, Phi/Zephyr, DeepSeek, Mistral `[/INST]`, plain `Assistant:`);
 *   3. else the whole query.
 * End-of-turn and padding tokens left at the end (`<|im_end|>`, `<|eot_id|>`, `</s>`, `<pad>`, …) are removed.
 *
 * Prompt messages from a templated prompt: ChatML, Llama 3 and Gemma turns are parsed into
 * messages; any other text is one user message.
 */
import type { Message } from '../../rubric/schema.js';

const assistantMarkers = [
  '<|im_start|>assistant\n',
  '<|start_header_id|>assistant<|end_header_id|>\n\n',
  '<|start_header_id|>assistant<|end_header_id|>',
  '<start_of_turn>model\n',
  '<|assistant|>\n',
  '<|assistant|>',
  '<｜Assistant｜>',
  '[/INST]',
  '\nAssistant:',
];

/**
 * End-of-turn and padding tokens a decoder leaves at the end of a response when it keeps special
 * tokens. The Python client strips the same list (`clients/python/rubricate_client/text.py`,
 * `END_OF_TURN_TOKENS`; a test compares them): change both together.
 */
const endOfTurnTokens = ['<|im_end|>', '<|eot_id|>', '<|end_of_text|>', '<|endoftext|>', '<end_of_turn>', '<eos>', '<|end|>', '</s>', '<｜end▁of▁sentence｜>', '<pad>', '<|pad|>', '<|finetune_right_pad_id|>'];

export function stripEndOfTurn(text: string): string {
  let result = text.trimEnd();
  for (let changed = true; changed; ) {
    changed = false;
    for (const token of endOfTurnTokens) {
      if (result.endsWith(token)) {
        result = result.slice(0, -token.length).trimEnd();
        changed = true;
      }
    }
  }
  return result;
}

export interface SplitQuery {
  /** The templated prompt part of the query. */
  promptText: string;
  response: string;
  /** Which rule found the response. */
  rule: 'prompt-prefix' | 'assistant-marker' | 'whole-query';
}

export function splitQuery(query: string, prompt?: string): SplitQuery {
  if (prompt !== undefined && prompt !== '' && query.startsWith(prompt)) {
    return { promptText: prompt, response: stripEndOfTurn(query.slice(prompt.length)).trimStart(), rule: 'prompt-prefix' };
  }
  let best = -1;
  let bestMarker = '';
  for (const marker of assistantMarkers) {
    const index = query.lastIndexOf(marker);
    // The latest marker wins; at the same position the longer (more specific) one.
    if (index > best || (index === best && index >= 0 && marker.length > bestMarker.length)) {
      best = index;
      bestMarker = marker;
    }
  }
  if (best >= 0) {
    return { promptText: query.slice(0, best + bestMarker.length), response: stripEndOfTurn(query.slice(best + bestMarker.length)).trimStart(), rule: 'assistant-marker' };
  }
  return { promptText: prompt ?? '', response: stripEndOfTurn(query), rule: 'whole-query' };
}

const templatePatterns: Array<{ pattern: RegExp; role: (raw: string) => string }> = [
  { pattern: /<\|im_start\|>(\w+)\n([\s\S]*?)(?:<\|im_end\|>|$)/g, role: (raw) => raw },
  { pattern: /<\|start_header_id\|>(\w+)<\|end_header_id\|>\n*([\s\S]*?)(?:<\|eot_id\|>|$)/g, role: (raw) => raw },
  { pattern: /<start_of_turn>(\w+)\n([\s\S]*?)(?:<end_of_turn>|$)/g, role: (raw) => (raw === 'model' ? 'assistant' : raw) },
];

/** Messages from a templated prompt (see the module comment); plain text is one user message. */
export function promptMessages(promptText: string): Message[] {
  for (const { pattern, role } of templatePatterns) {
    const messages: Message[] = [];
    for (const match of promptText.matchAll(pattern)) {
      const content = match[2].trim();
      // The trailing empty assistant turn is the generation prompt, not a message.
      if (content !== '') messages.push({ role: role(match[1]), content });
    }
    if (messages.length > 0) return messages;
  }
  const text = promptText.trim();
  return [{ role: 'user', content: text }];
}
