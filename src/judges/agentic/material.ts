/**
 * What an agentic judge's tools work on, read from the grading prompt the judge was handed: the
 * response (or the labelled responses of a pairwise or listwise prompt) and the conversation,
 * each in its nonce-delimited block (`grading/render.ts`). The reference block is the item's
 * ground truth: it is cut out of every message before the judge sees any, so neither the prompt
 * nor a tool can show it.
 */
import type { ChatMessage } from '../types.js';

/** A block of the grading prompt: `<tag-NONCE>\n…\n</tag-NONCE>`, the nonce 16 hex digits. */
const blockPattern = (tag: string) => new RegExp(`<(${tag})-([0-9a-f]{16})>\\n([\\s\\S]*?)\\n</\\1-\\2>`, 'g');
const referencePattern = /\n*<reference-([0-9a-f]{16})>\n[\s\S]*?\n<\/reference-\1>/g;

export interface PromptMaterial {
  /** The responses shown, by label: `response` for a single one, `1`/`2` or `A`, `B`, … for several. */
  responses: Map<string, string>;
  /** The conversation that led to the response, as the prompt renders it. */
  conversation: string;
}

/** The messages without the item's reference block (the ground truth never reaches an agentic judge). */
export function withoutReference(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((message) => (message.content.includes('<reference-') ? { ...message, content: message.content.replace(referencePattern, '') } : message));
}

/** The responses and conversation of a grading prompt (reference already cut out). */
export function promptMaterial(messages: readonly ChatMessage[]): PromptMaterial {
  const responses = new Map<string, string>();
  let conversation = '';
  for (const message of messages) {
    if (message.role !== 'user') continue;
    for (const match of message.content.matchAll(blockPattern('response(?:-[A-Z]+|-\\d)?'))) {
      const label = match[1] === 'response' ? 'response' : match[1].slice('response-'.length);
      if (!responses.has(label)) responses.set(label, match[3]);
    }
    conversation ||= blockPattern('conversation').exec(message.content)?.[3] ?? '';
  }
  return { responses, conversation };
}

/** The last user turn of the rendered conversation (`user: …`), what prompt-aware checks compare with. */
export function lastUserTurn(conversation: string): string {
  const start = conversation.lastIndexOf('user: ');
  if (start < 0) return conversation;
  const rest = conversation.slice(start + 'user: '.length);
  const next = rest.search(/\n\n(assistant|system|tool): /);
  return next < 0 ? rest : rest.slice(0, next);
}
