/**
 * Robustness probes: what can fool a judge. Spurious perturbations (padding, formatting,
 * confident tone, flattery) should not move a score; prompt injections should not flip
 * verdicts; deleting the sentence that satisfies a criterion should. See docs/probes.md.
 */
export { runProbes, sampleItems, parseProbeList } from './runner.js';
export type { ProbeRunOptions, ProbeReport } from './runner.js';
export { analyseProbe } from './analysis.js';
export type { Assessment, CriterionFlips, CriterionPair, DriftSummary, FlipSummary, ProbeResult, ProbeSummary, Rate, VariantObservation } from './analysis.js';
export {
  addConfidence,
  addFlattery,
  addFormatting,
  deleteSupportingSentence,
  deletionPerturbations,
  injectDirect,
  injectFakeDelimiter,
  injectFakeVerdict,
  injectionVariants,
  padResponse,
  perturbItem,
  perturbationRandom,
  probeDefinitions,
  probeNames,
} from './perturbations.js';
export type { InjectionVariant, Perturbation, ProbeDefinition, ProbeKind, ProbeName, SentenceDeletion } from './perturbations.js';
export { formatProbeTable } from './format.js';
export { PROBE_TEXT_VERSION } from './phrases.js';
export { contentTokens, mostSimilarSentence, sentenceSpans, tokenOverlap } from './text.js';
