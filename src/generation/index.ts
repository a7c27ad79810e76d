/**
 * Rubric generation and refinement: the library behind `rubricate generate` / `refine`,
 * and the evolving-rubric state an RL reward service keeps per prompt.
 */
export { createRubricGenerator, defaultGeneratorSampling } from './generator.js';
export type { CallContext, GeneratedCriteria, GeneratedRubric, GenerationProvenance, GeneratorSampling, RefineInput, RubricGenerator, RubricGeneratorOptions } from './generator.js';
export { callGenerator } from './generator-call.js';
export type { GeneratorCallOptions, GeneratorCallResult, ReadResult } from './generator-call.js';
export { defaultImportancePoints, importanceLevels, parseImportancePoints } from './importance.js';
export type { Importance, ImportancePoints } from './importance.js';
export { buildRubric, convertCriteria, readCriteriaAnswer } from './criteria.js';
export type { BuiltRubric, CheckTally, GeneratedCriterion } from './criteria.js';
export { checkCatalogue, renderCheckCatalogue, resolveProposedCheck } from './check-catalogue.js';
export { promptVersions } from './prompts.js';
export { contrastGroup, formatContrastiveSummary, groupPairs, readPreferencePairs, summarizeContrastive } from './contrastive.js';
export type { ContrastiveOptions, ContrastiveOutcome, ContrastiveReport, PairGroup, PreferencePair, SplitMode } from './contrastive.js';
export { formatRefineSummary, refineRubric, rescore } from './refine.js';
export type { IterationReport, RefineOptions, RefineOutcome, RefineSubject } from './refine.js';
export { clusterWeights, decomposeExtremeCriteria, defaultFilterOptions, describeAction, dropMisalignedAndRedundant, passRates, preferenceEdges } from './decompose-filter.js';
export type { FilterAction, FilterOptions, FilterResult, PairVerdicts, VerdictMatrix } from './decompose-filter.js';
export { gradeResponses, topTwo } from './grading.js';
export type { GradedResponses } from './grading.js';
export { separation } from './statistics.js';
export type { Separation } from './statistics.js';
export { createRubricEvolver } from './evolver.js';
export type { EvolvingCriterion, HistoryEvent, ObserveResult, ObservedRollout, ProposeResult, RubricEvolver, RubricEvolverOptions, StepOptions } from './evolver.js';
