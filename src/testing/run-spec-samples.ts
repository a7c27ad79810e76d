/**
 * A valid value for every setting of the run spec, by path (model settings as paths inside a
 * model spec). The tests that enumerate the schema read it: a setting added to the schema
 * without a value here fails them, so every new setting is tried over the queue and by flag.
 */
import { sealAlignment } from '../spec/alignment.js';
import { sealCalibration } from '../spec/calibration.js';

export const sampleSettings: Readonly<Record<string, unknown>> = {
  model: 'openai:m',
  'endpoint.baseUrl': 'http://127.0.0.1:9/v1',
  'endpoint.headers': { 'x-run': '7' },
  'endpoint.extraBody': { x: 7 },
  'endpoint.maxReplyBytes': 100_000,
  'endpoint.cacheNamespace': 'shared',
  'openai.transport': 'http',
  'openai.structuredOutput': 'json_object',
  'openai.reasoningEffort': 'low',
  'openai.profile': 'generic',
  'openai.azureApiVersion': '2024-10-21',
  'gemini.thinkingBudget': 0,
  'local.threads': 2,
  'local.sequences': 2,
  'local.contextSize': 2048,
  'sampling.temperature': 0.9,
  'sampling.topP': 0.95,
  'sampling.maxTokens': 400,
  'sampling.seed': 11,
  'sampling.samplesPerPrompt': 3,
  'plan.mode': 'batched',
  'plan.groupBy': 'metadata.prompt_id',
  'plan.listwise': 'holistic',
  'plan.tournament': 'circular',
  'plan.orders': 2,
  'plan.criteriaPerCall': 2,
  'plan.verdict': 'binary',
  'plan.topLogprobs': 5,
  'plan.explanation': 'short',
  'plan.protocol': 'native',
  'plan.template': '--- system ---\nYou grade strictly.\n--- user ---\n{{conversation}}\n\n{{response}}\n\n{{criterion}}\n\nReply with {{verdict_format}}',
  'plan.likertLevels': 5,
  'plan.contextBudget': 6000,
  'plan.sampling.temperature': 0.5,
  'plan.sampling.maxTokens': 300,
  'plan.sampling.seed': 7,
  'plan.abstain': 'half',
  'plan.alignment': sealAlignment({
    examples: { criteria: { a: [{ label: true, criterion: 'Answers the question', prompt: 'Question 9?', response: 'Answer 9.', source: 'train-item' }, { label: false, criterion: 'Answers the question', prompt: 'Question 8?', response: 'No idea.', source: 'other-train-item' }] }, tags: {} },
    rewordings: { b: { text: 'Is polite to the user throughout', original: 'Is polite' } },
    calibrator: null,
  }),
  'calls.maxAttempts': 2,
  'calls.timeoutMs': 30_000,
  'calls.maxRetryAfterMs': 5000,
  'calls.retryBaseDelayMs': 5,
  'calls.retryMaxDelayMs': 50,
  'calls.concurrency': 3,
  'calls.breakerThreshold': 50,
  'jury.aggregate': 'mean',
  'jury.samples': 2,
  'scoring.name': 'normalized',
  'scoring.calibration': sealCalibration({ kind: 'ridge', target: 'overall human score', criteria: ['a', 'b'], intercept: 1, coefficients: [2, 0.5], lambda: 10, range: [1, 4] }),
  'scoring.failedAsZero': true,
  'scoring.checkMode': 'loose',
  'fleet.globalConcurrency': 4,
  'fleet.requestsPerMinute': 600,
  'fleet.tokensPerMinute': 60_000,
  'fleet.leaseMs': 5000,
  'cascade.judges': [{ model: 'openai:strong', endpoint: { baseUrl: 'http://127.0.0.1:9/v1' } }],
  'cascade.band': [0.2, 0.8],
  'cascade.escalateOn': ['band', 'error'],
  'guard.modelUnderTest': 'gpt-4o',
  'guard.selfPreference': 'warn',
  'limits.maxGroupSize': 64,
  'limits.maxTournamentPairs': 1000,
  'limits.maxRepeats': 10,
  'limits.maxSteps': 32,
  'agentic.tools': ['fetch', 'search', 'check', 'steps'],
  'agentic.maxToolCalls': 3,
  'agentic.fetchAllow': ['127.0.0.1:9'],
  'agentic.fetchMaxBytes': 1000,
  'agentic.fetchTimeoutMs': 2000,
  'agentic.documents': 'sources.jsonl',
  cacheTtlMs: 3_600_000,
  omitText: true,
  keepRequests: true,
};

/** A sample value as it is typed on the command line (`x-run=7`, `{"x":7}`, `2048`). */
export function sampleFlagValue(path: string): string {
  const value = sampleSettings[path];
  if (path === 'endpoint.headers') return Object.entries(value as Record<string, string>).map(([name, header]) => `${name}=${header}`).join(',');
  return typeof value === 'object' ? JSON.stringify(value) : String(value);
}
