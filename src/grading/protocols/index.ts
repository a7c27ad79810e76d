/**
 * The judge protocols besides rubricate's own and Prometheus' (`../prometheus.ts`): each grades
 * one criterion per call in the judge's trained layout and reads its native reply strictly.
 */
import { RubricateError } from '../../errors.js';
import type { JudgeProtocol } from '../../spec/run-spec.js';
import type { GradingStrategy } from '../types.js';
import { createLynxStrategy } from './lynx.js';
import { createR3PairwiseStrategy, createR3Strategy } from './r3.js';
import { createSelenePairwiseStrategy, createSeleneStrategy } from './selene.js';
import type { ProtocolOptions } from './shared.js';

/** The protocols of this folder. */
export type AdapterProtocol = Exclude<JudgeProtocol, 'native' | 'prometheus'>;

export function isAdapterProtocol(protocol: JudgeProtocol | undefined): protocol is AdapterProtocol {
  return protocol === 'r3' || protocol === 'selene' || protocol === 'lynx';
}

/** Absolute grading (`grade`): per criterion, 1–5 scales with described levels or yes/no. */
export function createProtocolStrategy(protocol: AdapterProtocol, options: ProtocolOptions): GradingStrategy {
  if (protocol === 'r3') return createR3Strategy(options);
  if (protocol === 'selene') return createSeleneStrategy(options);
  return createLynxStrategy(options);
}

/** Pairwise grading (`compare`): R3's and Selene's pairwise formats; Lynx has none. */
export function createProtocolPairwiseStrategy(protocol: AdapterProtocol, options: ProtocolOptions): GradingStrategy {
  if (protocol === 'r3') return createR3PairwiseStrategy(options);
  if (protocol === 'selene') return createSelenePairwiseStrategy(options);
  throw new RubricateError('CONFIG_INVALID', '--judge-protocol lynx judges one answer against its document: it has no pairwise format (use it with grade)', { field: 'judge-protocol' });
}
