/**
 * A judge on a best-of-N benchmark (RewardBench 2, RM-Bench), scored by the benchmark's own
 * aggregation (`scoring/rewardbench2.ts`, `scoring/rm-bench.ts`), beside the length-only
 * baselines: always the longest response, always the shortest (a judge's score reads against
 * them; picking the longer scores 100% on some RewardBench subsets).
 *
 * The judge rates each response on its own (1 to 10, the criterion below; with
 * `--verdict expected-score` the expected rating), and the ratings are the scores; or, on
 * RewardBench 2, ranks the four responses of a prompt at once (`rank-four`; Ties prompts are
 * rated, as the reference requires). The chosen response's place among the four follows a hash of
 * the prompt id, swapped with the first as the reference does. A set whose judging failed is
 * counted and left out of the scores, never counted as a tie.
 */
import { createHash } from 'node:crypto';
import { RubricateError, type SerializedError } from '../errors.js';
import type { Grader } from '../pipeline/grader.js';
import type { BestOfNImportRecord } from '../rubric/records.js';
import type { BestOfNItem, Criterion, Item } from '../rubric/schema.js';
import { rankFourLetters } from '../grading/rank-four.js';
import { characterCount, type ResultRecord } from '../results/results.js';
import { rewardBench2Report, type RewardBench2Row } from '../scoring/rewardbench2.js';
import { rmBenchReport, winsFromScores } from '../scoring/rm-bench.js';

export type BestOfNBenchmark = 'rewardbench2' | 'rm-bench';
export type BestOfNJudging = 'ratings' | 'rank-four';

/** The criterion each response is rated on. */
export const ratingCriterion: Criterion = {
  id: 'rating',
  text: 'Rate the response as a whole: how well it does what the user asked (correct, helpful, complete and safe), from 1 (worst) to 10 (best).',
  points: 1,
  tags: [],
  kind: 'principle',
  scale: { type: 'ordinal', choices: Array.from({ length: 10 }, (_, index) => ({ label: String(index + 1) })) },
};

/** What the judge ranking four responses is asked. */
const rankCriterion: Criterion = { id: 'best', text: 'Overall quality: which response best does what the user asked', points: 1, tags: [], kind: 'principle' };

/** A set's judgment: a score per response, or (rank-four) whether the chosen one was picked. */
export interface SetJudgment {
  scores?: number[];
  pickedCorrect?: boolean;
  error?: SerializedError;
}

/** Scores of the length baselines: the characters of each response, or their negatives (the shortest wins). */
export function lengthScores(set: BestOfNItem, prefer: 'longer' | 'shorter'): number[] {
  return set.responses.map((response) => (prefer === 'longer' ? characterCount(response) : -characterCount(response)));
}

/** The benchmark's report over the sets judged without error. */
export function benchmarkScores(benchmark: BestOfNBenchmark, sets: readonly BestOfNItem[], judgments: ReadonlyMap<string, SetJudgment>) {
  const judged = sets.filter((set) => judgments.has(set.id) && !judgments.get(set.id)!.error);
  if (benchmark === 'rm-bench') {
    return rmBenchReport(judged.map((set) => {
      const scores = judgments.get(set.id)!.scores!;
      return { id: set.id, domain: set.subset, wins: winsFromScores(scores.slice(0, 3), scores.slice(3)) };
    }));
  }
  return rewardBench2Report(judged.map((set): RewardBench2Row => ({ id: set.id, subset: set.subset, numCorrect: set.correct, ...judgments.get(set.id)! })));
}

/** The benchmark's report for both length baselines. */
export function lengthBaselines(benchmark: BestOfNBenchmark, sets: readonly BestOfNItem[]) {
  const baseline = (prefer: 'longer' | 'shorter') => benchmarkScores(benchmark, sets, new Map(sets.map((set) => [set.id, { scores: lengthScores(set, prefer) }])));
  return { longer: baseline('longer'), shorter: baseline('shorter') };
}

/** Where the chosen response is shown among four: 0 to 3, from the prompt id. */
export function chosenPlace(id: string): number {
  return Number.parseInt(createHash('sha256').update(`rubricate-rank-four\u0000${id}`).digest('hex').slice(0, 8), 16) % 4;
}

/** The four responses as shown: the chosen one swapped with the one at its place (the reference's shuffle). */
export function shownCandidates(set: BestOfNItem): string[] {
  const shown = [...set.responses];
  const place = chosenPlace(set.id);
  [shown[0], shown[place]] = [shown[place], shown[0]];
  return shown;
}

function ratingItems(set: BestOfNItem): Item[] {
  return set.responses.map((response, index) => ({ id: `${set.id}#${index + 1}`, prompt: set.prompt, response, rubric: { id: 'rating-1-10', criteria: [ratingCriterion] } }));
}

