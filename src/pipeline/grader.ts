/**
 * The one grading pipeline the CLI, the library and the HTTP server share:
 * items → strategy tasks → engine (checks, store, dedupe, limiter, judge, parse) →
 * verdicts → scoring → result records. Juries run one engine per member and merge. What each
 * mode reads and makes is in `grading-modes.ts`.
 */
import type { GradingEngine, GradedItem, GradedRecord } from '../engine/engine.js';
import { RubricateError } from '../errors.js';
import { holisticItem } from '../grading/holistic.js';
import { hasConditions } from '../rubric/conditions.js';
import { consecutiveGroups, failedItem, GroupGrading, groupSettingsOf, groupTooLarge } from './group-grading.js';
import type { GradingStrategy } from '../grading/types.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Item } from '../rubric/schema.js';
import { hasPerTurnCriteria } from '../rubric/turns.js';
import { hasStepCriteria } from '../rubric/steps.js';
import { getScoring } from '../scoring/registry.js';
import type { Scoring } from '../scoring/types.js';
import type { Calibration } from '../spec/calibration.js';
import { countingCannotAssess } from '../scoring/cannot-assess.js';
import { defaultLimits, type Limits } from '../spec/run-spec.js';
import { JuryAgreement, mergeJury, type JuryAggregate } from './jury.js';
import { CascadeTally, gradeInCascade, type CascadeStage } from './cascade.js';
import { modelsOf, SelfPreferenceGuard } from './self-preference.js';
import { gradeByParts } from './steps.js';
import { toResultRecord, type JudgeInfo, type ResultRecord } from '../results/results.js';
import { defaultScoringName } from './defaults.js';
import { mapInOrder } from '../util/ordered-stream.js';
import type { GradingMode } from './grading-modes.js';
import { checkedLimits, createCascade, createMembers, graderJudgeInfo, gradingSetup, refusedItem, selfPreferenceGuardOf, unsampledItem, type Cascade, type GraderOptions, type Member } from './grader-setup.js';

export type { GraderOptions } from './grader-setup.js';
export { createStrategy, type GradingMode } from './grading-modes.js';

/**
 * Grades items with a judge (or a jury, or a cascade) under one run spec: item by item, as a stream, or by group.
 *
 * @example
 * ```ts
 * import { Grader, createJudge, normalizeItem } from 'rubricate';
 * const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }), scoring: 'weighted_mean' });
 * const record = await grader.gradeItem(normalizeItem({ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } }));
 * ```
 */
export class Grader {
  readonly scoring: Scoring;
  readonly strategy: GradingStrategy;
  readonly judgeInfo: JudgeInfo | undefined;
  readonly mode: GradingMode;
  /** Jury agreement so far (when there are several members). */
  readonly agreement: JuryAgreement | undefined;
  private readonly members: Member[];
  private readonly omitText: boolean;
  private readonly calibration: Calibration | undefined;
  private readonly aggregate: JuryAggregate;
  private readonly holisticLevels: number;
  private readonly onEvent: GraderOptions['onEvent'];
  /** Cascades: the later judges' engines and the rule that escalates to them. */
  private readonly cascade: Cascade | undefined;
  /** Escalations and deciding judges so far (cascades only). */
  readonly cascadeTally: CascadeTally | undefined;
  /** The self-preference guard (absent when no model under test can be known: no judge). */
  readonly selfPreference: SelfPreferenceGuard | undefined;
  /** Listwise and tournament judging: groups of items graded together. */
  private readonly groups: GroupGrading | undefined;
  /** The bounds on work from input size (`--max-group-size`, …), as given. */
  readonly limits: Limits;

