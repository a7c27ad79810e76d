/**
 * Tournament judging within a group (after NeMo Gym's `genrm_compare`): the distinct responses
 * to one prompt are compared in pairs, circular (each with the next: N pairs) or all pairs
 * (N(N−1)/2), each pair in both presentation orders by default, with the pairwise strategy
 * `compare` uses. Each response's comparisons become its criteria (won, tie, lost), so its item
 * score is its win rate (ties and order-inconsistent verdicts count half), and Bradley–Terry
 * strengths are fitted where they are defined.
 */
import { RubricateError, type SerializedError } from '../errors.js';
import type { Criterion, PairLabel, PairwiseItem, Rubric } from '../rubric/schema.js';
import { bradleyTerry, type PairOutcome } from '../statistics/bradley-terry.js';
import { rubricLines } from './holistic.js';
import type { CriterionResult } from './types.js';

export type TournamentPairing = 'circular' | 'all';

/** The comparisons of a tournament among `players`, as [first, second] in presentation order (A, B). */
export function tournamentPairs(order: readonly number[], pairing: TournamentPairing): Array<[number, number]> {
  const players = order.length;
  if (players < 2) return [];
  if (pairing === 'all') {
    const pairs: Array<[number, number]> = [];
    for (let first = 0; first < players; first += 1) for (let second = first + 1; second < players; second += 1) pairs.push([order[first], order[second]]);
    return pairs;
  }
  // Two players have one comparison; a ring of three or more has one per player.
  if (players === 2) return [[order[0], order[1]]];
  return order.map((player, index) => [player, order[(index + 1) % players]]);
}

export const tournamentCriterionId = 'rubric';

/** The one criterion a tournament compares on: the rubric taken as a whole. */
export function tournamentRubric(rubric: Rubric): Rubric {
  return {
    id: `tournament:${rubric.id}`,
    criteria: [
      {
        id: tournamentCriterionId,
        text: `Which response better satisfies the rubric below, taken as a whole? Items carry points: weigh them accordingly; negative items describe pitfalls, and the better response is the one that avoids them.\n\nRubric:\n${rubricLines(rubric)}`,
        points: 1,
        tags: [],
        kind: 'principle',
      },
    ],
  };
}

/** A comparison of two players as the pairwise machinery gives it back (`comparisonFromOrders`). */
export interface TournamentComparison {
  first: number;
  second: number;
  /** A: `first` is better; null: the comparison failed. */
  winner: PairLabel | 'inconsistent' | null;
  consistent: boolean | null;
  error?: SerializedError;
  explanation?: string;
}

/** The pair item of one comparison (`pairToItem` turns it into the item the engine grades). */
export function comparisonPair(groupId: string, base: Omit<PairwiseItem, 'id' | 'responseA' | 'responseB' | 'rubric'>, rubric: Rubric, responses: readonly string[], first: number, second: number): PairwiseItem {
  return { ...base, id: `${groupId}/${first}v${second}`, responseA: responses[first], responseB: responses[second], rubric: tournamentRubric(rubric) };
}

export interface TournamentStanding {
  /** One criterion per comparison the player took part in, in comparison order. */
  criteria: CriterionResult[];
  /** Share of its comparisons the player won (ties and inconsistent verdicts half); null when one failed. */
  winRate: number | null;
  /** Bradley–Terry strength (the players' strengths sum to 1); null where the fit is undefined. */
  bradleyTerry: number | null;
  /** Share of its comparisons whose two presentation orders agreed; null with one order. */
  positionConsistency: number | null;
}

function scoreOf(winner: PairLabel | 'inconsistent', asFirst: boolean): { value: number; label: string } {
  if (winner === 'tie') return { value: 0.5, label: 'tie' };
  if (winner === 'inconsistent') return { value: 0.5, label: 'inconsistent' };
  const won = (winner === 'A') === asFirst;
  return { value: won ? 1 : 0, label: won ? 'win' : 'loss' };
}

/**
 * Each player's standing from the comparisons. `labelOf(player)` names a player in criterion
 * ids and texts (its place in the group). A failed comparison is an error criterion of both
 * players: their win rates are then undefined, never computed over the comparisons that worked.
 */
export function foldTournament(players: number, comparisons: readonly TournamentComparison[], labelOf: (player: number) => string): TournamentStanding[] {
  const outcomes: PairOutcome[] = [];
  const standings = Array.from({ length: players }, () => ({ criteria: [] as CriterionResult[], values: [] as number[], failed: false, both: 0, agreed: 0 }));
  for (const comparison of comparisons) {
    for (const [player, other, asFirst] of [
      [comparison.first, comparison.second, true],
      [comparison.second, comparison.first, false],
    ] as const) {
      const standing = standings[player];
      const criterion: Criterion = { id: `vs-${labelOf(other)}`, text: `compared with response ${labelOf(other)} of the group`, points: 1, tags: [], kind: 'principle' };
      if (comparison.winner === null) {
        standing.failed = true;
        const error = comparison.error ?? new RubricateError('INTERNAL', 'comparison failed without a reason').toJSON();
        standing.criteria.push({ criterion, source: 'judge', status: 'error', error });
        continue;
      }
      const { value, label } = scoreOf(comparison.winner, asFirst);
      standing.values.push(value);
      if (comparison.consistent !== null) {
        standing.both += 1;
        if (comparison.consistent) standing.agreed += 1;
      }
      standing.criteria.push({ criterion, source: 'judge', status: 'ok', verdict: { met: value === 1, value, label, source: 'judge', ...(comparison.explanation ? { explanation: comparison.explanation } : {}) } });
    }
    if (comparison.winner !== null) outcomes.push({ first: comparison.first, second: comparison.second, firstScore: scoreOf(comparison.winner, true).value });
  }
  const failed = standings.some((standing) => standing.failed);
  const fit = failed ? null : bradleyTerry(players, outcomes);
  return standings.map((standing, player) => ({
    criteria: standing.criteria,
    winRate: standing.failed || standing.values.length === 0 ? null : standing.values.reduce((sum, value) => sum + value, 0) / standing.values.length,
    bradleyTerry: fit ? fit.strengths[player] : null,
    positionConsistency: standing.both > 0 ? standing.agreed / standing.both : null,
  }));
}
