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
}

export interface BuiltGenerator {
  generator: RubricGenerator;
  judge: Judge;
}

export async function buildRubricGenerator(options: GeneratorModelOptions): Promise<BuiltGenerator> {
  const { spec: requested, baseUrl, apiKey, transport, structuredOutput, ...generatorOptions } = options;
  const spec = requested ?? defaultJudgeSpec();
  const judge = await createJudge({ spec, baseUrl, apiKey, transport, structuredOutput });
  if (!judge) throw new RubricateError('CONFIG_INVALID', `--generator ${spec}: a generator model is required (not "none")`, { field: 'generator' });
  return { generator: createRubricGenerator({ ...generatorOptions, generator: judge }), judge };
}
