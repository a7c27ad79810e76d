/**
 * CaRR's reward for one deep-research trajectory, through the grading engine: the outcome call
 * and the entity call (at once), then, when some rubric is filled and the answer cites pages the
 * history shows, the support call; the arithmetic is `src/scoring/carr.ts`. The request and the
 * answer are the released reward server's (`POST /evaluate`). Where that server answers 0 for a
 * judge that failed, this one answers an error: a judge failure is never a reward.
 */
import { z } from 'zod';
import { GradingEngine, type EngineEvent, type GradedItem } from '../engine/engine.js';
import { RubricateError } from '../errors.js';
import { citationContext, type CarrHistoryMessage } from '../grading/carr-citations.js';
import { createCarrEntityStrategy, createCarrOutcomeStrategy, createCarrSupportStrategy, rubricEntityIds, type CarrStageData } from '../grading/carr.js';
import type { SamplingOptions } from '../grading/types.js';
import type { Judge } from '../judges/types.js';
import type { Criterion, Item } from '../rubric/schema.js';
import { connectRubrics, fillRubric, mixCarrReward, type CarrRubricScore } from '../scoring/carr.js';
import type { CallPolicy } from '../spec/run-spec.js';
import type { ReplyStore } from '../store/types.js';

export const maxCarrRubrics = 256;

/** The released server's request body. */
export const carrRequestSchema = z.object({
  history: z.array(z.looseObject({ role: z.string() })).min(1).max(100_000),
  label: z.string(),
  task_unfinished: z.boolean(),
  remote_env_info: z.looseObject({
    /** The question is the first forbidden search string (the released server's convention). */
    search_forbidden_strs: z.array(z.string()).min(1),
    rubrics: z.array(z.string().min(1)).max(maxCarrRubrics).default([]),
    rubric_reward_ratio: z.number().min(0).max(1).default(0),
  }),
});

export type CarrRequest = z.infer<typeof carrRequestSchema>;

/** The released server's answer (`rubric_scores` keyed by the rubric's index). */
export interface CarrAnswer {
  reward: number;
  outcome_reward: number;
  rubric_reward: number;
  rubric_scores: Record<string, CarrRubricScore>;
}

export interface CarrEvaluatorOptions {
  judge: Judge;
  store?: ReplyStore;
  calls?: CallPolicy;
  sampling?: SamplingOptions;
  /** Engine events of the three stages' judge calls (the service's /metrics). */
  onEvent?: (event: EngineEvent) => void;
  /** False: the fork's `--use-rubric-reward-nobfs` (every supported rubric counts, connected or not). */
  connectivity?: boolean;
}

const zero: CarrAnswer = { reward: 0, outcome_reward: 0, rubric_reward: 0, rubric_scores: {} };

function stageItem(id: string, response: string, criteria: Array<Pick<Criterion, 'id' | 'text'>>, data: CarrStageData): Item {
  return {
    id,
    prompt: [{ role: 'user', content: data.question }],
    response,
    rubric: { id: `carr:${id}`, criteria: criteria.map((criterion) => ({ ...criterion, points: 1, tags: [], kind: 'principle' })) },
    metadata: { carr: data },
  };
}

/** The engine's verdicts by criterion id, or the first criterion error as a thrown error. */
function verdictsOf(graded: GradedItem): Map<string, { met: boolean; explanation?: string }> {
  const failed = graded.criteria.find((result) => result.status === 'error');
  if (failed?.error) throw new RubricateError(failed.error.code, failed.error.message, failed.error.details ?? {});
  return new Map(graded.criteria.map((result) => [result.criterion.id, { met: result.verdict!.met, ...(result.verdict!.explanation !== undefined ? { explanation: result.verdict!.explanation } : {}) }]));
}

export class CarrEvaluator {
  private readonly outcome: GradingEngine;
  private readonly entities: GradingEngine;
  private readonly support: GradingEngine;
  private readonly connectivity: boolean;

