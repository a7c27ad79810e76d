/**
 * `rubricate/generation`: rubrics from prompts and references (`createRubricGenerator(...).generate`),
 * contrastively from preference pairs, refined against responses (`refineRubric`), and evolving
 * during RL (`createRubricEvolver`).
 */
export { createRubricGenerator, defaultGeneratorSampling } from '../generation/generator.js';
export type { GeneratedRubric, GeneratorSampling, RubricGenerator, RubricGeneratorOptions } from '../generation/generator.js';
export { refineRubric } from '../generation/refine.js';
export type { RefineOptions, RefineOutcome, RefineSubject } from '../generation/refine.js';
export { contrastGroup, groupPairs, readPreferencePairs } from '../generation/contrastive.js';
export type { ContrastiveOptions, ContrastiveOutcome, PairGroup, PreferencePair } from '../generation/contrastive.js';
export { createRubricEvolver } from '../generation/evolver.js';
export type { RubricEvolver, RubricEvolverOptions } from '../generation/evolver.js';
