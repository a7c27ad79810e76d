/**
 * Bradley–Terry strengths from pairwise outcomes: P(i beats j) = pᵢ ÷ (pᵢ + pⱼ), fitted by
 * maximum likelihood with Hunter's (2004) minorization–maximization iteration
 *   pᵢ ← Wᵢ ÷ Σⱼ nᵢⱼ ÷ (pᵢ + pⱼ)
 * (Wᵢ: i's wins, nᵢⱼ: comparisons of i and j), then scaled to sum to 1. A tie counts half a win
 * to each side. The maximum-likelihood estimate exists only when the graph of "i won against j
 * at least once" is strongly connected (Ford 1957): otherwise some strength runs off to 0 or
 * infinity, and the fit is reported as undefined (null), never as a guess.
 */

export interface PairOutcome {
  first: number;
  second: number;
  /** 1: `first` won, 0: `second` won, 0.5: a tie. */
  firstScore: number;
}

export interface BradleyTerryFit {
  /** Strengths pᵢ, summing to 1 (P(i beats j) = pᵢ ÷ (pᵢ + pⱼ)). */
  strengths: number[];
  iterations: number;
  converged: boolean;
}

/** Whether every player can reach every other through "won at least once against" edges. */
function stronglyConnected(players: number, beat: ReadonlyArray<ReadonlySet<number>>): boolean {
  if (players <= 1) return true;
  const reach = (edges: (node: number) => Iterable<number>) => {
    const seen = new Set<number>([0]);
    const stack = [0];
    while (stack.length > 0) {
      const node = stack.pop()!;
      for (const next of edges(node)) {
        if (!seen.has(next)) {
          seen.add(next);
          stack.push(next);
        }
      }
    }
    return seen.size === players;
  };
  const beaten = Array.from({ length: players }, () => new Set<number>());
  beat.forEach((losers, winner) => {
    for (const loser of losers) beaten[loser].add(winner);
  });
  return reach((node) => beat[node]) && reach((node) => beaten[node]);
}

/**
 * The fit for `players` players (indices 0…players−1), or null where the estimate does not
 * exist (see above). Stops when no strength moves by more than `tolerance` (relative).
 */
export function bradleyTerry(players: number, outcomes: readonly PairOutcome[], options: { maxIterations?: number; tolerance?: number } = {}): BradleyTerryFit | null {
  if (players < 2) return null;
  const wins = new Array<number>(players).fill(0);
  const games = Array.from({ length: players }, () => new Array<number>(players).fill(0));
  const beat = Array.from({ length: players }, () => new Set<number>());
  for (const { first, second, firstScore } of outcomes) {
    if (first === second || !(firstScore >= 0 && firstScore <= 1)) throw new RangeError(`not a comparison of two players: ${first} vs ${second} scored ${firstScore}`);
    wins[first] += firstScore;
    wins[second] += 1 - firstScore;
    games[first][second] += 1;
    games[second][first] += 1;
    if (firstScore > 0) beat[first].add(second);
    if (firstScore < 1) beat[second].add(first);
  }
  if (!stronglyConnected(players, beat)) return null;
  const maxIterations = options.maxIterations ?? 10_000;
  const tolerance = options.tolerance ?? 1e-12;
  let strengths = new Array<number>(players).fill(1 / players);
  for (let iteration = 1; iteration <= maxIterations; iteration += 1) {
    const next = strengths.map((strength, player) => {
      let denominator = 0;
      for (let other = 0; other < players; other += 1) {
        if (games[player][other] > 0) denominator += games[player][other] / (strength + strengths[other]);
      }
      return wins[player] / denominator;
    });
    const total = next.reduce((sum, value) => sum + value, 0);
    for (let player = 0; player < players; player += 1) next[player] /= total;
    const moved = next.reduce((largest, value, player) => Math.max(largest, Math.abs(value - strengths[player]) / strengths[player]), 0);
    strengths = next;
    if (moved <= tolerance) return { strengths, iterations: iteration, converged: true };
  }
  return { strengths, iterations: maxIterations, converged: false };
}