/** A response's rating from its results line: the expected rating when asked for, else the label. */
function ratingOf(record: ResultRecord): number | SerializedError {
  const [criterion] = record.criteria;
  if (record.status !== 'ok' || !criterion || criterion.status !== 'ok') return record.error ?? criterion?.error ?? new RubricateError('INTERNAL', 'no rating').toJSON();
  return criterion.expected_score ?? Number(criterion.label);
}

export interface BestOfNRunOptions {
  benchmark: BestOfNBenchmark;
  judging: BestOfNJudging;
  /** Rates single responses (the run's plan). */
  rater: Grader;
  /** Ranks four at once (rank-four only). */
  ranker?: Grader;
  onInvalid?: (error: RubricateError) => void;
}

export interface BestOfNRunReport {
  benchmark: BestOfNBenchmark;
  run: { judging: BestOfNJudging; sets: number; invalid_rows: number; judged: number; errors: number; problems: SerializedError[] };
  scores: ReturnType<typeof benchmarkScores>;
  baselines: ReturnType<typeof lengthBaselines>;
  /** Each set's judgment, for auditing. */
  judgments: Array<{ id: string; subset: string } & SetJudgment>;
}

/** Reads the sets, has the judge rate (or rank) them, and scores judge and baselines. */
export async function runBestOfNMeta(records: AsyncIterable<BestOfNImportRecord>, options: BestOfNRunOptions): Promise<BestOfNRunReport> {
  const sets: BestOfNItem[] = [];
  const problems: SerializedError[] = [];
  let invalidRows = 0;
  for await (const record of records) {
    if (record.kind === 'invalid') {
      invalidRows += 1;
      options.onInvalid?.(record.error);
      if (problems.length < 50) problems.push(record.error.toJSON());
      continue;
    }
    sets.push(record.set);
  }
  if (sets.length === 0) throw new RubricateError('INPUT_INVALID', 'no set to judge');
  const ranks = (set: BestOfNItem) => options.judging === 'rank-four' && set.subset.toLowerCase() !== 'ties';
  if (options.judging === 'rank-four' && (options.benchmark !== 'rewardbench2' || !options.ranker)) throw new RubricateError('CONFIG_INVALID', '--judging rank-four is RewardBench 2\'s: rate each response for RM-Bench', { field: 'judging' });
  const unfit = sets.find((set) => ranks(set) && set.responses.length !== 4);
  if (unfit) throw new RubricateError('INPUT_INVALID', `set ${unfit.id} has ${unfit.responses.length} responses: ranking takes four`, { field: 'rejected' });
  const judgments = new Map<string, SetJudgment>();
  // Ratings, in input order through the rater's window.
  async function* rated() {
    for (const set of sets) if (!ranks(set)) for (const item of ratingItems(set)) yield item;
  }
  const ratings = new Map<string, Array<number | SerializedError>>();
  for await (const record of options.rater.inInputOrder(rated(), (item) => options.rater.gradeItem(item))) {
    const setId = record.id.slice(0, record.id.lastIndexOf('#'));
    ratings.set(setId, [...(ratings.get(setId) ?? []), ratingOf(record)]);
  }
  for (const [id, values] of ratings) {
    const error = values.find((value): value is SerializedError => typeof value !== 'number');
    judgments.set(id, error ? { error } : { scores: values as number[] });
  }
  if (options.ranker) {
    const ranker = options.ranker;
    async function* ranked() {
      for (const set of sets) if (ranks(set)) yield set;
    }
    for await (const { set, record } of ranker.inInputOrder(ranked(), async (set) => ({ set, record: await ranker.gradeItem({ id: set.id, prompt: set.prompt, response: '', rubric: { id: 'rank-four', criteria: [rankCriterion] }, metadata: { candidates: shownCandidates(set) } }) }))) {
      const [criterion] = record.criteria;
      if (record.status !== 'ok' || !criterion?.label) judgments.set(set.id, { error: record.error ?? criterion?.error ?? new RubricateError('INTERNAL', 'no pick').toJSON() });
      else judgments.set(set.id, { pickedCorrect: criterion.label === rankFourLetters[chosenPlace(set.id)] });
    }
  }
  const errors = [...judgments.values()].filter((judgment) => judgment.error);
  for (const judgment of errors) if (problems.length < 50) problems.push(judgment.error!);
  return {
    benchmark: options.benchmark,
    run: { judging: options.judging, sets: sets.length, invalid_rows: invalidRows, judged: sets.length - errors.length, errors: errors.length, problems },
    scores: benchmarkScores(options.benchmark, sets, judgments),
    baselines: lengthBaselines(options.benchmark, sets),
    judgments: sets.map((set) => ({ id: set.id, subset: set.subset, ...judgments.get(set.id) })),
  };
}
