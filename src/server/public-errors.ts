/**
 * What a client may see of an error. Judge failures carry the judge's address, the status
 * and body of its answer, sometimes a stack; none of that belongs in an answer to a trainer
 * (or, through Vertex's aux info, in Google's logs). Answers keep the code, a message with
 * URLs, file paths and stack lines removed, and only the `field` of the details (which names
 * what the client got wrong). The full error stays in the server's own logs and results.
 */
import type { SerializedError } from '../errors.js';
import type { GradedCriterion } from '../results/results.js';
import type { RewardResult } from './rewards.js';

const urlPattern = /\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>)\]]+/gi;
const hostPortPattern = /\b\d{1,3}(?:\.\d{1,3}){3}(?::\d{1,5})?\b|\[[0-9a-f:]+\]:\d{1,5}\b|\blocalhost:\d{1,5}\b/gi;
const stackLinePattern = /\n\s*at .*/g;
const absolutePathPattern = /(^|[\s("'=])\/(?:[\w.-]+\/)+[\w.-]*/g;
const maxMessageLength = 300;

/** The message without addresses, paths or stack lines, cut to a readable length. */
export function publicMessage(message: string): string {
  let text = message.replace(stackLinePattern, '').replace(urlPattern, (url) => `<judge endpoint>${/[.,:;]+$/.exec(url)?.[0] ?? ''}`).replace(hostPortPattern, '<judge endpoint>').replace(absolutePathPattern, '$1<path>');
  if (text.length > maxMessageLength) text = `${text.slice(0, maxMessageLength)}…`;
  return text;
}

export function publicError(error: SerializedError): SerializedError {
  const field = error.details?.field;
  return { code: error.code, message: publicMessage(error.message), ...(typeof field === 'string' ? { details: { field } } : {}) };
}

function publicCriterion(criterion: GradedCriterion): GradedCriterion {
  if (!criterion.error && !criterion.votes?.some((vote) => vote.error !== undefined) && !criterion.turns?.verdicts.some((turn) => turn.error) && !criterion.process?.verdicts.some((step) => step.error)) return criterion;
  const copy: GradedCriterion = { ...criterion };
  if (criterion.error) copy.error = publicError(criterion.error);
  if (criterion.votes) copy.votes = criterion.votes.map((vote) => (vote.error === undefined ? vote : { ...vote, error: publicMessage(vote.error) }));
  // Per-turn criteria: each turn's error is a judge failure like any other.
  if (criterion.turns) copy.turns = { ...criterion.turns, verdicts: criterion.turns.verdicts.map((turn) => (turn.error ? { ...turn, error: publicError(turn.error) } : turn)) };
  // Step-scoped criteria (process rewards): the same for each step's error.
  if (criterion.process) copy.process = { ...criterion.process, verdicts: criterion.process.verdicts.map((step) => (step.error ? { ...step, error: publicError(step.error) } : step)) };
  return copy;
}

/** A reward result as sent to a client (a copy; the original is untouched). */
export function publicResult(result: RewardResult): RewardResult {
  const copy: RewardResult = { ...result, criteria: result.criteria.map(publicCriterion) };
  if (result.error) copy.error = publicError(result.error);
  return copy;
}
