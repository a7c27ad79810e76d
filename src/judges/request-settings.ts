/**
 * What shapes a judge's requests beyond the messages, in the two forms every backend needs:
 * `settings` for results provenance (secret header values redacted), and `variant`, the
 * canonical text of what changes replies, which the reply cache key includes.
 */
import { credentialHeaderName, redactDeep, redactedMarker, redactText } from '../util/redact.js';
import type { JudgeProvenance } from './types.js';

export interface RequestSettings {
  headers?: Record<string, string>;
  extraBody?: Record<string, unknown>;
  reasoningEffort?: string;
  structuredOutput?: string;
  thinkingBudget?: number;
  query?: Record<string, string>;
}

/** Provenance `settings` and cache `variant` of a judge's request settings. */
export function requestProvenance(options: RequestSettings, known: Record<string, unknown> = {}): Pick<JudgeProvenance, 'settings' | 'variant'> {
  const settings: Record<string, unknown> = { ...known };
  if (options.headers && Object.keys(options.headers).length > 0) {
    settings.headers = Object.fromEntries(Object.entries(options.headers).map(([name, value]) => [name, credentialHeaderName.test(name) ? redactedMarker : redactText(value)]));
  }
  if (options.extraBody) settings.extra_body = redactDeep(options.extraBody);
  if (options.reasoningEffort !== undefined) settings.reasoning_effort = options.reasoningEffort;
  if (options.thinkingBudget !== undefined) settings.thinking_budget = options.thinkingBudget;
  if (options.query && Object.keys(options.query).length > 0) settings.query = redactDeep(options.query);
  if (options.structuredOutput && options.structuredOutput !== 'auto') settings.structured_output = options.structuredOutput;
  const varies = options.extraBody !== undefined || options.reasoningEffort !== undefined || options.thinkingBudget !== undefined;
  return {
    ...(Object.keys(settings).length > 0 ? { settings } : {}),
    // Only what changes the reply: a header or an output format does not.
    ...(varies ? { variant: JSON.stringify({ extra_body: options.extraBody ?? null, reasoning_effort: options.reasoningEffort ?? null, ...(options.thinkingBudget !== undefined ? { thinking_budget: options.thinkingBudget } : {}) }) } : {}),
  };
}