  constructor(options: GraderOptions) {
    const setup = gradingSetup(options);
    const { plan, samples } = setup;
    this.mode = setup.mode;
    this.strategy = setup.strategy;
    this.scoring = countingCannotAssess(typeof options.scoring === 'object' ? options.scoring : getScoring(options.scoring ?? defaultScoringName));
    this.omitText = options.omitText ?? false;
    this.calibration = options.calibration;
    this.aggregate = setup.jury.aggregate ?? 'majority';
    this.holisticLevels = plan.likertLevels ?? 10;
    this.onEvent = options.onEvent;
    this.limits = checkedLimits(options.limits, samples, setup.calls.maxAttempts);
    this.members = createMembers(options, setup);
    this.cascade = createCascade(options, setup, this.members.length > 1);
    this.cascadeTally = this.cascade ? new CascadeTally() : undefined;
    this.selfPreference = selfPreferenceGuardOf(options, setup);
    this.agreement = this.members.length > 1 ? new JuryAgreement(this.members.map((member) => member.info)) : undefined;
    const groupSettings = options.strategy ? undefined : groupSettingsOf(plan, this.limits);
    // A group's synthetic item goes to the members directly: the guard has looked at each response's author already.
    this.groups = groupSettings ? new GroupGrading(groupSettings, { judge: (item) => this.gradeByMembers(item), checks: (item) => this.members[0].engine.gradeItem(item), comparisonWindow: Math.max(64, this.members[0].engine.concurrency * 4) }) : undefined;
    this.judgeInfo = graderJudgeInfo(options, setup, this.members, this.aggregate, this.cascade);
  }

  /** Whether groups of items are graded together (listwise and tournament modes). */
  get gradesGroups(): boolean {
    return this.groups !== undefined;
  }

  /** The first member's engine (concurrency and queue depth for metrics). */
  get engine(): GradingEngine {
    return this.members[0].engine;
  }

  /**
   * Conditional criteria are graded parents first, in waves, by one judge (`per-criterion` or
   * `batched` calls): a mode that asks for the whole rubric at once, a jury (whose members may
   * disagree on a parent) or a cascade (which may overturn a parent after its children were
   * decided) has no one verdict to read a condition from.
   */
  private refuseConditional(item: Item): void {
    if (!hasConditions(item.rubric)) return;
    const why =
      this.mode !== 'per-criterion' && this.mode !== 'batched'
        ? `--mode ${this.mode} grades the rubric's criteria together`
        : this.members.length > 1
          ? 'a jury (several judges or --samples) may disagree on the verdict a condition reads'
          : this.cascade
            ? 'a cascade may overturn a parent\'s verdict after its children were decided'
            : undefined;
    if (why) throw new RubricateError('CONFIG_INVALID', `item ${item.id} has conditional criteria (\`when\`), which are graded parents first by one judge, per criterion or batched: ${why}`, { field: this.mode !== 'per-criterion' && this.mode !== 'batched' ? 'mode' : this.cascade && this.members.length === 1 ? 'cascade-judge' : 'judge' });
  }

  private prepare(item: Item): Item {
    this.refuseConditional(item);
    if (this.mode !== 'holistic') return item;
    const parts = hasPerTurnCriteria(item.rubric) ? 'per-turn' : hasStepCriteria(item.rubric) ? 'step-scoped' : undefined;
    if (parts) throw new RubricateError('CONFIG_INVALID', `item ${item.id} has ${parts} criteria, which --mode holistic cannot grade (it asks one score for the whole rubric)`, { field: 'mode' });
    return holisticItem(item, this.holisticLevels);
  }

  /** One item (or one turn of it) by the grader's own judges: the one judge, or the jury's members merged. */
  private async gradeByMembers(item: Item): Promise<GradedItem> {
    if (this.members.length === 1) return this.members[0].engine.gradeItem(item);
    const gradings = await Promise.all(this.members.map((member) => member.engine.gradeItem(item)));
    const merged = mergeJury(this.members.map((member) => member.info), gradings, this.aggregate);
    this.agreement?.add(item.id, merged.criteria);
    // Each member's calls, in member order, each naming its member.
    if (gradings.some((grading) => grading.calls)) return { ...merged, calls: gradings.flatMap((grading, index) => (grading.calls ?? []).map((call) => ({ ...call, member: this.members[index].info }))) };
    return merged;
  }

  /** One item (or one turn of it) by the judges, through the cascade when there is one. */
  private gradeOnce(item: Item): Promise<GradedItem> {
    if (!this.cascade) return this.gradeByMembers(item);
    const first: CascadeStage = { judge: this.judgeInfo?.id ?? 'none', grade: (whole) => this.gradeByMembers(whole) };
    const later = this.cascade.stages.map((stage): CascadeStage => ({ judge: stage.judge, grade: (part) => stage.engine.gradeItem(part) }));
    return gradeInCascade(item, [first, ...later], this.cascade.rule, this.cascadeTally);
  }

