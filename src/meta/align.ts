/**
 * Aligning a judge to human labels (`rubricate align`): from a results file and its labels,
 * an alignment (`spec/alignment.ts`) that makes the judge agree more with the labels, and the
 * evidence on items it never learnt from.
 *
 * 1. The labelled items are split into train and test, by text (items with the same last user
 *    message and response stay on one side, however many ids they have), seeded and stratified
 *    (by rubric and by whether most of the labels say met). Nothing from a test item reaches a
 *    prompt other than its own grading, nor any choice: examples, rewordings, their keeping,
 *    the calibrator and its threshold are all decided on train.
 * 2. Every labelled item is graded by the judge as it is (the "before": replies the results
 *    came from are served by the store).
 * 3. Examples: per criterion, as many met as not-met train examples (the judge's mistakes
 *    first), up to `examplesPerVerdict` each; a criterion whose train labels do not allow it
 *    gets its tags' examples instead.
 * 4. Rewordings: for criteria the judge still gets wrong on train, the generator proposes a
 *    new text; it is kept only when it raises that criterion's train agreement. An unreadable
 *    proposal is an error (through the generator call's own re-asking), never skipped.
 * 5. Probability verdicts: an isotonic map from P(met) to the train labels, and the threshold
 *    that maximises balanced accuracy on train.
 * 6. The test items are graded with the alignment (the "after"); both are reported with
 *    κ, balanced F1 and accuracy and their bootstrap intervals, with the calls it took.
 *
 * The gains measured here are those of the judge and labels given; rubricate's own tests use
 * a scripted judge, so they show the procedure works, not what a real model gains.
 */
import { addUsage, emptyUsage, type Usage } from '../engine/usage.js';
import { RubricateError } from '../errors.js';
import type { Grader } from '../pipeline/grader.js';
import { readResultsAsItems } from '../formats/results.js';
import type { ImportRecord } from '../rubric/records.js';
import type { Criterion, Item, Rubric } from '../rubric/schema.js';
import { itemDigest } from '../grading/render.js';
import { calibratedProbability } from '../grading/alignment.js';
import { sealAlignment, type Alignment, type AlignmentContent, type AlignmentExample } from '../spec/alignment.js';
import type { BootstrapOptions } from '../statistics/bootstrap.js';
import { seededRandom, shuffled, type RandomSource } from '../util/random.js';
import { computeBinaryMeta, type BinaryMetaRecord, type BinaryMetrics } from './binary-metrics.js';
import type { LabelIndex } from './labels.js';

/** What the generator is asked to reword: a criterion the judge gets wrong on train, and how. */
export interface RewordRequest {
  criterionId: string;
  text: string;
  /** Train pairs of this criterion, and how the judge departed from the labels on them. */
  pairs: number;
  falsePositives: number;
  falseNegatives: number;
  /** Train disagreements: what the response was, what the reviewers said, what the judge said and why. */
  disagreements: Array<{ prompt: string; response: string; label: boolean; judged: boolean; explanation?: string }>;
}

export interface AlignOptions {
  /** A grader applying an alignment (none: the judge as it is), on the store of the run. */
  graderFor(alignment: Alignment | undefined): Grader;
  /** Proposes a criterion's new text; absent: no rewording. */
  reword?: (request: RewordRequest) => Promise<string>;
  /** Where `reword` counts the generator's calls, reported beside the judge's. */
  generatorUsage?: Usage;
  /** The verdicts the judge gives: a calibrator is fitted for `probability`. */
  verdict: 'binary' | 'probability';
  /** Rubrics by id, when the results lines cannot hold theirs (as `rejudge --rubrics`). */
  rubrics?: ReadonlyMap<string, Rubric>;
  /** Seed of the split and of the example order (default 0). */
  seed?: number;
  /** Share of the labelled items held out for the test split (default 0.3). */
  testFraction?: number;
  /** Examples of each verdict per criterion or tag (default 2, at most 5). */
  examplesPerVerdict?: number;
  /** Train agreement below which a criterion is reworded (default 0.8). */
  rewordBelow?: number;
  /** Criteria reworded at most (default 5), the worst first. */
  maxRewordings?: number;
  /** Train pairs a criterion needs before it is reworded (default 3). */
  minPairsToReword?: number;
  bootstrap?: BootstrapOptions;
  /** One line per step, for the command's stderr. */
  onProgress?: (line: string) => void;
  /** Each unreadable or unusable line of the results file. */
  onInvalid?: (error: RubricateError) => void;
}

