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

/** How many comparisons a tournament among `players` takes: what `tournamentPairs` yields, counted without making one. */
export function tournamentPairCount(players: number, pairing: TournamentPairing): number {
  if (players < 2) return 0;
  if (pairing === 'all') return (players * (players - 1)) / 2;
  return players === 2 ? 1 : players;
}

/**
 * The comparisons of a tournament among `players`, as [first, second] in presentation order
 * (A, B), made one at a time as they are taken: all pairs of N players are N(N−1)/2, never held at once.
 */
export function* tournamentPairs(order: readonly number[], pairing: TournamentPairing): Generator<[number, number]> {
  const players = order.length;
  if (players < 2) return;
  if (pairing === 'all') {
    for (let first = 0; first < players; first += 1) for (let second = first + 1; second < players; second += 1) yield [order[first], order[second]];
    return;
  }
  // Two players have one comparison; a ring of three or more has one per player.
  if (players === 2) {
    yield [order[0], order[1]];
    return;
  }
  for (let index = 0; index < players; index += 1) yield [order[index], order[(index + 1) % players]];
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
 * Each player's standing, folded one comparison at a time as they come back (`add`), so a
 * tournament keeps its standings, not its comparisons. `labelOf(player)` names a player in
 * criterion ids and texts (its place in the group). A failed comparison is an error criterion of
 * both players: their win rates are then undefined, never computed over the comparisons that worked.
 */
export class TournamentTally {
  private readonly outcomes: PairOutcome[] = [];
  private readonly standings: Array<{ criteria: CriterionResult[]; sum: number; count: number; failed: boolean; both: number; agreed: number }>;

  constructor(
    private readonly players: number,
    private readonly labelOf: (player: number) => string,
  ) {
    this.standings = Array.from({ length: players }, () => ({ criteria: [], sum: 0, count: 0, failed: false, both: 0, agreed: 0 }));
  }

  add(comparison: TournamentComparison): void {
    for (const [player, other, asFirst] of [
      [comparison.first, comparison.second, true],
      [comparison.second, comparison.first, false],
    ] as const) {
      const standing = this.standings[player];
      const criterion: Criterion = { id: `vs-${this.labelOf(other)}`, text: `compared with response ${this.labelOf(other)} of the group`, points: 1, tags: [], kind: 'principle' };
      if (comparison.winner === null) {
        standing.failed = true;
        const error = comparison.error ?? new RubricateError('INTERNAL', 'comparison failed without a reason').toJSON();
        standing.criteria.push({ criterion, source: 'judge', status: 'error', error });
        continue;
      }
      const { value, label } = scoreOf(comparison.winner, asFirst);
      standing.sum += value;
      standing.count += 1;
      if (comparison.consistent !== null) {
        standing.both += 1;
        if (comparison.consistent) standing.agreed += 1;
      }
      standing.criteria.push({ criterion, source: 'judge', status: 'ok', verdict: { met: value === 1, value, label, source: 'judge', ...(comparison.explanation ? { explanation: comparison.explanation } : {}) } });
    }
    if (comparison.winner !== null) this.outcomes.push({ first: comparison.first, second: comparison.second, firstScore: scoreOf(comparison.winner, true).value });
  }

  result(): TournamentStanding[] {
    const failed = this.standings.some((standing) => standing.failed);
    const fit = failed ? null : bradleyTerry(this.players, this.outcomes);
    return this.standings.map((standing, player) => ({
      criteria: standing.criteria,
      winRate: standing.failed || standing.count === 0 ? null : standing.sum / standing.count,
      bradleyTerry: fit ? fit.strengths[player] : null,
      positionConsistency: standing.both > 0 ? standing.agreed / standing.both : null,
    }));
  }
}
