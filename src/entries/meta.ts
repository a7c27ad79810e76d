/**
 * `rubricate/meta`: how far a judge agrees with trusted labels (binary and pairwise, with
 * bootstrap intervals), published judge outputs re-scored, and probes of how a judge can be gamed.
 */
export { computeBinaryMeta } from '../meta/binary-metrics.js';
export type { BinaryMetaOptions, BinaryMetaRecord, BinaryMetaReport } from '../meta/binary-metrics.js';
export { computePairwiseMeta } from '../scoring/pairwise-metrics.js';
export type { PairwiseMetaOptions, PairwiseMetaRecord, PairwiseMetaReport } from '../scoring/pairwise-metrics.js';
export { scorePublishedJudge, formatMetaTable, type MetaReport } from '../meta/index.js';
export { runProbes as probe, parseProbeList } from '../meta/probes/runner.js';
export type { ProbeReport, ProbeRunOptions } from '../meta/probes/runner.js';
// Real judges against people: the human ceiling, recorded graded runs, LLM-Rubric, score calibrations.
export { humanBaseline } from '../meta/binary-metrics.js';
export type { HumanBaseline, RaterAgreement } from '../meta/binary-metrics.js';
export { llmJudgeMeta, type LlmJudgeReport } from '../meta/llmjudge.js';
export { llmRubricBaselines, type LlmRubricBaselineReport } from '../meta/llm-rubric.js';
export { calibrateLlmRubric, type LlmRubricCalibrationReport } from '../meta/llm-rubric-calibration.js';
export { fitScoreCalibration, type ScoreCalibrationReport } from '../meta/score-calibration.js';