  constructor(options: CarrEvaluatorOptions) {
    const sampling = options.sampling ?? { temperature: 0, maxTokens: 4096 };
    const shared = { judge: options.judge, ...(options.store ? { store: options.store } : {}), ...(options.calls ? { calls: options.calls } : {}), ...(options.onEvent ? { onEvent: options.onEvent } : {}) };
    this.outcome = new GradingEngine({ ...shared, strategy: createCarrOutcomeStrategy(sampling) });
    this.entities = new GradingEngine({ ...shared, strategy: createCarrEntityStrategy(sampling) });
    this.support = new GradingEngine({ ...shared, strategy: createCarrSupportStrategy(sampling) });
    this.connectivity = options.connectivity ?? true;
  }

  async evaluate(request: CarrRequest): Promise<CarrAnswer> {
    if (request.task_unfinished) return zero;
    const last = request.history.at(-1)!;
    if (last.role !== 'assistant' || typeof last.content !== 'string') return zero;
    // The judges read the answer without its trailing references section (citations inside it do not count).
    const full = last.content;
    const marker = full.lastIndexOf('## References');
    const response = marker >= 0 ? full.slice(0, marker).trim() : full;
    const question = request.remote_env_info.search_forbidden_strs[0];
    const ratio = request.remote_env_info.rubric_reward_ratio;
    const [outcome, rubric] = await Promise.all([
      ratio < 1 ? this.outcomeReward(response, question, request.label) : Promise.resolve(0),
      ratio > 0 ? this.rubricReward(response, question, request.history as CarrHistoryMessage[], request.remote_env_info.rubrics) : Promise.resolve({ reward: 0, scores: {} }),
    ]);
    return { reward: mixCarrReward(outcome, rubric.reward, ratio), outcome_reward: outcome, rubric_reward: rubric.reward, rubric_scores: rubric.scores };
  }

  private async outcomeReward(response: string, question: string, answer: string): Promise<number> {
    const item = stageItem('outcome', response, [{ id: 'correct', text: 'The final answer matches the reference answer' }], { question, answer });
    return verdictsOf(await this.outcome.gradeItem(item)).get('correct')!.met ? 1 : 0;
  }

  private async rubricReward(response: string, question: string, history: CarrHistoryMessage[], rubrics: string[]): Promise<{ reward: number; scores: Record<string, CarrRubricScore> }> {
    if (rubrics.length === 0) throw new RubricateError('INPUT_INVALID', 'a rubric reward needs rubrics: remote_env_info.rubrics is empty', { field: 'remote_env_info.rubrics' });
    const ids = rubricEntityIds(rubrics);
    const entityItem = stageItem('entities', response, ids.map((id) => ({ id, text: `The identity of <${id}>` })), { question, rubrics });
    const identified = ids.length === 0 ? new Map() : verdictsOf(await this.entities.gradeItem(entityItem));
    const identities = new Map(ids.map((id) => [id, identified.get(id)?.met ? (identified.get(id)!.explanation ?? null) : null]));
    const scores = rubrics.map((rubric) => fillRubric(rubric, identities));
    const record = () => Object.fromEntries(scores.map((score, index) => [String(index), score]));
    const filled = scores.flatMap((score, index) => (score.all_entity_identified ? [{ index, text: score.filled_rubric }] : []));
    if (filled.length === 0) return { reward: 0, scores: record() };
    const context = citationContext(response, history);
    if (context.trim() === '') return { reward: 0, scores: record() };
    const statements = filled.map((rubric, position) => ({ id: `S${position + 1}`, text: rubric.text }));
    const marks = verdictsOf(await this.support.gradeItem(stageItem('support', response, statements, { question, context })));
    filled.forEach((rubric, position) => (scores[rubric.index].is_supported = marks.get(`S${position + 1}`)!.met));
    const reward = connectRubrics(scores, this.connectivity);
    return { reward, scores: record() };
  }
}
