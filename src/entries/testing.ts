/**
 * `rubricate/testing`: what rubricate's own tests use, for yours. A loopback OpenAI-compatible
 * judge whose answers you script (the real client and parser run against it), and a tiny
 * generated GGUF model for the local judge.
 */
export { startFakeJudge, binaryVerdict, batchedVerdicts, parseGradingPrompt } from '../testing/fake-judge.js';
export type { FakeJudge, FakeJudgeAction, FakeJudgeRequest, FakeJudgeScript } from '../testing/fake-judge.js';
export { writeTinyGguf, buildTinyGguf, type TinyGgufOptions } from '../testing/tiny-gguf.js';
