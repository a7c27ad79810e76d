/** Generator flags shared by `generate` and `refine`, mapped onto the generation layer's plain options. */
import type { Command } from 'commander';
import { RubricateError } from '../errors.js';
import { defaultGeneratorSampling } from '../generation/generator.js';
import type { GeneratorModelOptions } from '../generation/generator-options.js';
import { defaultImportancePoints, parseImportancePoints } from '../generation/importance.js';
import type { RunSpec } from '../spec/run-spec.js';
import { addModelOptions, parseNumber, parsePositiveInteger } from './run-spec-flags.js';

/** The generator's own settings; how to reach its model are the `--generator-*` model flags (`run-spec-flags.ts`). */
export interface GeneratorFlags {
  generatorTemperature: number;
  generatorMaxTokens: number;
  generatorSeed?: number;
  generatorAttempts: number;
  generatorTimeout: number;
  importancePoints?: string;
  minCriteria: number;
  maxCriteria: number;
  gate?: boolean;
}

export function addGeneratorOptions(command: Command): Command {
  return addModelOptions(command, 'generator')
    .option('--generator-temperature <t>', 'generator sampling temperature', parseNumber('generator-temperature', 0), defaultGeneratorSampling.temperature)
    .option('--generator-max-tokens <n>', 'max tokens per generator answer', parsePositiveInteger('generator-max-tokens'), defaultGeneratorSampling.maxTokens)
    .option('--generator-seed <n>', 'sampling seed passed to the generator', parseNumber('generator-seed'))
    .option('--generator-attempts <n>', 'calls per generation before it fails (bad answers and transport errors alike)', parsePositiveInteger('generator-attempts'), 4)
    .option('--generator-timeout <seconds>', 'per-call generator timeout', parseNumber('generator-timeout', 0.001), 300)
    .option(
      '--importance-points <list>',
      `points per importance level (default ${Object.entries(defaultImportancePoints)
        .map(([level, points]) => `${level}=${points}`)
        .join(',')})`,
    )
    .option('--min-criteria <n>', 'fewest criteria per rubric', parsePositiveInteger('min-criteria'), 7)
    .option('--max-criteria <n>', 'most criteria per rubric', parsePositiveInteger('max-criteria'), 20)
    .option('--gate', 'mark generated rubrics gate: hard_rules (a failed hard rule scores the item 0)');
}

/** The generator's options from its flags (its concurrency is the run's); refuses contradictory flags before any model loads. */
export function generatorOptionsFrom(flags: GeneratorFlags, spec: Pick<RunSpec, 'calls'>): Omit<GeneratorModelOptions, 'model' | 'credentials'> {
  if (flags.minCriteria > flags.maxCriteria) {
    throw new RubricateError('CONFIG_INVALID', `--min-criteria (${flags.minCriteria}) is larger than --max-criteria (${flags.maxCriteria})`, { field: 'min-criteria' });
  }
  return {
    importancePoints: flags.importancePoints ? parseImportancePoints(flags.importancePoints) : defaultImportancePoints,
    minCriteria: flags.minCriteria,
    maxCriteria: flags.maxCriteria,
    sampling: {
      temperature: flags.generatorTemperature,
      maxTokens: flags.generatorMaxTokens,
      ...(flags.generatorSeed !== undefined ? { seed: flags.generatorSeed } : {}),
    },
    maxAttempts: flags.generatorAttempts,
    timeoutMs: Math.round(flags.generatorTimeout * 1000),
    gate: flags.gate,
    concurrency: spec.calls.concurrency,
  };
}
