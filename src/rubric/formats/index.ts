/**
 * Every input format, one module each, registered by name (as Vitest registers reporters).
 * Item importers feed `grade`; results importers feed `score`; pairwise importers feed
 * `compare` and `meta`.
 */
import { RubricateError } from '../../errors.js';
import { advancedifImporter } from './advancedif.js';
import { autojImporter } from './autoj.js';
import { hhhImporter } from './hhh.js';
import { judgebenchImporter } from './judgebench.js';
import { llmbarImporter } from './llmbar.js';
import { pandalmImporter } from './pandalm.js';
import { pairsImporter } from './pairs.js';
import { prbenchImporter } from './prbench.js';
import { profbenchImporter } from './profbench.js';
import { biggenImporter } from './biggen.js';
import { drb2Importer } from './drb2.js';
import { healthbenchImporter } from './healthbench.js';
import { ifevalImporter } from './ifeval.js';
import { itemsImporter } from './items.js';
import { rarImporter } from './rar.js';
import { researchrubricsImporter } from './researchrubrics.js';
import { rubrichubImporter } from './rubrichub.js';
import { simpleEvalsImporter } from './simple-evals.js';
import { tauBenchImporter } from './tau-bench.js';
import { otelGenaiImporter } from './otel-genai.js';
import { resultsImporter } from './results.js';
import type { Importer, PairwiseImporter, ResultsImporter } from './types.js';

export const itemImporters: ReadonlyMap<string, Importer> = new Map(
  [itemsImporter, healthbenchImporter, ifevalImporter, researchrubricsImporter, rarImporter, rubrichubImporter, drb2Importer, advancedifImporter, biggenImporter, prbenchImporter, profbenchImporter, tauBenchImporter, otelGenaiImporter].map(
    (importer) => [importer.name, importer],
  ),
);

export const resultsImporters: ReadonlyMap<string, ResultsImporter> = new Map([resultsImporter, simpleEvalsImporter].map((importer) => [importer.name, importer]));

export const pairwiseImporters: ReadonlyMap<string, PairwiseImporter> = new Map(
  [pairsImporter, llmbarImporter, pandalmImporter, autojImporter, judgebenchImporter, hhhImporter].map((importer) => [importer.name, importer]),
);

function lookup<T>(registry: ReadonlyMap<string, T>, name: string, what: string): T {
  const found = registry.get(name);
  if (!found) {
    throw new RubricateError('CONFIG_INVALID', `unknown ${what} format "${name}" (known: ${[...registry.keys()].join(', ')})`, { field: 'format' });
  }
  return found;
}

export const getItemImporter = (name: string) => lookup(itemImporters, name, 'input');
export const getResultsImporter = (name: string) => lookup(resultsImporters, name, 'results');
export const getPairwiseImporter = (name: string) => lookup(pairwiseImporters, name, 'pairwise');
