/**
 * Rendering items into prompt text. The conversation, response and reference sit inside
 * tags carrying a nonce derived from their own content: a response cannot contain the
 * closing tag of its own block (it would have to contain a hash of itself), and the same
 * item always renders to the same bytes, so prefix caches and our cache keys stay stable.
 */
import type { Criterion, Item } from '../rubric/schema.js';
import { sha256Hex } from '../util/hash.js';
import { unclashedNonce } from '../util/nonce.js';

const digestMemo = new WeakMap<object, string>();

/**
 * sha256 of everything an item's grading prompts show of it (conversation, response,
 * reference). It identifies the rendered context in cache keys, so a task served from the
 * cache never renders its prompt, and its first 16 characters are the delimiter nonce.
 */
export function itemDigest(item: Pick<Item, 'prompt' | 'response' | 'reference'>): string {
  let digest = digestMemo.get(item);
  if (digest !== undefined) return digest;
  // One string, one-shot hash: the same bytes as updating a Hash part by part, at less CPU.
  let text = 'rubricate-delimiter\u0000';
  for (const message of item.prompt) text += `${message.role}\u0000${message.content}\u0000`;
  digest = sha256Hex(`${text}\u0001${item.response}\u0001${item.reference ?? ''}`);
  digestMemo.set(item, digest);
  return digest;
}

export function deriveNonce(item: Pick<Item, 'prompt' | 'response' | 'reference'>): string {
  return unclashedNonce(itemDigest(item).slice(0, 16), (nonce) => containsTag(item, nonce));
}

function containsTag(item: Pick<Item, 'prompt' | 'response' | 'reference'>, nonce: string): boolean {
  const marker = `-${nonce}>`;
  return item.response.includes(marker) || (item.reference?.includes(marker) ?? false) || item.prompt.some((message) => message.content.includes(marker));
}

export function renderConversation(item: Pick<Item, 'prompt'>): string {
  return item.prompt.map((message) => `${message.role}: ${message.content}`).join('\n\n');
}

const prefixMemo = new WeakMap<Item, string>();

/**
 * The part of a grading prompt shared by every criterion of one item: conversation,
 * optional reference, response. It comes first so servers can reuse it from their
 * prefix cache across the item's criteria.
 */
export function renderItemContext(item: Item): string {
  let rendered = prefixMemo.get(item);
  if (rendered !== undefined) return rendered;
  const nonce = deriveNonce(item);
  const parts = [`<conversation-${nonce}>\n${renderConversation(item)}\n</conversation-${nonce}>`];
  if (item.reference !== undefined && item.reference !== '') {
    parts.push(`<reference-${nonce}>\n${item.reference}\n</reference-${nonce}>`);
  }
  parts.push(`<response-${nonce}>\n${item.response}\n</response-${nonce}>`);
  rendered = parts.join('\n\n');
  prefixMemo.set(item, rendered);
  return rendered;
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function formatPoints(points: number): string {
  return Number.isInteger(points) ? String(points) : String(Number(points.toPrecision(12)));
}

/**
 * A nonce for a block of text that the text cannot contain: derived from the text itself, and
 * re-derived in the (astronomically unlikely) case that the text holds `-NONCE>` anyway.
 */
export function fenceNonce(domain: string, text: string): string {
  return unclashedNonce(sha256Hex(`rubricate-${domain}\u0000${text}`).slice(0, 16), (nonce) => text.includes(`-${nonce}>`));
}

const criterionMemo = new WeakMap<Criterion, string>();

/**
 * One criterion block; ordinal criteria list their choices worst → best. Criterion text is data
 * too (evolving rubrics write criteria from the policy's own rollouts): it sits in a
 * `<criterion-NONCE>` block whose nonce derives from the block's own content, so no criterion
 * can close its block early and speak as the instructions.
 */
export function renderCriterion(criterion: Criterion): string {
  const memo = criterionMemo.get(criterion);
  if (memo !== undefined) return memo;
  let body = criterion.text;
  if (criterion.scale?.type === 'ordinal') {
    const choices = criterion.scale.choices
      .map((choice) => `- "${choice.label}"${choice.description ? `: ${choice.description}` : ''}`)
      .join('\n');
    body += `\nChoices, worst to best:\n${choices}`;
  }
  const attributes = `id="${escapeAttribute(criterion.id)}" points="${escapeAttribute(formatPoints(criterion.points))}"`;
  const nonce = fenceNonce('criterion', `${attributes}\u0000${body}`);
  const rendered = `<criterion-${nonce} ${attributes}>\n${body}\n</criterion-${nonce}>`;
  criterionMemo.set(criterion, rendered);
  return rendered;
}

/** A bare criterion text (pairwise, generation prompts) fenced the same way. */
export function fenceText(tag: string, text: string): string {
  const nonce = fenceNonce(tag, text);
  return `<${tag}-${nonce}>\n${text}\n</${tag}-${nonce}>`;
}
