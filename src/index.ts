/**
 * rubricate's library entry: the same pipeline the CLI and the server use, with the same
 * defaults (deterministic checks run, greedy sampling, `weighted_mean` scoring as for
 * `rubricate grade --format items`). Settings come in the run spec's groups (`plan`, `calls`…).
 *
 *   const judge = await createJudge({ model: 'openai:gpt-4.1-mini' });
 *   const { results, metrics } = await grade([{ id, prompt, response, rubric }], { judge, plan: { explanation: 'short' } });
 *
 * Heavier parts have their own entries, so importing this one loads no SQLite and no optional
 * SDK: `rubricate/store`, `rubricate/server`, `rubricate/report`, `rubricate/generation`,
 * `rubricate/meta`, `rubricate/testing`.
 */
export { RubricateError, errorCodes, type ErrorCode, type ErrorDetails, type SerializedError } from './errors.js';
export { rubricateVersion } from './version.js';

export type { Criterion, Rubric, Item, Message, PairwiseItem, Scale, CheckSpec, RubricInput, ItemInput, CriterionInput } from './rubric/schema.js';
export { normalizeItem, normalizeRubric } from './rubric/normalize.js';
export { rubricHash } from './rubric/hashing.js';
export { getItemImporter, getResultsImporter, getPairwiseImporter, type ItemFormatName } from './formats/index.js';
export type { Importer, ImportOptions, PairwiseImporter, ResultsImporter } from './formats/types.js';
export type { ImportRecord, InvalidRecord } from './rubric/records.js';

export type { Judge, JudgeCapabilities, JudgeRequest, JudgeReply, JudgeProvenance, ChatMessage } from './judges/types.js';
export { wrapJudge, type JudgeMiddleware, type WrappedCall, type WrappedJudge } from './judges/middleware.js';
export { createJudge, registerJudge, defaultJudgeSpec, unreadSettings, type JudgeBackend, type JudgeBuild, type JudgeBuildOptions, type JudgeSpec, type JudgePrefix } from './judges/registry.js';
export {
  parseRunSpec,
  runSpecSchema,
  modelSpecSchema,
  type RunSpec,
  type RunSpecInput,
  type ModelSpec,
  type GradingPlan,
  type CallPolicy,
  type JurySettings,
  type ScoringSpec,
  type Credentials,
} from './spec/run-spec.js';

export { grade, type GradeOutcome } from './pipeline/grade.js';
export { Grader, type GraderOptions, type GradingMode } from './pipeline/grader.js';
export { gradeFile, type GradeFileOptions, type GradeFileOutcome } from './pipeline/grade-file.js';
export { scoreFile, type ScoreFileOptions, type ScoreFileOutcome } from './pipeline/score-file.js';
export { Comparer, CompareSummaryBuilder, type CompareOptions, type CompareRecord, type CompareSummary } from './pipeline/compare.js';
export { readResults, resultRecordSchema, toScoredItem, type ResultRecord, type GradedCriterion } from './results/results.js';
export { defaultCheckRunner, defaultSampling, defaultScoringName } from './pipeline/defaults.js';
export type { EngineEvent } from './engine/engine.js';
export { costOf, type Usage } from './engine/usage.js';

export { getScoring, registerScoring, scoringNames, aggregate, type ScoringName } from './scoring/registry.js';
export type { Scoring, Metrics, ScoredItem, ScoredCriterion, TagMetric } from './scoring/types.js';
export { withFailedAsZero } from './scoring/failed-as-zero.js';

export { runCheck, validateCheck } from './checks/registry.js';
export type { CheckDefinition, CheckContext, CheckOutcome, CheckMode } from './checks/types.js';
