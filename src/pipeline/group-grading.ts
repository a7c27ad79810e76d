/**
 * Grading the responses to one prompt together (`--mode listwise` and `--mode tournament`):
 * which items form a group, and how a group becomes judge work and back one graded item per
 * response. Listwise: each distinct response once, all in one call (split only to fit the
 * judge), checks run locally per response, a hard-rule gate as two listwise rounds (hard rules,
 * then the rest for the responses it let through). Tournament: the distinct responses compared
 * in pairs with the pairwise strategy, folded into win rates and Bradley–Terry strengths.
 * Results stay one line per response, in input order; the group's usage is on its first line.
 * Bounded before anything is spent: a group over `--max-group-size`, or a tournament whose pairs
 * would exceed `--max-tournament-pairs`, is LIMIT_EXCEEDED for each of its items, and a
 * tournament's pairs are made as they are compared, a window at a time.
 */
import type { GradedItem } from '../engine/engine.js';
import { addUsage, emptyUsage, type Usage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import { holisticCriterion } from '../grading/holistic.js';
import { foldListwise, listwiseItem, presentationOrders, type ListwiseGroup } from '../grading/listwise.js';
import { combineOrders, comparisonOf, pairToItem, type PairOrder } from '../grading/pairwise.js';
import { comparisonPair, tournamentCriterionId, tournamentPairCount, tournamentPairs, TournamentTally, type TournamentComparison } from '../grading/tournament.js';
import type { CriterionResult } from '../grading/types.js';
import { memoizedRubricHash } from '../rubric/hashing.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Criterion, Item } from '../rubric/schema.js';
import { defaultLimits, settingAt, type GradingPlan, type Limits } from '../spec/run-spec.js';
import { sha256Hex } from '../util/hash.js';
import { mapInOrder } from '../util/ordered-stream.js';

export type GroupMode = 'listwise' | 'tournament';

export interface GroupSettings {
  mode: GroupMode;
  groupBy?: string;
  listwise: 'criteria' | 'holistic';
  tournament: 'circular' | 'all';
  orders: 1 | 2;
  likertLevels: number;
  /** Seeds the presentation shuffle (with the group's content). */
  seed: number;
  /** Most responses in one group (`--max-group-size`). */
  maxGroupSize: number;
  /** Most comparisons one tournament group may take (`--max-tournament-pairs`). */
  maxTournamentPairs: number;
}

/** The group settings of a plan whose mode grades groups; none for the per-item modes. */
export function groupSettingsOf(plan: GradingPlan, limits: Limits = {}): GroupSettings | undefined {
  if (plan.mode !== 'listwise' && plan.mode !== 'tournament') return undefined;
  return {
    maxGroupSize: limits.maxGroupSize ?? defaultLimits.maxGroupSize,
    maxTournamentPairs: limits.maxTournamentPairs ?? defaultLimits.maxTournamentPairs,
    mode: plan.mode,
    ...(plan.groupBy !== undefined ? { groupBy: plan.groupBy } : {}),
    listwise: plan.listwise ?? 'criteria',
    tournament: plan.tournament ?? 'all',
    orders: plan.orders ?? (plan.mode === 'tournament' ? 2 : 1),
    likertLevels: plan.likertLevels ?? 10,
    seed: plan.sampling?.seed ?? 0,
  };
}

/** What makes two items gradable together: the same prompt, rubric and reference. */
function contentKey(item: Item): string {
  let material = `rubricate-group/1\u0000${memoizedRubricHash(item.rubric)}\u0000`;
  for (const message of item.prompt) material += `${message.role}\u0000${message.content}\u0000`;
  return sha256Hex(`${material}\u0001${item.reference ?? '\u0002'}`);
}

/** The value of an item's group field (`--group-by`, a dotted path such as `metadata.prompt_id`), as a string; undefined when absent. */
function fieldValue(item: Item, path: string): string | undefined {
  const value = settingAt(item, path);
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The key that puts an item in its group: its `--group-by` field, else its content. */
export function groupKeyOf(item: Item, groupBy: string | undefined): string {
  if (groupBy === undefined) return `content:${contentKey(item)}`;
  const value = fieldValue(item, groupBy);
  // An item without the field is a group of its own.
  return value === undefined ? `item:${item.id}` : `field:${value}`;
}

/**
 * A key per record for cutting a stream into groups: consecutive records with the same key are
 * one group; an unreadable record is a boundary of its own. The queue producer cuts its chunks
 * only where this key changes, so workers see the same groups as a single process.
 */
export function recordGroupKey(record: ImportRecord, groupBy: string | undefined): string | undefined {
  return record.kind === 'item' ? groupKeyOf(record.item, groupBy) : undefined;
}

/** Leading items `checkGroupField` reads, at most, looking for one with the `--group-by` field. */
const itemsReadForGroupField = 64;

/**
 * A `--group-by` field that no item has is a wrong flag, not a run of groups of one: refused
 * (CONFIG_INVALID) before anything is graded or written, when none of the first items of the
 * input (at most `itemsReadForGroupField`, so the check stays bounded) has it.
 */
export async function checkGroupField(records: AsyncIterable<ImportRecord>, groupBy: string): Promise<void> {
  let items = 0;
  for await (const record of records) {
    if (record.kind !== 'item') continue;
    if (fieldValue(record.item, groupBy) !== undefined) return;
    items += 1;
    if (items >= itemsReadForGroupField) break;
  }
  if (items === 0) return;
  const which = items >= itemsReadForGroupField ? `none of the first ${items} items` : `no item of the ${items} in the input`;
  throw new RubricateError('CONFIG_INVALID', `--group-by ${groupBy}: ${which} has this field; name a field the items carry (e.g. metadata.prompt_id), or leave --group-by out to group items in a row with the same prompt, rubric and reference`, { field: 'group-by' });
}

/**
 * With `--group-by`, an item without the field is an invalid record naming the field (and the
 * input `file` when the caller knows it), never a group of its own.
 */
export async function* withGroupField(records: AsyncIterable<ImportRecord>, groupBy: string, file?: string): AsyncGenerator<ImportRecord> {
  for await (const record of records) {
    if (record.kind !== 'item' || fieldValue(record.item, groupBy) !== undefined) {
      yield record;
      continue;
    }
    const error = new RubricateError('INPUT_INVALID', `item ${record.item.id} has no ${groupBy}, the field --group-by names: without it the item has no group`, { ...(file !== undefined ? { file } : {}), line: record.line, field: groupBy });
    yield { kind: 'invalid', line: record.line, id: record.item.id, error };
  }
}

/** Consecutive records of one group key (see `consecutiveGroups`). */
export interface RecordGroup {
  records: ImportRecord[];
  /** A piece of a group with more records than the bound: none of its items is graded. */
  oversized: boolean;
}

/** The error of a group with more responses than `--max-group-size`, for each of its items. */
export function groupTooLarge(maxGroupSize: number, size?: number): RubricateError {
  return new RubricateError(
    'LIMIT_EXCEEDED',
    `the group has ${size === undefined ? `more than ${maxGroupSize}` : size} responses, over the bound of ${maxGroupSize} (--max-group-size): it is not graded; split it, or raise --max-group-size`,
    { field: 'responses', limit: 'max-group-size', maximum: maxGroupSize },
  );
}

/**
 * Records in groups of consecutive items with the same key; an unreadable record stands alone,
 * in its place. A group is never held beyond `maxGroupSize` records: a longer one comes in
 * pieces of at most that many, each marked `oversized` (from the piece that passes the bound on).
 */
export async function* consecutiveGroups(source: AsyncIterable<ImportRecord>, groupBy: string | undefined, maxGroupSize = Number.POSITIVE_INFINITY): AsyncGenerator<RecordGroup> {
  let group: ImportRecord[] = [];
  let key: string | undefined;
  let oversized = false;
  const records = groupBy === undefined ? source : withGroupField(source, groupBy);
  for await (const record of records) {
    const next = recordGroupKey(record, groupBy);
    if (group.length > 0 && (next === undefined || next !== key)) {
      yield { records: group, oversized };
      group = [];
      oversized = false;
    } else if (group.length >= maxGroupSize) {
      // One more of the same group: what was held goes out unread, and so does the rest of the group.
      oversized = true;
      yield { records: group, oversized };
      group = [];
    }
    group.push(record);
    key = next;
    if (next === undefined) {
      yield { records: group, oversized: false };
      group = [];
    }
  }
  if (group.length > 0) yield { records: group, oversized };
}

function groupIdOf(items: readonly Item[], groupBy: string | undefined): string {
  const value = groupBy === undefined ? undefined : fieldValue(items[0], groupBy);
  return value ?? `g_${contentKey(items[0]).slice(0, 16)}`;
}

/** The judge calls `--keep-requests` keeps. */
type JudgeCalls = NonNullable<GradedItem['calls']>;

/** An item not graded, each of its criteria in error with the reason. */
export function failedItem(item: Item, error: RubricateError): GradedItem {
  const serialized = error.toJSON();
  return {
    item,
    status: 'error',
    criteria: item.rubric.criteria.map((criterion): CriterionResult => ({ criterion, source: criterion.check ? 'check' : 'judge', status: 'error', error: serialized })),
    gated: false,
    usage: emptyUsage(),
  };
}

/** Why a member cannot be graded with its group, if it cannot. */
function memberProblem(item: Item, first: Item, groupBy: string | undefined): RubricateError | undefined {
  if (item.images && item.images.length > 0) return new RubricateError('INPUT_INVALID', `item ${item.id} has images, which group judging does not show the judge: grade it in a per-item mode`, { field: 'response' });
  if (item.trajectory) return new RubricateError('INPUT_INVALID', `item ${item.id} is an agent trajectory, which group judging does not read: grade it in a per-item mode`, { field: 'response' });
  if (item !== first && contentKey(item) !== contentKey(first)) {
    return new RubricateError('INPUT_INVALID', `item ${item.id} is grouped with ${first.id} by ${groupBy ?? 'content'} but its prompt, rubric or reference differs: a group shares one prompt and rubric`, { field: groupBy ?? 'prompt' });
  }
  return undefined;
}

/** Why a rubric cannot be judged this way, if it cannot. */
function rubricProblem(item: Item, settings: GroupSettings): RubricateError | undefined {
  const hierarchical = item.rubric.criteria.find((criterion) => criterion.subchecks);
  if (hierarchical) return new RubricateError('INPUT_INVALID', `criterion ${hierarchical.id} has sub-checks, which group judging does not ask: grade this rubric in a per-item mode`, { field: 'rubric.criteria' });
  const perTurn = item.rubric.criteria.find((criterion) => criterion.turn !== undefined && criterion.turn !== 'last');
  if (perTurn) return new RubricateError('INPUT_INVALID', `criterion ${perTurn.id} is graded at one turn of the conversation, which group judging does not do: grade this rubric in a per-item mode`, { field: 'rubric.criteria' });
  const perStep = item.rubric.criteria.find((criterion) => criterion.scope === 'step');
  if (perStep) return new RubricateError('INPUT_INVALID', `criterion ${perStep.id} is graded on each step of the trajectory, which group judging does not do: grade this rubric in a per-item mode`, { field: 'rubric.criteria' });
  if (settings.mode === 'tournament') {
    const checked = item.rubric.criteria.find((criterion) => criterion.check);
    if (checked || item.rubric.gate) {
      return new RubricateError('INPUT_INVALID', `a tournament compares responses on the rubric as a whole; ${checked ? `criterion ${checked.id} is a deterministic check` : 'the rubric has a hard-rule gate'}: use --mode listwise for it`, { field: 'rubric' });
    }
  }
  return undefined;
}

export interface GroupGradingParts {
  /** Grades an item's criteria with the run's judges (a jury merged), emitting no item event. */
  judge(item: Item): Promise<GradedItem>;
  /** Runs an item's deterministic checks locally (its rubric holds only checks). */
  checks(item: Item): Promise<GradedItem>;
  /** Comparisons of one tournament in flight at most (their pairs are made as they start). */
  comparisonWindow: number;
}

interface Standing {
  criteria: Map<string, CriterionResult>;
  gated: boolean;
  positionConsistency?: number | null;
  bradleyTerry?: number | null;
}

/** Grades groups of items with the run's judges, as `settings` say. */
export class GroupGrading {
  constructor(
    readonly settings: GroupSettings,
    private readonly parts: GroupGradingParts,
  ) {}

  /** One graded item per member, in order (`id` names the group, else its field or content); members that cannot be graded with the group are errors of their own. */
  /**
   * Why a group cannot be graded within the bounds, found before anything is spent on it: more
   * items than `maxGroupSize`, or (tournament) more comparisons among its distinct responses than
   * `maxTournamentPairs`.
   */
  limitProblem(items: readonly Item[]): RubricateError | undefined {
    if (items.length > this.settings.maxGroupSize) return groupTooLarge(this.settings.maxGroupSize, items.length);
    if (this.settings.mode !== 'tournament') return undefined;
    const players = new Set(items.map((item) => item.response)).size;
    const pairs = tournamentPairCount(players, this.settings.tournament);
    if (pairs <= this.settings.maxTournamentPairs) return undefined;
    return new RubricateError(
      'LIMIT_EXCEEDED',
      `a tournament of ${players} responses (--tournament ${this.settings.tournament}) takes ${pairs} comparisons, over the bound of ${this.settings.maxTournamentPairs} (--max-tournament-pairs): it is not graded; use --tournament circular, split the group, or raise --max-tournament-pairs`,
      { field: 'responses', limit: 'max-tournament-pairs', maximum: this.settings.maxTournamentPairs, pairs },
    );
  }

  async gradeGroup(items: readonly Item[], id?: string): Promise<GradedItem[]> {
    if (items.length === 0) return [];
    const overBound = this.limitProblem(items);
    if (overBound) return items.map((item) => failedItem(item, overBound));
    const first = items[0];
    const groupId = id ?? groupIdOf(items, this.settings.groupBy);
    const graded = new Array<GradedItem | undefined>(items.length);
    const members: number[] = [];
    const rubricIssue = rubricProblem(first, this.settings);
    items.forEach((item, index) => {
      const problem = rubricIssue ?? memberProblem(item, first, this.settings.groupBy);
      if (problem) graded[index] = failedItem(item, problem);
      else members.push(index);
    });
    if (members.length > 0) {
      const responses: string[] = [];
      const playerOf = new Map<string, number>();
      for (const index of members) if (!playerOf.has(items[index].response)) playerOf.set(items[index].response, responses.push(items[index].response) - 1);
      if (this.settings.mode === 'tournament' && responses.length < 2) {
        if (members.length === 1) {
          const error = new RubricateError('INPUT_INVALID', `a tournament compares the responses to one prompt; group ${groupId} has a single response`, { field: 'response' });
          graded[members[0]] = failedItem(items[members[0]], error);
        } else {
          // Every response the same: a tie by definition, with no judge call (and no spread to learn from).
          const criterion: Criterion = { id: 'identical', text: 'every response of the group is the same: a tie', points: 1, tags: [], kind: 'principle' };
          members.forEach((index) => {
            graded[index] = {
              item: items[index],
              status: 'ok',
              criteria: [{ criterion, source: 'check', status: 'ok', verdict: { met: false, value: 0.5, label: 'tie', source: 'check', explanation: criterion.text } }],
              gated: false,
              usage: emptyUsage(),
              group: { id: groupId, members: items.length, index, ...(this.settings.orders === 2 ? { positionConsistency: null } : {}), bradleyTerry: null },
            };
          });
        }
        return graded.map((entry) => entry!);
      }
      const usage = emptyUsage();
      // --keep-requests: the group's calls, kept with its usage on its first line.
      const calls: JudgeCalls = [];
      const standings = this.settings.mode === 'listwise' ? await this.listwise(first, groupId, responses, usage, calls) : await this.tournament(first, groupId, responses, members, playerOf, items, usage, calls);
      members.forEach((index, position) => {
        const item = items[index];
        const standing = standings[playerOf.get(item.response)!];
        const criteria = this.settings.mode === 'tournament' ? [...standing.criteria.values()] : judgedRubric(item, this.settings).map((criterion) => standing.criteria.get(criterion.id)!);
        const status = criteria.some((result) => result.status === 'error') && !standing.gated ? 'error' : 'ok';
        graded[index] = {
          item,
          status,
          criteria,
          gated: standing.gated,
          // The group's judge work is one piece: counted once, on its first line.
          usage: position === 0 ? usage : emptyUsage(),
          ...(position === 0 && calls.length > 0 ? { calls } : {}),
          group: {
            id: groupId,
            members: items.length,
            index,
            ...(this.settings.orders === 2 ? { positionConsistency: standing.positionConsistency ?? null } : {}),
            ...(this.settings.mode === 'tournament' ? { bradleyTerry: standing.bradleyTerry ?? null } : {}),
          },
        };
      });
    }
    return graded.map((entry) => entry!);
  }

  /** Listwise rounds: checks per response; with a hard-rule gate, hard rules first, then the rest for the responses it let through. */
  private async listwise(first: Item, groupId: string, responses: string[], usage: Usage, calls: JudgeCalls): Promise<Standing[]> {
    const standings: Standing[] = responses.map(() => ({ criteria: new Map(), gated: false }));
    const tally = { compared: responses.map(() => 0), agreed: responses.map(() => 0) };
    const rubric = judgedRubric(first, this.settings);
    const checks = rubric.filter((criterion) => criterion.check);
    if (checks.length > 0) {
      await Promise.all(
        responses.map(async (response, player) => {
          const checked = await this.parts.checks({ ...first, response, rubric: { ...first.rubric, criteria: checks, gate: undefined } });
          for (const result of checked.criteria) standings[player].criteria.set(result.criterion.id, result);
        }),
      );
    }
    const judged = rubric.filter((criterion) => !criterion.check);
    const round = async (criteria: Criterion[], players: number[]) => {
      if (criteria.length === 0 || players.length === 0) return;
      const group: ListwiseGroup = { id: groupId, prompt: first.prompt, ...(first.reference !== undefined ? { reference: first.reference } : {}), responses: players.map((player) => responses[player]), orders: [], criteria };
      group.orders = presentationOrders(group, this.settings.orders, this.settings.seed);
      const graded = await this.parts.judge(listwiseItem(group));
      addUsage(usage, graded.usage);
      if (graded.calls) calls.push(...graded.calls);
      const folded = foldListwise(group, new Map(graded.criteria.map((result) => [result.criterion.id, result])));
      folded.forEach((response, local) => {
        const player = players[local];
        for (const [id, result] of response.criteria) standings[player].criteria.set(id, result);
        tally.compared[player] += response.orders.compared;
        tally.agreed[player] += response.orders.agreed;
      });
    };
    const everyone = responses.map((_, player) => player);
    if (first.rubric.gate === 'hard_rules' && this.settings.listwise === 'criteria') {
      await round(judged.filter((criterion) => criterion.kind === 'hard_rule'), everyone);
      for (const standing of standings) {
        standing.gated = rubric.some((criterion) => {
          const result = standing.criteria.get(criterion.id);
          return criterion.kind === 'hard_rule' && result?.status === 'ok' && result.verdict?.met === false;
        });
      }
      const principles = judged.filter((criterion) => criterion.kind !== 'hard_rule');
      for (const standing of standings.filter((entry) => entry.gated)) {
        for (const criterion of principles) standing.criteria.set(criterion.id, { criterion, source: 'judge', status: 'skipped', skipReason: 'gated' });
      }
      await round(
        principles,
        everyone.filter((player) => !standings[player].gated),
      );
    } else {
      await round(judged, everyone);
    }
    standings.forEach((standing, player) => {
      if (this.settings.orders === 2) standing.positionConsistency = tally.compared[player] > 0 ? tally.agreed[player] / tally.compared[player] : null;
    });
    return standings;
  }

  /** The distinct responses compared in pairs (each pair in both orders unless `orders` is 1). */
  private async tournament(first: Item, groupId: string, responses: string[], members: number[], playerOf: Map<string, number>, items: readonly Item[], usage: Usage, calls: JudgeCalls): Promise<Standing[]> {
    const [order] = presentationOrders({ prompt: first.prompt, responses, reference: first.reference }, 1, this.settings.seed);
    const base = { prompt: first.prompt, ...(first.reference !== undefined ? { metadata: { reference: first.reference } } : {}) };
    // A player is named by the first place in the group where its response stands (from 1).
    const label = new Map<number, string>();
    for (const index of members) if (!label.has(playerOf.get(items[index].response)!)) label.set(playerOf.get(items[index].response)!, String(index + 1));
    const compare = async ([a, b]: [number, number]): Promise<TournamentComparison> => {
      const pairItem = pairToItem(comparisonPair(groupId, base, first.rubric, responses, a, b), { swap: this.settings.orders === 2, overall: false });
      const graded = await this.parts.judge(pairItem);
      addUsage(usage, graded.usage);
      if (graded.calls) calls.push(...graded.calls);
      const byOrder: Partial<Record<PairOrder, CriterionResult>> = {};
      for (const result of graded.criteria) byOrder[comparisonOf(result.criterion).order] = result;
      const combined = combineOrders(byOrder, tournamentCriterionId, '');
      const explanation = Object.values(combined.explanations ?? {}).join(' / ');
      return { first: a, second: b, winner: combined.winner, consistent: combined.consistent, ...(combined.error ? { error: combined.error } : {}), ...(explanation ? { explanation } : {}) };
    };
    // Pairs are made as comparisons start, a window at a time, and folded as they come back.
    const tally = new TournamentTally(responses.length, (player) => label.get(player)!);
    for await (const comparison of mapInOrder(tournamentPairs(order, this.settings.tournament), compare, { window: this.parts.comparisonWindow })) tally.add(comparison);
    return tally.result().map((standing) => ({
      criteria: new Map(standing.criteria.map((result) => [result.criterion.id, result])),
      gated: false,
      positionConsistency: standing.positionConsistency,
      bradleyTerry: standing.bradleyTerry,
    }));
  }
}

/** The criteria a group's results list for each response: the rubric's, or its one holistic Likert criterion. */
function judgedRubric(item: Item, settings: GroupSettings): Criterion[] {
  return settings.listwise === 'holistic' ? [holisticCriterion(item.rubric, settings.likertLevels)] : item.rubric.criteria;
}
