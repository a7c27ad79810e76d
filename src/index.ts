/**
 * rubricate's library entry: the same pipeline the CLI and the server use.
 *
 *   const judge = await createJudge({ spec: 'openai:gpt-4.1' });
 *   const grader = new Grader({ judge, scoring: 'healthbench' });
 *   const result = await grader.gradeItem(normalizeItem({ id, prompt, response, rubric }));
 */
export { RubricateError, errorCodes, exitCodes, type ErrorCode, type SerializedError } from './errors.js';
export { rubricateVersion } from './version.js';

export type { Criterion, Rubric, Item, Message, PairwiseItem, Scale, CheckSpec, RubricInput, ItemInput, CriterionInput } from './rubric/schema.js';
export { normalizeItem, normalizeRubric, deriveCriterionId } from './rubric/normalize.js';
export { rubricHash, canonicalRubricJson } from './rubric/hashing.js';
export { pointsForImportance, importanceSchemes } from './rubric/importance.js';
export { itemImporters, resultsImporters, pairwiseImporters, getItemImporter, getResultsImporter, getPairwiseImporter } from './rubric/formats/index.js';
export type { Importer, ImportRecord, ImportOptions, PairwiseImporter, ResultsImporter } from './rubric/formats/types.js';

export type { Judge, JudgeRequest, JudgeReply, JudgeProvenance, ChatMessage } from './judges/types.js';
export { createJudge, registerJudge, defaultJudgeSpec, type JudgeConfig } from './judges/registry.js';
export { createOpenAICompatibleJudge, type OpenAICompatibleJudgeOptions } from './judges/openai/openai-judge.js';

export { Grader, createStrategy, type GraderOptions, type GradingMode } from './pipeline/grader.js';
export { gradeFile, type GradeFileOptions, type GradeFileOutcome } from './pipeline/grade-file.js';
export { Comparer, CompareSummaryBuilder, type CompareOptions, type CompareRecord, type CompareSummary } from './pipeline/compare.js';
export { readResults, toScoredItem, type ResultRecord, type ResultCriterion } from './pipeline/results.js';
export { GradingEngine, type EngineOptions, type EngineEvent, type GradedItem } from './engine/engine.js';
export { SqliteReplyStore, defaultCachePath, type ReplyStore } from './store/index.js';
export { costOf, priceFor, defaultPrices, type Usage, type ModelPrice } from './engine/usage.js';

export { getScoring, registerScoring, scoringNames, aggregate } from './scoring/registry.js';
export type { Scoring, Metrics, ScoredItem, ScoredCriterion, TagMetric } from './scoring/types.js';
export { withFailedAsZero } from './scoring/failed-as-zero.js';
export { parsePrometheusAbsolute, parsePrometheusRelative } from './grading/prometheus.js';
export { researchRubricsMeta, researchRubricsTasks, loadTernaryLabels } from './meta/researchrubrics.js';

export { checkRegistry, runCheck, validateCheck } from './checks/registry.js';
export type { CheckDefinition, CheckContext, CheckOutcome, CheckMode } from './checks/types.js';
