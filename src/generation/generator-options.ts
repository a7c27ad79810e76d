/**
 * The rubric generator built from plain options: which model writes rubrics (a model spec, as
 * judges take) plus the generator's own settings. The CLI maps its flags onto these options
 * (`src/cli/generator-options.ts`); library users pass them directly.
 */
import { RubricateError } from '../errors.js';
import { createJudge, defaultJudgeSpec } from '../judges/registry.js';
import type { Judge } from '../judges/types.js';
import type { Credentials, ModelSpec } from '../spec/run-spec.js';
import { createRubricGenerator, type RubricGenerator, type RubricGeneratorOptions } from './generator.js';

export interface GeneratorModelOptions extends Omit<RubricGeneratorOptions, 'generator'> {
  /** How to reach the model that writes rubrics, as a judge is reached; default: the same rule as the judge. */
  model?: ModelSpec;
  credentials?: Credentials;
  /**
   * Replaces the model once built, before the generator calls it (a wrapper that sends its calls
   * by batch, or counts them for a dry run); it is given the spec the model was built from.
   */
  wrap?: (judge: Judge, spec: string) => Judge;
}

export interface BuiltGenerator {
  generator: RubricGenerator;
  /** The model the generator calls (wrapped, when `wrap` was given). */
  judge: Judge;
}

export async function buildRubricGenerator(options: GeneratorModelOptions): Promise<BuiltGenerator> {
  const { model: modelSpec = {}, credentials, wrap, ...generatorOptions } = options;
  const spec = modelSpec.model ?? defaultJudgeSpec();
  const model = await createJudge({ ...modelSpec, model: spec }, credentials);
  if (!model) throw new RubricateError('CONFIG_INVALID', `--generator ${spec}: a generator model is required (not "none")`, { field: 'generator' });
  let judge: Judge;
  try {
    judge = wrap ? wrap(model, spec) : model;
  } catch (error) {
    await model.close?.();
    throw error;
  }
  return { generator: createRubricGenerator({ ...generatorOptions, generator: judge }), judge };
}
