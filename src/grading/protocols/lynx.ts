/**
 * `--judge-protocol lynx`: Patronus AI's Lynx, a judge of one question: is the ANSWER faithful to
 * the DOCUMENT (nothing beyond it, nothing against it)? Its published prompt gives the QUESTION,
 * the DOCUMENT and the ANSWER and asks for JSON with the keys "REASONING" (bullet points) and
 * "SCORE" ("PASS" when faithful, "FAIL" when not); the prompt is reproduced as published, because
 * the model expects it word for word.
 *
 * The question is the conversation, the document the item's reference (required: an item without
 * one is refused), the answer the response. Every yes/no criterion graded with Lynx gets Lynx's
 * one verdict (met = PASS); a criterion with a scale is refused. The reply is read strictly: one
 * JSON object with exactly "REASONING" (a list of strings, or one string) and "SCORE" ("PASS" or
 * "FAIL"). NeMo Guardrails' reader counts an unreadable reply as a hallucination; here it is
 * JUDGE_UNPARSEABLE, asked again and then reported.
 */
import { RubricateError } from '../../errors.js';
import { prometheusInstruction } from '../prometheus.js';
import { createAbsoluteProtocolStrategy, exactKeys, strictJsonObject, type AbsoluteLayout, type ProtocolOptions, type ProtocolParse } from './shared.js';

export const lynxTemplateVersion = 'lynx/v1';

function lynxPrompt(question: string, document: string, answer: string): string {
  return `Given the following QUESTION, DOCUMENT and ANSWER you must analyze the provided answer and determine whether it is faithful to the contents of the DOCUMENT. The ANSWER must not offer new information beyond the context provided in the DOCUMENT. The ANSWER also must not contradict information provided in the DOCUMENT. Output your final verdict by strictly following this format: "PASS" if the answer is faithful to the DOCUMENT and "FAIL" if the answer is not faithful to the DOCUMENT. Show your reasoning.

--
QUESTION (THIS DOES NOT COUNT AS BACKGROUND INFORMATION):
${question}

--
DOCUMENT:
${document}

--
ANSWER:
${answer}

--

Your output should be in JSON FORMAT with the keys "REASONING" and "SCORE":
{"REASONING": <your reasoning as bullet points>, "SCORE": <your final score>}`;
}

/** `{"REASONING": [...], "SCORE": "PASS" | "FAIL"}`, read strictly: true for PASS. */
export function parseLynxReply(text: string): ProtocolParse<boolean> {
  const read = strictJsonObject(text);
  if (!read.ok) return read;
  const keys = exactKeys(read.value, ['REASONING', 'SCORE']);
  if (keys) return { ok: false, reason: keys };
  const { REASONING: reasoning, SCORE: score } = read.value;
  const points = typeof reasoning === 'string' ? [reasoning] : reasoning;
  if (!Array.isArray(points) || !points.every((point) => typeof point === 'string')) return { ok: false, reason: '"REASONING" must be a list of strings' };
  if (score !== 'PASS' && score !== 'FAIL') return { ok: false, reason: `"SCORE" must be "PASS" or "FAIL", got ${JSON.stringify(score)}` };
  return { ok: true, result: score === 'PASS', explanation: (points as string[]).join('\n').trim() };
}

export const lynxAbsolute: AbsoluteLayout = {
  protocol: 'lynx',
  templateVersion: lynxTemplateVersion,
  binaryOnly: true,
  prompt(item) {
    if (item.reference === undefined || item.reference === '') {
      throw new RubricateError('CONFIG_INVALID', `--judge-protocol lynx judges a response against its DOCUMENT, the item's reference, and item ${item.id} has none`, { field: 'judge-protocol' });
    }
    return lynxPrompt(prometheusInstruction(item), item.reference, item.response);
  },
  parse: (text) => parseLynxReply(text),
};

export const createLynxStrategy = (options: ProtocolOptions) => createAbsoluteProtocolStrategy(lynxAbsolute, options);