  /**
   * An item's criteria graded (by every jury member, merged; turn by turn for per-turn criteria;
   * through the cascade), before scoring: what pairwise comparison reads. Emits the item's
   * progress event. `models`: who wrote the answers, for the self-preference guard (default the
   * item's `metadata.model`).
   */
  async gradeCriteria(item: Item, models: ReadonlyArray<string | undefined> = modelsOf(item.metadata, ['model'])): Promise<GradedItem> {
    const graded = await this.judgeCriteria(item, models);
    this.onEvent?.({ type: 'item', status: graded.status });
    return graded;
  }

  /** `gradeCriteria` without the item's progress event, behind the self-preference guard. */
  private async judgeCriteria(item: Item, models: ReadonlyArray<string | undefined>): Promise<GradedItem> {
    if (item.sampled?.error) return unsampledItem(item, item.sampled.error);
    this.refuseConditional(item);
    const note = this.selfPreference?.check(models);
    if (note?.policy === 'refuse' && note.relation !== 'unrelated') return { ...refusedItem(item, note), selfPreference: note };
    const graded = await gradeByParts(item, (part) => this.gradeOnce(part), this.limits.maxSteps ?? defaultLimits.maxSteps);
    return note ? { ...graded, selfPreference: note } : graded;
  }

  /**
   * Listwise and tournament modes: a group's items graded together, one graded item each, in
   * order (with their progress events). The self-preference guard looks at each item's author:
   * a refused item leaves the group (the judge never sees its response), the rest are noted.
   */
  private async gradeGroupItems(items: readonly Item[], id?: string): Promise<GradedItem[]> {
    for (const item of items) this.refuseConditional(item);
    const notes = items.map((item) => this.selfPreference?.check(modelsOf(item.metadata, ['model'])));
    const unsampled = (index: number) => items[index].sampled?.error !== undefined;
    const refused = (index: number) => unsampled(index) || (notes[index]?.policy === 'refuse' && notes[index]!.relation !== 'unrelated');
    const kept = items.filter((_item, index) => !refused(index));
    const groupGraded = kept.length > 0 ? await this.groups!.gradeGroup(kept, id) : [];
    let next = 0;
    const graded = items.map((item, index): GradedItem => {
      const note = notes[index];
      if (unsampled(index)) return unsampledItem(item, item.sampled!.error!);
      if (refused(index)) return { ...refusedItem(item, note!), selfPreference: note! };
      const entry = groupGraded[next++];
      return note ? { ...entry, selfPreference: note } : entry;
    });
    for (const entry of graded) this.onEvent?.({ type: 'item', status: entry.status });
    return graded;
  }

  /**
   * The responses to one prompt graded together, one result per item in order: in one
   * listwise call (or a tournament) in those modes, each on its own otherwise. `id` names the group.
   */
  async gradeGroup(items: readonly Item[], id?: string): Promise<ResultRecord[]> {
    if (!this.groups) {
      // The per-item modes would start every item at once: over the bound, LIMIT_EXCEEDED before any judge call.
      const overBound = this.groupLimitProblem(items);
      if (overBound) throw overBound;
      return Promise.all(items.map((item) => this.gradeItem(item)));
    }
    return (await this.gradeGroupItems(items, id)).map((graded) => this.toRecord({ kind: 'graded', graded, line: 0 }));
  }

  /**
   * Why a group of items cannot be graded within the bounds, before anything is spent on it:
   * more items than `--max-group-size` (in every mode: a group request is one piece of work),
   * or a tournament over `--max-tournament-pairs`.
   */
  groupLimitProblem(items: readonly Item[]): RubricateError | undefined {
    if (this.groups) return this.groups.limitProblem(items);
    const bound = this.limits.maxGroupSize ?? defaultLimits.maxGroupSize;
    return items.length > bound ? groupTooLarge(bound, items.length) : undefined;
  }

