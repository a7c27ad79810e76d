/**
 * The rubric generator built from plain options: which model writes rubrics (a judge spec and
 * its endpoint) plus the generator's own settings. The CLI maps its flags onto these options
 * (`src/cli/generator-options.ts`); library users pass them directly.
 */
import { RubricateError } from '../errors.js';
import { createJudge, defaultJudgeSpec } from '../judges/registry.js';
import type { StructuredOutputMode } from '../judges/openai/openai-judge.js';
import type { Judge } from '../judges/types.js';
import { createRubricGenerator, type RubricGenerator, type RubricGeneratorOptions } from './generator.js';

export interface GeneratorModelOptions extends Omit<RubricGeneratorOptions, 'generator'> {
  /** Judge spec of the model that writes rubrics (`openai:MODEL`, `gguf:PATH`…); default: the same rule as the judge. */
  spec?: string;
  baseUrl?: string;
  apiKey?: string;
  transport?: 'http' | 'sdk';
  structuredOutput?: StructuredOutputMode;
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
  const { spec: requested, baseUrl, apiKey, transport, structuredOutput, wrap, ...generatorOptions } = options;
  const spec = requested ?? defaultJudgeSpec();
  const model = await createJudge({ spec, baseUrl, apiKey, transport, structuredOutput });
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
