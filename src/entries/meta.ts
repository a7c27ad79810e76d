/**
 * `rubricate/meta`: how far a judge agrees with trusted labels (binary and pairwise, with
 * bootstrap intervals), published judge outputs re-scored, and probes of how a judge can be gamed.
 */
export { computeBinaryMeta } from '../meta/binary-metrics.js';
export type { BinaryMetaOptions, BinaryMetaRecord, BinaryMetaReport } from '../meta/binary-metrics.js';
export { computePairwiseMeta } from '../scoring/pairwise-metrics.js';
export type { PairwiseMetaOptions, PairwiseMetaRecord, PairwiseMetaReport } from '../scoring/pairwise-metrics.js';
export { scorePublishedJudge, formatMetaTable, type MetaReport } from '../meta/index.js';
export { runProbes as probe, parseProbeList } from '../meta/probes/runner.js';
export type { ProbeReport, ProbeRunOptions } from '../meta/probes/runner.js';