  /** Counts an input record that could not be read (it is written as `invalid`, in its place). */
  noteInvalid(): void {
    this.onEvent?.({ type: 'item', status: 'invalid' });
  }

  private toRecord(record: GradedRecord): ResultRecord {
    return toResultRecord(record, { judge: this.judgeInfo, scoring: this.scoring, omitText: this.omitText, ...(this.calibration ? { calibration: this.calibration } : {}) });
  }

  async gradeItem(item: Item): Promise<ResultRecord> {
    return (await this.gradeItemWithOrigin(item)).record;
  }

  /**
   * `gradeItem`, also telling whether every verdict was read from the reply store (see
   * `GradedItem.fromStore`; never for a jury, whose agreement counts every grading).
   */
  async gradeItemWithOrigin(item: Item): Promise<{ record: ResultRecord; fromStore: boolean }> {
    // A group mode grades a lone item as a group of one.
    if (this.groups) return { record: this.toRecord({ kind: 'graded', graded: (await this.gradeGroupItems([item]))[0], line: 0 }), fromStore: false };
    const graded = await this.gradeCriteria(this.prepare(item));
    return { record: this.toRecord({ kind: 'graded', graded, line: 0 }), fromStore: graded.fromStore === true };
  }

  /** The engine error that stopped grading (bad credentials, no judge), if any. */
  get fatal(): RubricateError | undefined {
    const engines = [...this.members.map((member) => member.engine), ...(this.cascade?.stages.map((stage) => stage.engine) ?? [])];
    return engines.find((engine) => engine.fatal)?.fatal;
  }

  /**
   * `run` over a stream in input order, with the grader's window: inputs are taken only while
   * the judge has too little queued work to stay busy, and never more than a window ahead of
   * the oldest unfinished one, so memory follows concurrency, not input size. Stops with the
   * error that stopped grading (bad credentials, the circuit breaker).
   */
  inInputOrder<Input, Output>(inputs: AsyncIterable<Input>, run: (input: Input) => Promise<Output>): AsyncGenerator<Output> {
    const concurrency = this.engine.concurrency;
    return mapInOrder(inputs, run, { window: Math.max(64, concurrency * 4), busy: () => this.engine.queuedCalls >= concurrency, stopped: () => this.fatal });
  }

  /** Results in input order (see `inInputOrder`); unreadable records stay in their place as `invalid`. */
  async *gradeStream(records: AsyncIterable<ImportRecord>): AsyncGenerator<ResultRecord> {
    if (this.groups) {
      // Groups are consecutive records of one group key: graded together, written one line per record in place.
      const { groupBy, maxGroupSize } = this.groups.settings;
      const groups = this.inInputOrder(consecutiveGroups(records, groupBy, maxGroupSize), async ({ records: group, oversized }): Promise<GradedRecord[]> => {
        const items = group.flatMap((record) => (record.kind === 'item' ? [record] : []));
        if (items.length === 0) {
          for (const _record of group) this.noteInvalid();
          return group as GradedRecord[];
        }
        if (oversized) {
          // Over the bound: no piece of the group is held whole or graded, each item says why.
          const error = groupTooLarge(maxGroupSize);
          return items.map((record) => {
            this.onEvent?.({ type: 'item', status: 'error' });
            return { kind: 'graded', graded: failedItem(record.item, error), line: record.line };
          });
        }
        const graded = await this.gradeGroupItems(items.map((record) => record.item));
        return graded.map((entry, index) => ({ kind: 'graded', graded: entry, line: items[index].line }));
      });
      for await (const group of groups) for (const record of group) yield this.toRecord(record);
      return;
    }
    const graded = this.inInputOrder(records, async (record): Promise<GradedRecord> => {
      if (record.kind !== 'item' && record.kind !== 'invalid') {
        throw new RubricateError('CONFIG_INVALID', 'gradeStream takes import records ({kind: "item", item, line}, as getItemImporter(format).read(file) yields them); grade() takes plain items');
      }
      if (record.kind === 'invalid') {
        this.noteInvalid();
        return record;
      }
      return { kind: 'graded', graded: await this.gradeCriteria(this.prepare(record.item)), line: record.line };
    });
    for await (const record of graded) yield this.toRecord(record);
  }
}
