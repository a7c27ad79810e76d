/**
 * The one grading pipeline the CLI, the library and the HTTP server share:
 * items → strategy tasks → engine (checks, store, dedupe, limiter, judge, parse) →
 * verdicts → scoring → result records.
 */
import type { CheckMode } from '../checks/types.js';
import { GradingEngine, type CheckRunner, type EngineEvent, type GradedRecord } from '../engine/engine.js';
import type { ReplyStore } from '../engine/reply-store.js';
import { RubricateError } from '../errors.js';
import { createBatchedStrategy, createPerCriterionStrategy } from '../grading/strategies.js';
import type { GradingStrategy, SamplingOptions, VerdictMode } from '../grading/types.js';
import type { Judge } from '../judges/types.js';
import type { ImportRecord } from '../rubric/formats/types.js';
import type { Item } from '../rubric/schema.js';
import { getScoring } from '../scoring/registry.js';
import type { Scoring } from '../scoring/types.js';
import { toResultRecord, type JudgeInfo, type ResultRecord } from './results.js';

export type GradingMode = 'per-criterion' | 'batched';

export interface GraderOptions {
  judge?: Judge;
  /** `per-criterion` (default) or `batched` with `criteriaPerCall`. */
  mode?: GradingMode;
  /** Criteria per judge call in batched mode; Infinity = the whole rubric. */
  criteriaPerCall?: number;
  sampling?: Partial<SamplingOptions>;
  verdictMode?: VerdictMode;
  store?: ReplyStore;
  checkRunner?: CheckRunner;
  checkMode?: CheckMode;
  concurrency?: number;
  maxAttempts?: number;
  timeoutMs?: number;
  retryBaseDelayMs?: number;
  scoring?: string | Scoring;
  omitText?: boolean;
  onEvent?: (event: EngineEvent) => void;
  signal?: AbortSignal;
}

export const defaultSampling: SamplingOptions = { temperature: 0, maxTokens: 1024 };

export function createStrategy(options: Pick<GraderOptions, 'mode' | 'criteriaPerCall' | 'sampling' | 'verdictMode'>): GradingStrategy {
  const sampling: SamplingOptions = { ...defaultSampling, ...options.sampling };
  const mode = options.mode ?? (options.criteriaPerCall !== undefined && options.criteriaPerCall !== 1 ? 'batched' : 'per-criterion');
  if (mode === 'batched') {
    if (options.verdictMode === 'probability') {
      throw new RubricateError('CONFIG_INVALID', 'probability verdicts need one criterion per call (drop --criteria-per-call)', { field: 'verdict' });
    }
    return createBatchedStrategy({ sampling, criteriaPerCall: options.criteriaPerCall ?? Number.POSITIVE_INFINITY });
  }
  return createPerCriterionStrategy({ sampling, verdictMode: options.verdictMode });
}

export class Grader {
  readonly engine: GradingEngine;
  readonly scoring: Scoring;
  readonly strategy: GradingStrategy;
  readonly judgeInfo: JudgeInfo | undefined;
  private readonly omitText: boolean;

  constructor(options: GraderOptions) {
    this.strategy = createStrategy(options);
    this.scoring = typeof options.scoring === 'object' ? options.scoring : getScoring(options.scoring ?? 'healthbench');
    this.omitText = options.omitText ?? false;
    this.engine = new GradingEngine({
      judge: options.judge,
      strategy: this.strategy,
      store: options.store,
      checkRunner: options.checkRunner,
      checkMode: options.checkMode,
      concurrency: options.concurrency,
      maxAttempts: options.maxAttempts,
      timeoutMs: options.timeoutMs,
      retryBaseDelayMs: options.retryBaseDelayMs,
      onEvent: options.onEvent,
      signal: options.signal,
    });
    const sampling = { ...defaultSampling, ...options.sampling };
    if (options.judge) {
      const { provenance } = options.judge;
      this.judgeInfo = {
        id: provenance.id,
        model: provenance.model,
        ...(provenance.baseUrl ? { base_url: provenance.baseUrl } : {}),
        template_version: this.strategy.templateVersion,
        mode: this.strategy.name,
        temperature: sampling.temperature,
        max_tokens: sampling.maxTokens,
        ...(sampling.seed !== undefined ? { seed: sampling.seed } : {}),
        verdict: options.verdictMode ?? 'binary',
      };
    }
  }

  private toRecord(record: GradedRecord): ResultRecord {
    return toResultRecord(record, { judge: this.judgeInfo, scoring: this.scoring, omitText: this.omitText });
  }

  async gradeItem(item: Item): Promise<ResultRecord> {
    const graded = await this.engine.gradeItem(item);
    return this.toRecord({ kind: 'graded', graded, line: 0 });
  }

  /** Results in input order; invalid input records come through as `status: "invalid"` lines. */
  async *gradeStream(records: AsyncIterable<ImportRecord>): AsyncGenerator<ResultRecord> {
    for await (const record of this.engine.gradeStream(records)) yield this.toRecord(record);
  }
}
