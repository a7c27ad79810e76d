/**
 * Every input format, one module each, registered by name (as Vitest registers reporters).
 * Item importers feed `grade`; results importers feed `score`; pairwise importers feed
 * `compare` and `meta`; best-of-N importers feed `meta`.
 */
import { createRegistry, type RegistryName } from '../util/registry.js';
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
import { multichallengeImporter } from './multichallenge.js';
import { resultsImporter, resultsItemImporter } from './results.js';
import { rewardbench2Importer } from './rewardbench2.js';
import { rmBenchImporter } from './rm-bench.js';
import type { BestOfNImporter, Importer, PairwiseImporter, ResultsImporter } from './types.js';

export const itemImporters = createRegistry({ what: 'input format', field: 'format' }, {
  items: itemsImporter,
  healthbench: healthbenchImporter,
  ifeval: ifevalImporter,
  researchrubrics: researchrubricsImporter,
  rar: rarImporter,
  rubrichub: rubrichubImporter,
  drb2: drb2Importer,
  advancedif: advancedifImporter,
  biggen: biggenImporter,
  prbench: prbenchImporter,
  profbench: profbenchImporter,
  'tau-bench': tauBenchImporter,
  'otel-genai': otelGenaiImporter,
  multichallenge: multichallengeImporter,
  results: resultsItemImporter,
} satisfies Record<string, Importer>);

export const resultsImporters = createRegistry({ what: 'results format', field: 'format' }, { results: resultsImporter, 'simple-evals': simpleEvalsImporter } satisfies Record<string, ResultsImporter>);

export const pairwiseImporters = createRegistry({ what: 'pairwise format', field: 'format' }, {
  pairs: pairsImporter,
  llmbar: llmbarImporter,
  pandalm: pandalmImporter,
  autoj: autojImporter,
  judgebench: judgebenchImporter,
  hhh: hhhImporter,
} satisfies Record<string, PairwiseImporter>);

/** Best-of-N benchmarks (several responses to a prompt, the correct ones first), for `meta`. */
export const bestOfNImporters = createRegistry({ what: 'best-of-N format', field: 'format' }, { rewardbench2: rewardbench2Importer, 'rm-bench': rmBenchImporter } satisfies Record<string, BestOfNImporter>);

/** The built-in input formats' names. */
export type ItemFormatName = RegistryName<typeof itemImporters>;

/**
 * The importer of an item format (`items`, `healthbench`, `ifeval`…): records of items or invalid lines, streamed.
 *
 * @example
 * ```ts
 * import { getItemImporter } from 'rubricate';
 * for await (const record of getItemImporter('healthbench').read('healthbench.jsonl', {})) {
 *   if (record.kind === 'item') console.log(record.item.id);
 * }
 * ```
 */
export const getItemImporter = (name: ItemFormatName | (string & {})) => itemImporters.get(name);
/**
 * The reader of a results format (`results`, `simple-evals`).
 *
 * @example
 * ```ts
 * import { getResultsImporter } from 'rubricate';
 * for await (const line of getResultsImporter('simple-evals').read('simple-evals.json', {})) console.log(line.kind);
 * ```
 */
export const getResultsImporter = (name: RegistryName<typeof resultsImporters> | (string & {})) => resultsImporters.get(name);
/**
 * The importer of a pairwise format (`pairs`, `llmbar`, `judgebench`…): pairs of responses to judge against each other.
 *
 * @example
 * ```ts
 * import { getPairwiseImporter } from 'rubricate';
 * for await (const record of getPairwiseImporter('judgebench').read('judgebench.jsonl', {})) console.log(record.kind);
 * ```
 */
export const getPairwiseImporter = (name: RegistryName<typeof pairwiseImporters> | (string & {})) => pairwiseImporters.get(name);