/** The figures of one split under one alignment. */
export interface SplitAgreement {
  pairs: number;
  accuracy: number | null;
  balancedF1: number | null;
  cohenKappa: number | null;
  intervals: Pick<BinaryMetrics['intervals'], 'accuracy' | 'balancedF1' | 'cohenKappa'>;
}

export interface RewordingReport {
  criterion: string;
  original: string;
  proposed: string;
  pairs: number;
  trainAccuracyBefore: number;
  trainAccuracyAfter: number | null;
  kept: boolean;
  /** Why it was not tried or not kept, in words. */
  reason?: string;
}

export interface AlignReport {
  split: {
    seed: number;
    testFraction: number;
    strata: number;
    items: { train: number; test: number };
    pairs: { train: number; test: number };
    /** Items whose text (last user message and response) another labelled item also has, and how many such texts: each text's items were kept on one side. */
    duplicates: { items: number; texts: number };
  };
  examples: { criteria: number; tags: number; examples: number };
  rewordings: RewordingReport[];
  calibrator: { points: number; threshold: number } | null;
  /** Test split: the judge as it was, and with the alignment. */
  test: { before: SplitAgreement; after: SplitAgreement; byCriterion: Record<string, { pairs: number; before: number | null; after: number | null }> };
  /** Train split: as it was, and with the examples (what the rewordings were weighed against). */
  train: { before: SplitAgreement; withExamples: SplitAgreement | null };
  /** What aligning cost, by model (cost is priced by the caller). */
  usage: { judge: Usage; generator: Usage };
  /** Results lines that could not be used (unreadable, without texts, without a rubric). */
  unusableLines: number;
  labelledItemsMissing: number;
}

export interface AlignOutcome {
  alignment: Alignment;
  split: { train: string[]; test: string[] };
  report: AlignReport;
}

interface LabelledPair {
  criterion: Criterion;
  raters: boolean[];
  /** The raters' majority; undefined on a tie (then it informs the metrics, not the choices). */
  majority: boolean | undefined;
  note?: string;
}

interface LabelledItem {
  item: Item;
  pairs: LabelledPair[];
}

interface Verdict {
  met: boolean;
  probability?: number;
  explanation?: string;
}

type Verdicts = Map<string, Map<string, Verdict>>;

const defaults = { seed: 0, testFraction: 0.3, examplesPerVerdict: 2, rewordBelow: 0.8, maxRewordings: 5, minPairsToReword: 3 };
const promptCharacters = 500;
const responseCharacters = 1500;

