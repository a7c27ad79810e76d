/**
 * `--judge-template FILE`: the grading prompt of one criterion, written by the user. The file is
 * the user message; a line `--- system ---` starts a system message and a line `--- user ---`
 * the user message, when both are wanted. Variables, written `{{name}}`:
 *
 * - `{{response}}` (required): the graded response, in `<response-ID>` tags whose marker it cannot contain;
 * - `{{criterion}}` (required): the criterion in `<criterion-CID>` tags, with its choices (worst to best) when it has a scale;
 * - `{{conversation}}`: the conversation before the response, in `<conversation-ID>` tags;
 * - `{{reference}}`: the reference answer in `<reference-ID>` tags, or nothing when the item has none;
 * - `{{verdict_format}}`: the JSON reply the verdict is read from (`criteria_met`, or `choice` for a scale).
 *
 * A template without a required variable, or naming an unknown one, is CONFIG_INVALID when it is
 * read (before any call). The reply is read as rubricate's own (`criteria_met` or `choice`, with
 * P(met) or an expected score when asked), and the same reply schema is sent to endpoints that
 * take one. The template's sha256 is in every cache key (`template:` + 12 hex characters as the
 * template version) and in the results' judge provenance (`template_sha256`).
 */
import { RubricateError } from '../errors.js';
import type { ChatMessage, JudgeRequest } from '../judges/types.js';
import type { Criterion, Item } from '../rubric/schema.js';
import { sha256Hex } from '../util/hash.js';
import { deriveNonce, itemDigest, renderConversation, renderCriterion } from './render.js';
import type { GradingStrategy, JudgeTask } from './types.js';
import { requestSampling } from './sampling.js';

export const templateVariables = ['response', 'criterion', 'conversation', 'reference', 'verdict_format'] as const;
type TemplateVariable = (typeof templateVariables)[number];
const requiredVariables: readonly TemplateVariable[] = ['response', 'criterion'];

const systemMarker = /^--- system ---[ \t]*$/m;
const userMarker = /^--- user ---[ \t]*$/m;
const variablePattern = /\{\{\s*([^{}]*?)\s*\}\}/g;

export interface JudgeTemplate {
  /** `template:` and the first 12 hex characters of the text's sha256: the template version of cache keys and results. */
  version: string;
  sha256: string;
  system?: string;
  user: string;
}

function invalid(message: string): RubricateError {
  return new RubricateError('CONFIG_INVALID', `--judge-template: ${message}`, { field: 'judge-template' });
}

/** Reads a template's text into its parts, checking its variables; a bad template is CONFIG_INVALID. */
export function parseJudgeTemplate(text: string): JudgeTemplate {
  const sha256 = sha256Hex(text);
  let system: string | undefined;
  let user = text;
  const systemAt = systemMarker.exec(text);
  const userAt = userMarker.exec(text);
  if (systemAt && !userAt) throw invalid('a "--- system ---" section needs a "--- user ---" section after it');
  if (userAt) {
    if (systemAt && systemAt.index > userAt.index) throw invalid('the "--- system ---" section comes before the "--- user ---" section');
    if (systemAt) system = text.slice(systemAt.index + systemAt[0].length, userAt.index).trim();
    else if (text.slice(0, userAt.index).trim() !== '') throw invalid('text before "--- user ---" belongs in a "--- system ---" section');
    user = text.slice(userAt.index + userAt[0].length).trim();
  }
  const used = new Set<string>();
  for (const part of [system ?? '', user]) {
    for (const match of part.matchAll(variablePattern)) {
      if (!templateVariables.includes(match[1] as TemplateVariable)) {
        throw invalid(`unknown variable {{${match[1]}}} (known: ${templateVariables.map((name) => `{{${name}}}`).join(', ')})`);
      }
      used.add(match[1]);
    }
    if (part.replace(variablePattern, '').includes('{{')) throw invalid('a "{{" does not close with "}}"');
  }
  if (user === '') throw invalid('the user message is empty');
  const missing = requiredVariables.filter((name) => !used.has(name));
  if (missing.length > 0) throw invalid(`the template must show the judge ${missing.map((name) => `{{${name}}}`).join(' and ')}; it has no such variable`);
  if (system !== undefined && (system.includes('{{response}}') || system.includes('{{criterion}}'))) {
    // The system message is shared by every call: the item's text belongs in the user message.
    throw invalid('{{response}} and {{criterion}} go in the user message, not the system message');
  }
  return { version: `template:${sha256.slice(0, 12)}`, sha256, ...(system ? { system } : {}), user };
}

/** The reply the verdict is read from, for a criterion. */
function verdictFormat(criterion: Criterion): string {
  if (criterion.scale?.type === 'ordinal') return '{"explanation": "<one to three sentences>", "choice": "<the label of exactly one listed choice>"}';
  return '{"explanation": "<one to three sentences>", "criteria_met": <true or false>}';
}

function fill(part: string, values: Record<TemplateVariable, string>): string {
  return part.replace(variablePattern, (_whole, name: string) => values[name as TemplateVariable]);
}

/** The template's messages for one criterion of an item; texts of the item sit in tags carrying the item's nonce. */
export function renderTemplate(template: JudgeTemplate, item: Item, criterion: Criterion): ChatMessage[] {
  const nonce = deriveNonce(item);
  const values: Record<TemplateVariable, string> = {
    response: `<response-${nonce}>\n${item.response}\n</response-${nonce}>`,
    criterion: renderCriterion(criterion),
    conversation: `<conversation-${nonce}>\n${renderConversation(item)}\n</conversation-${nonce}>`,
    reference: item.reference !== undefined && item.reference !== '' ? `<reference-${nonce}>\n${item.reference}\n</reference-${nonce}>` : '',
    verdict_format: verdictFormat(criterion),
  };
  const messages: ChatMessage[] = [];
  if (template.system !== undefined) messages.push({ role: 'system', content: fill(template.system, values) });
  messages.push({ role: 'user', content: fill(template.user, values) });
  return messages;
}

/**
 * The per-criterion strategy `inner` with the template's prompt: the same reply schema, sampling,
 * token probabilities and reading of the reply; the template's version and text in the cache key.
 */
export function withJudgeTemplate(template: JudgeTemplate, inner: GradingStrategy): GradingStrategy {
  return {
    name: inner.name,
    templateVersion: template.version,
    plan(item, criteria, limits) {
      return inner.plan(item, criteria, limits).map((task): JudgeTask => {
        const [criterion] = task.criteria;
        const { output, temperature, maxTokens, seed, logprobs } = task.request;
        let messages: ChatMessage[] | undefined;
        const fields: Omit<JudgeRequest, 'messages'> = { ...(output ? { output } : {}), ...requestSampling({ temperature, maxTokens, seed }), ...(logprobs ? { logprobs } : {}) };
        // Built on first use: a cached task is keyed by its material and never renders its prompt.
        const request = Object.defineProperty(fields, 'messages', { get: () => (messages ??= renderTemplate(template, item, criterion)), enumerable: true }) as JudgeRequest;
        return { ...task, request, templateVersion: template.version, keyMaterial: `${template.sha256}\u0000${itemDigest(item)}\u0000${renderCriterion(criterion)}` };
      });
    },
  };
}
