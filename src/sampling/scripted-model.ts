/**
 * `--model scripted` (or `scripted:NAME`, several made-up models to compare): a model under test that asks no model. Each response is made up from the
 * request (the same conversation and settings give the same text) and says so in its first words;
 * its provenance is `scripted` (`sampled.scripted: true` on every results line), so a run can be
 * tried offline and its made-up responses are never mistaken for a model's.
 */
import type { Judge, JudgeProvenance, JudgeRequest } from '../judges/types.js';
import { sha256Hex } from '../util/hash.js';

export const scriptedModelSpec = 'scripted';
export const scriptedResponseLabel = '[scripted response: no model was asked]';

const sentences = [
  'Start with the most important point and keep the answer short.',
  'If symptoms get worse or new ones appear, seek medical care promptly.',
  'Here is a step-by-step answer, with the reasons for each step.',
  'I am not certain about every detail, so please check a reliable source.',
  'The short answer is yes, with two exceptions worth knowing.',
  'Drink plenty of water and rest, and avoid strenuous activity for a day or two.',
];

/** `scripted`, or `scripted:NAME`: made-up responses (each name its own). */
export function isScriptedSpec(spec: string): boolean {
  return spec === scriptedModelSpec || spec.startsWith(`${scriptedModelSpec}:`);
}

export function isScriptedModel(provenance: JudgeProvenance): boolean {
  return isScriptedSpec(provenance.id);
}

/** A made-up response: the label, then a few sentences chosen by a hash of the request. */
export function scriptedResponse(request: JudgeRequest, name = ''): string {
  const digest = sha256Hex(JSON.stringify([name, request.messages, request.temperature ?? null, request.topP ?? null, request.seed ?? null]));
  const count = 1 + (parseInt(digest.slice(0, 2), 16) % 3);
  const picked = Array.from({ length: count }, (_, index) => sentences[parseInt(digest.slice(2 + index * 2, 4 + index * 2), 16) % sentences.length]);
  return `${scriptedResponseLabel} ${picked.join(' ')}`;
}

export function createScriptedModel(spec = scriptedModelSpec): Judge {
  const name = spec.slice(scriptedModelSpec.length + 1);
  return {
    provenance: { id: spec, model: 'scripted' },
    capabilities: { images: true },
    async complete(request) {
      const text = scriptedResponse(request, name);
      const inputTokens = Math.ceil(request.messages.reduce((total, message) => total + message.content.length, 0) / 4);
      return { text, usage: { inputTokens, outputTokens: Math.ceil(text.length / 4), cachedInputTokens: 0 }, finishReason: 'stop' };
    },
  };
}