function shortened(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit)} […]`;
}

function lastUserTurn(item: Item): string {
  return [...item.prompt].reverse().find((message) => message.role === 'user')?.content ?? '';
}

function majorityOf(raters: readonly boolean[]): boolean | undefined {
  const met = raters.filter(Boolean).length;
  return met * 2 === raters.length ? undefined : met * 2 > raters.length;
}

/** The labelled items of the results file, in file order, each with its labelled criteria. */
async function labelledItems(resultsFile: string, labels: LabelIndex, options: AlignOptions): Promise<{ items: LabelledItem[]; unusable: number; missing: number }> {
  const items: LabelledItem[] = [];
  const seen = new Set<string>();
  let unusable = 0;
  for await (const { record } of readResultsAsItems(resultsFile, { rubrics: options.rubrics })) {
    if (record.kind === 'invalid') {
      if (record.id === undefined || labels.byItem.has(record.id)) {
        unusable += 1;
        options.onInvalid?.(record.error);
      }
      continue;
    }
    const itemLabels = labels.byItem.get(record.item.id);
    if (!itemLabels || seen.has(record.item.id)) continue;
    seen.add(record.item.id);
    const pairs: LabelledPair[] = [];
    for (const criterion of record.item.rubric.criteria) {
      const raters = itemLabels.get(criterion.id);
      if (!raters || criterion.check !== undefined) continue;
      const notes = labels.notes.get(record.item.id)?.get(criterion.id);
      pairs.push({ criterion, raters, majority: majorityOf(raters), ...(notes ? { note: notes.join(' ') } : {}) });
    }
    if (pairs.length > 0) items.push({ item: record.item, pairs });
  }
  const missing = [...labels.byItem.keys()].filter((id) => !seen.has(id)).length;
  return { items, unusable, missing };
}

/**
 * The units of the split: labelled items grouped by the text an example would show of them
 * (the last user message and the response, whole). Data sets repeat texts under other ids; split
 * by record, a repeat in train would put a test item's own text, and its label, among the
 * examples. Units in the order of their first item.
 */
function textUnits(items: readonly LabelledItem[]): { units: LabelledItem[][]; duplicates: { items: number; texts: number } } {
  const byText = new Map<string, LabelledItem[]>();
  for (const entry of items) {
    const key = `${lastUserTurn(entry.item)}\u0000${entry.item.response}`;
    const members = byText.get(key);
    if (members) members.push(entry);
    else byText.set(key, [entry]);
  }
  const units = [...byText.values()];
  const repeated = units.filter((members) => members.length > 1);
  return { units, duplicates: { items: repeated.reduce((sum, members) => sum + members.length, 0), texts: repeated.length } };
}

/**
 * Train and test by text: the units of `textUnits`, stratified by rubric and by whether most of
 * the unit's labels say met, split as `splitByItem` splits items; the items in file order.
 */
function splitByText(items: readonly LabelledItem[], testFraction: number, random: RandomSource): { train: LabelledItem[]; test: LabelledItem[]; strata: number; duplicates: { items: number; texts: number } } {
  const { units, duplicates } = textUnits(items);
  const stratified = units.map((members) => {
    const decided = members.flatMap((entry) => entry.pairs).filter((pair) => pair.majority !== undefined);
    const metShare = decided.length > 0 ? decided.filter((pair) => pair.majority).length / decided.length : 0;
    return { id: members[0].item.id, stratum: `${members[0].item.rubric.id}\u0000${metShare >= 0.5 ? 'met' : 'unmet'}`, members };
  });
  const split = splitByItem(stratified, testFraction, random);
  const testIds = new Set(split.test.flatMap((unit) => unit.members.map((entry) => entry.item.id)));
  return {
    train: items.filter((entry) => !testIds.has(entry.item.id)),
    test: items.filter((entry) => testIds.has(entry.item.id)),
    strata: new Set(stratified.map((entry) => entry.stratum)).size,
    duplicates,
  };
}

/**
 * Train and test by item: within each stratum (rubric, and whether most of the item's labels
 * say met), a seeded shuffle, then the first ⌈share⌉ to test so that the strata together hold
 * the asked share (rounded as it accumulates). At least one item stays in train.
 */
export function splitByItem<T extends { id: string; stratum: string }>(entries: readonly T[], testFraction: number, random: RandomSource): { train: T[]; test: T[] } {
  const strata = new Map<string, T[]>();
  for (const entry of entries) {
    let members = strata.get(entry.stratum);
    if (!members) strata.set(entry.stratum, (members = []));
    members.push(entry);
  }
  const test = new Set<T>();
  let seenSoFar = 0;
  for (const key of [...strata.keys()].sort()) {
    const members = shuffled(strata.get(key)!, random);
    const wanted = Math.round((seenSoFar + members.length) * testFraction) - Math.round(seenSoFar * testFraction);
    for (const member of members.slice(0, Math.max(0, wanted))) test.add(member);
    seenSoFar += members.length;
  }
  if (test.size === entries.length && entries.length > 0) test.delete([...test][0]);
  return { train: entries.filter((entry) => !test.has(entry)), test: entries.filter((entry) => test.has(entry)) };
}

async function gradeAll(grader: Grader, items: readonly Item[], usage: Usage): Promise<Verdicts> {
  const verdicts: Verdicts = new Map();
  const records = (async function* (): AsyncGenerator<ImportRecord> {
    let line = 0;
    for (const item of items) yield { kind: 'item', item, line: (line += 1) };
  })();
  for await (const result of grader.gradeStream(records)) {
    if (result.usage) addUsage(usage, result.usage);
    const byCriterion = new Map<string, Verdict>();
    for (const criterion of result.criteria) {
      if (criterion.status !== 'ok' || typeof criterion.met !== 'boolean' || criterion.cannot_assess) continue;
      byCriterion.set(criterion.id, { met: criterion.met, ...(criterion.probability !== undefined ? { probability: criterion.probability } : {}), ...(criterion.explanation !== undefined ? { explanation: criterion.explanation } : {}) });
    }
    verdicts.set(result.id, byCriterion);
  }
  return verdicts;
}

function metaRecords(items: readonly LabelledItem[], verdicts: Verdicts, decide: (verdict: Verdict) => boolean = (verdict) => verdict.met): BinaryMetaRecord[] {
  const records: BinaryMetaRecord[] = [];
  for (const { item, pairs } of items) {
    for (const pair of pairs) {
      const verdict = verdicts.get(item.id)?.get(pair.criterion.id);
      if (verdict) records.push({ id: `${item.id}/${pair.criterion.id}`, prediction: decide(verdict), label: pair.raters, groups: { criterion: pair.criterion.id } });
    }
  }
  return records;
}

function agreementOf(records: readonly BinaryMetaRecord[], bootstrap: BootstrapOptions): { summary: SplitAgreement; byCriterion: Record<string, BinaryMetrics> } {
  const empty: SplitAgreement = { pairs: 0, accuracy: null, balancedF1: null, cohenKappa: null, intervals: { accuracy: null, balancedF1: null, cohenKappa: null } };
  if (records.length === 0) return { summary: empty, byCriterion: {} };
  const report = computeBinaryMeta(records, { ...bootstrap, groupBy: ['criterion'], groupIntervals: false });
  const { overall } = report;
  return {
    summary: { pairs: overall.pairs, accuracy: overall.accuracy, balancedF1: overall.balancedF1, cohenKappa: overall.cohenKappa, intervals: { accuracy: overall.intervals.accuracy, balancedF1: overall.intervals.balancedF1, cohenKappa: overall.intervals.cohenKappa } },
    byCriterion: report.groups.criterion ?? {},
  };
}

/** Agreement of one criterion's verdicts with every rater label, over the given items. */
function criterionAccuracy(items: readonly LabelledItem[], criterionId: string, verdicts: Verdicts): { agreeing: number; pairs: number } {
  let agreeing = 0;
  let pairs = 0;
  for (const { item, pairs: labelled } of items) {
    const pair = labelled.find((entry) => entry.criterion.id === criterionId);
    const verdict = pair && verdicts.get(item.id)?.get(criterionId);
    if (!pair || !verdict) continue;
    for (const rater of pair.raters) {
      pairs += 1;
      if (rater === verdict.met) agreeing += 1;
    }
  }
  return { agreeing, pairs };
}

interface Candidate {
  example: AlignmentExample;
  judgeWrong: boolean;
}

/** Up to `perVerdict` met and as many not-met examples (the judge's mistakes first), or none when one verdict has none. */
function balanced(candidates: readonly Candidate[], perVerdict: number, random: RandomSource): AlignmentExample[] {
  const pick = (label: boolean) => {
    const pool = shuffled(candidates.filter((candidate) => candidate.example.label === label), random);
    return [...pool.filter((candidate) => candidate.judgeWrong), ...pool.filter((candidate) => !candidate.judgeWrong)].map((candidate) => candidate.example);
  };
  const met = pick(true);
  const unmet = pick(false);
  const count = Math.min(perVerdict, met.length, unmet.length);
  return [...met.slice(0, count), ...unmet.slice(0, count)];
}

function selectExamples(train: readonly LabelledItem[], baseline: Verdicts, perVerdict: number, random: RandomSource): AlignmentContent['examples'] {
  const byCriterion = new Map<string, Candidate[]>();
  const criteriaById = new Map<string, Criterion>();
  for (const { item, pairs } of train) {
    const source = itemDigest(item);
    for (const pair of pairs) {
      if (pair.majority === undefined) continue;
      const judged = baseline.get(item.id)?.get(pair.criterion.id);
      const example: AlignmentExample = {
        label: pair.majority,
        criterion: pair.criterion.text,
        prompt: shortened(lastUserTurn(item), promptCharacters),
        response: shortened(item.response, responseCharacters),
        ...(pair.note ? { note: pair.note } : {}),
        source,
      };
      criteriaById.set(pair.criterion.id, pair.criterion);
      let list = byCriterion.get(pair.criterion.id);
      if (!list) byCriterion.set(pair.criterion.id, (list = []));
      list.push({ example, judgeWrong: judged !== undefined && judged.met !== pair.majority });
    }
  }
  const criteria: Record<string, AlignmentExample[]> = {};
  const needTags = new Set<string>();
  for (const id of [...byCriterion.keys()].sort()) {
    const chosen = balanced(byCriterion.get(id)!, perVerdict, random);
    if (chosen.length > 0) criteria[id] = chosen;
    else for (const tag of criteriaById.get(id)!.tags) needTags.add(tag);
  }
  const tags: Record<string, AlignmentExample[]> = {};
  for (const tag of [...needTags].sort()) {
    const pool = [...byCriterion].filter(([id]) => criteriaById.get(id)!.tags.includes(tag)).flatMap(([, candidates]) => candidates);
    const chosen = balanced(pool, perVerdict, random);
    if (chosen.length > 0) tags[tag] = chosen;
  }
  return { criteria, tags };
}

/** Why no example was chosen: what a person changes to get some. */
function whyNoExamples(train: readonly LabelledItem[], perVerdict: number): string {
  if (perVerdict <= 0) return '--examples-per-verdict is 0';
  const verdicts = new Map<string, Set<boolean>>();
  for (const { pairs } of train) {
    for (const pair of pairs) if (pair.majority !== undefined) verdicts.set(pair.criterion.id, (verdicts.get(pair.criterion.id) ?? new Set()).add(pair.majority));
  }
  if (verdicts.size === 0) return 'no train item has a decided label: the labels are ties or cannot-assess';
  const oneSided = [...verdicts.values()].filter((seen) => seen.size < 2).length;
  return `examples come in met/not-met pairs, and each of the ${oneSided} labelled criteria has only one of the two among the ${train.length} train items, as have their tags: label more items, or items where the criteria go both ways`;
}

/** The items carrying a criterion, with their rubric cut to it (a candidate rewording is weighed on that criterion alone). */
function withOnly(items: readonly LabelledItem[], criterionId: string): LabelledItem[] {
  return items.flatMap(({ item, pairs }) => {
    const pair = pairs.find((entry) => entry.criterion.id === criterionId);
    if (!pair) return [];
    return [{ item: { ...item, rubric: { ...item.rubric, criteria: [pair.criterion] } }, pairs: [pair] }];
  });
}

/** Pool-adjacent-violators: the non-decreasing fit of labels on P(met), as (mean P, mean label) per block. */
export function isotonicPoints(observations: ReadonlyArray<{ probability: number; label: boolean }>): Array<[number, number]> {
  const sorted = [...observations].sort((left, right) => left.probability - right.probability);
  const blocks: Array<{ x: number; y: number; weight: number }> = [];
  for (const observation of sorted) {
    blocks.push({ x: observation.probability, y: observation.label ? 1 : 0, weight: 1 });
    while (blocks.length > 1 && blocks[blocks.length - 2].y >= blocks[blocks.length - 1].y) {
      const last = blocks.pop()!;
      const previous = blocks.pop()!;
      const weight = previous.weight + last.weight;
      blocks.push({ x: (previous.x * previous.weight + last.x * last.weight) / weight, y: (previous.y * previous.weight + last.y * last.weight) / weight, weight });
    }
  }
  return blocks.map((block) => [block.x, block.y]);
}

/**
 * The threshold on calibrated values with the best balanced accuracy on train (ties: nearest
 * 0.5), tried halfway between consecutive values (and at the ends), so it never sits on a value.
 */
export function bestThreshold(observations: ReadonlyArray<{ value: number; label: boolean }>): number {
  const values = [...new Set(observations.map((observation) => observation.value))].sort((left, right) => left - right);
  const candidates = [values[0], ...values.slice(1).map((value, index) => (values[index] + value) / 2), Math.min(1, values[values.length - 1] + 1e-9)];
  let best = 0.5;
  let bestScore = Number.NEGATIVE_INFINITY;
  for (const threshold of candidates) {
    let truePositive = 0;
    let trueNegative = 0;
    let positive = 0;
    let negative = 0;
    for (const { value, label } of observations) {
      if (label) {
        positive += 1;
        if (value >= threshold) truePositive += 1;
      } else {
        negative += 1;
        if (value < threshold) trueNegative += 1;
      }
    }
    const score = ((positive > 0 ? truePositive / positive : 1) + (negative > 0 ? trueNegative / negative : 1)) / 2;
    if (score > bestScore + 1e-12 || (Math.abs(score - bestScore) <= 1e-12 && Math.abs(threshold - 0.5) < Math.abs(best - 0.5))) {
      best = threshold;
      bestScore = score;
    }
  }
  return best;
}

export async function alignJudge(resultsFile: string, labels: LabelIndex, options: AlignOptions): Promise<AlignOutcome> {
  const settings = { ...defaults, ...Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) } as AlignSettings;
  if (!(settings.testFraction > 0 && settings.testFraction < 1)) throw new RubricateError('CONFIG_INVALID', `the test share must be between 0 and 1, got ${settings.testFraction}`, { field: 'test-fraction' });
  const perVerdict = Math.min(5, settings.examplesPerVerdict);
  const bootstrap = settings.bootstrap ?? {};
  const progress = settings.onProgress ?? (() => undefined);
  const random = seededRandom(settings.seed);
  const judgeUsage = emptyUsage();
  const generatorUsage = options.generatorUsage ?? emptyUsage();

  const { items, unusable, missing } = await labelledItems(resultsFile, labels, options);
  if (items.length < 2) throw new RubricateError('INPUT_INVALID', `aligning needs at least two labelled items with their texts; the results file has ${items.length} (${missing} labelled items missing, ${unusable} unusable lines)`, { file: resultsFile });
  const { train, test, strata, duplicates } = splitByText(items, settings.testFraction, random);
  const duplicateNote = duplicates.items > 0 ? `; ${duplicates.items} items share their text with another (${duplicates.texts} texts), each text kept on one side` : '';
  progress(`split: ${train.length} train and ${test.length} test items (${strata} strata, seed ${settings.seed}${duplicateNote})`);

  const baseline = await gradeAll(options.graderFor(undefined), [...train, ...test].map((entry) => entry.item), judgeUsage);
  const examples = selectExamples(train, baseline, perVerdict, random);
  const exampleCount = [...Object.values(examples.criteria), ...Object.values(examples.tags)].reduce((sum, list) => sum + list.length, 0);
  progress(`examples: ${exampleCount} from train, for ${Object.keys(examples.criteria).length} criteria and ${Object.keys(examples.tags).length} tags${exampleCount === 0 ? ` (${whyNoExamples(train, perVerdict)})` : ''}`);

  const run: AlignRun = { settings, options, train, judgeUsage, progress, bootstrap, examples };
  const { rewordings, rewordingReports, withExamples } = options.reword ? await rewordWeakCriteria(run, options.reword) : { rewordings: {}, rewordingReports: [], withExamples: null };
  const calibrator = settings.verdict === 'probability' ? await fitCalibrator(run, rewordings) : null;

  const alignment = sealAlignment({ examples, rewordings, calibrator });
  const after = await gradeAll(options.graderFor(alignment), test.map((entry) => entry.item), judgeUsage);
  const beforeTest = agreementOf(metaRecords(test, baseline), bootstrap);
  const afterTest = agreementOf(metaRecords(test, after), bootstrap);
  const pairCount = (entries: readonly LabelledItem[]) => entries.reduce((sum, entry) => sum + entry.pairs.reduce((inner, pair) => inner + pair.raters.length, 0), 0);
  return {
    alignment,
    split: { train: train.map((entry) => entry.item.id), test: test.map((entry) => entry.item.id) },
    report: {
      split: { seed: settings.seed, testFraction: settings.testFraction, strata, items: { train: train.length, test: test.length }, pairs: { train: pairCount(train), test: pairCount(test) }, duplicates },
      examples: { criteria: Object.keys(examples.criteria).length, tags: Object.keys(examples.tags).length, examples: exampleCount },
      rewordings: rewordingReports,
      calibrator: calibrator ? { points: calibrator.points.length, threshold: calibrator.threshold } : null,
      test: { before: beforeTest.summary, after: afterTest.summary, byCriterion: testByCriterion(beforeTest.byCriterion, afterTest.byCriterion) },
      train: { before: agreementOf(metaRecords(train, baseline), bootstrap).summary, withExamples },
      usage: { judge: judgeUsage, generator: generatorUsage },
      unusableLines: unusable,
      labelledItemsMissing: missing,
    },
  };
}

type AlignSettings = typeof defaults & AlignOptions;

/** What the alignment's later steps read: its settings, the train side of the split, the examples chosen and the judge usage so far. */
interface AlignRun {
  settings: AlignSettings;
  options: AlignOptions;
  train: readonly LabelledItem[];
  judgeUsage: Usage;
  progress: (line: string) => void;
  bootstrap: BootstrapOptions;
  examples: AlignmentContent['examples'];
}

/** The test side's agreement per criterion, before and after the alignment. */
function testByCriterion(before: Record<string, BinaryMetrics>, after: Record<string, BinaryMetrics>): AlignReport['test']['byCriterion'] {
  const byCriterion: AlignReport['test']['byCriterion'] = {};
  for (const id of [...new Set([...Object.keys(before), ...Object.keys(after)])].sort()) {
    byCriterion[id] = { pairs: before[id]?.pairs ?? after[id]?.pairs ?? 0, before: before[id]?.accuracy ?? null, after: after[id]?.accuracy ?? null };
  }
  return byCriterion;
}

/**
 * The train items graded with the examples; the criteria that agree least with the labels (at most
 * --max-rewordings) reworded by the generator, each rewording kept only when it improves train agreement.
 */
async function rewordWeakCriteria(run: AlignRun, reword: NonNullable<AlignOptions['reword']>): Promise<{ rewordings: AlignmentContent['rewordings']; rewordingReports: RewordingReport[]; withExamples: SplitAgreement }> {
  const { settings, options, train, judgeUsage, examples } = run;
  const rewordings: AlignmentContent['rewordings'] = {};
  const rewordingReports: RewordingReport[] = [];
  const exampled = sealAlignment({ examples, rewordings: {}, calibrator: null });
  const trainVerdicts = await gradeAll(options.graderFor(exampled), train.map((entry) => entry.item), judgeUsage);
  const withExamples = agreementOf(metaRecords(train, trainVerdicts), run.bootstrap).summary;
  const criteria = new Map<string, Criterion>();
  for (const { pairs } of train) for (const pair of pairs) criteria.set(pair.criterion.id, pair.criterion);
  const weak = [...criteria.keys()]
    .map((id) => ({ id, ...criterionAccuracy(train, id, trainVerdicts) }))
    .filter((entry) => entry.pairs >= settings.minPairsToReword && entry.agreeing / entry.pairs < settings.rewordBelow)
    .sort((left, right) => left.agreeing / left.pairs - right.agreeing / right.pairs || (left.id < right.id ? -1 : 1))
    .slice(0, settings.maxRewordings);
  for (const candidate of weak) {
    const report = await tryRewording(run, reword, rewordings, { ...candidate, criterion: criteria.get(candidate.id)! }, trainVerdicts);
    if (report.kept) rewordings[candidate.id] = { text: report.proposed, original: report.original };
    rewordingReports.push(report);
  }
  return { rewordings, rewordingReports, withExamples };
}

/** A criterion that agrees too little with the labels on train: its agreeing and labelled pairs. */
interface WeakCriterion {
  id: string;
  criterion: Criterion;
  agreeing: number;
  pairs: number;
}

/** One weak criterion reworded by the generator, and the rewording tried on the train items that have it (beside the renderings kept so far). */
async function tryRewording(run: AlignRun, reword: NonNullable<AlignOptions['reword']>, rewordings: AlignmentContent['rewordings'], candidate: WeakCriterion, trainVerdicts: Verdicts): Promise<RewordingReport> {
  const { criterion } = candidate;
  const before = candidate.agreeing / candidate.pairs;
  const proposed = (await reword({ criterionId: candidate.id, text: criterion.text, pairs: candidate.pairs, ...disagreementsOf(run.train, candidate.id, trainVerdicts) })).trim();
  if (proposed === criterion.text.trim()) {
    return { criterion: candidate.id, original: criterion.text, proposed, pairs: candidate.pairs, trainAccuracyBefore: before, trainAccuracyAfter: null, kept: false, reason: 'the generator proposed the same text' };
  }
  const trial = sealAlignment({ examples: run.examples, rewordings: { ...rewordings, [candidate.id]: { text: proposed, original: criterion.text } }, calibrator: null });
  const only = withOnly(run.train, candidate.id);
  const trialVerdicts = await gradeAll(run.options.graderFor(trial), only.map((entry) => entry.item), run.judgeUsage);
  const after = criterionAccuracy(only, candidate.id, trialVerdicts);
  const afterShare = after.pairs > 0 ? after.agreeing / after.pairs : null;
  const kept = afterShare !== null && after.pairs === candidate.pairs && afterShare > before;
  run.progress(`rewording ${candidate.id}: train agreement ${before.toFixed(3)} → ${afterShare === null ? 'n/a' : afterShare.toFixed(3)}, ${kept ? 'kept' : 'not kept'}`);
  return {
    criterion: candidate.id,
    original: criterion.text,
    proposed,
    pairs: candidate.pairs,
    trainAccuracyBefore: before,
    trainAccuracyAfter: afterShare,
    kept,
    ...(kept ? {} : { reason: afterShare === null || after.pairs < candidate.pairs ? 'some train verdicts failed under the rewording' : 'train agreement did not improve' }),
  };
}

/** Where the judge and the labels disagree on one criterion over train: counts both ways and the first four cases, shortened, for the generator. */
function disagreementsOf(train: readonly LabelledItem[], criterionId: string, trainVerdicts: Verdicts): Pick<RewordRequest, 'falsePositives' | 'falseNegatives' | 'disagreements'> {
  const disagreements: RewordRequest['disagreements'] = [];
  let falsePositives = 0;
  let falseNegatives = 0;
  for (const { item, pairs } of train) {
    const pair = pairs.find((entry) => entry.criterion.id === criterionId);
    const verdict = trainVerdicts.get(item.id)?.get(criterionId);
    if (!pair || pair.majority === undefined || !verdict || verdict.met === pair.majority) continue;
    if (verdict.met) falsePositives += 1;
    else falseNegatives += 1;
    if (disagreements.length < 4) disagreements.push({ prompt: shortened(lastUserTurn(item), promptCharacters), response: shortened(item.response, responseCharacters), label: pair.majority, judged: verdict.met, ...(verdict.explanation ? { explanation: verdict.explanation } : {}) });
  }
  return { falsePositives, falseNegatives, disagreements };
}

/** --verdict probability: an isotonic calibrator from the train verdicts' probabilities to the labels, and the threshold that balances accuracy on train. */
async function fitCalibrator(run: AlignRun, rewordings: AlignmentContent['rewordings']): Promise<NonNullable<AlignmentContent['calibrator']>> {
  const { train } = run;
  const uncalibrated = sealAlignment({ examples: run.examples, rewordings, calibrator: null });
  const trainVerdicts = await gradeAll(run.options.graderFor(uncalibrated), train.map((entry) => entry.item), run.judgeUsage);
  const observations: Array<{ probability: number; label: boolean }> = [];
  for (const { item, pairs } of train) {
    for (const pair of pairs) {
      const probability = trainVerdicts.get(item.id)?.get(pair.criterion.id)?.probability;
      if (probability !== undefined && pair.majority !== undefined) observations.push({ probability, label: pair.majority });
    }
  }
  if (observations.length === 0) throw new RubricateError('INPUT_INVALID', 'no train verdict carries a probability to calibrate: grade with --verdict probability', { field: 'verdict' });
  const points = isotonicPoints(observations);
  const values = observations.map((observation) => ({ value: calibratedProbability(points, observation.probability), label: observation.label }));
  const calibrator = { kind: 'isotonic' as const, points, threshold: bestThreshold(values) };
  run.progress(`calibrator: ${points.length} points, threshold ${calibrator.threshold.toFixed(3)} on train`);
  return calibrator;
}

