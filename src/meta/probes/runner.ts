/**
 * Runs robustness probes through the real grading pipeline: every original and perturbed
 * response goes through the same `Grader` (same judge, template, sampling and reply cache),
 * then each probe's variants are compared with their originals.
 *
 * Two passes: the originals first, because the deletion probe needs to know which criteria
 * the original met, and because a probe is only meaningful on an item whose original grading
 * succeeded (variants of failed originals are never sent).
 */
import { addUsage, emptyUsage, type Usage } from '../../engine/usage.js';
import { RubricateError } from '../../errors.js';
import type { Grader } from '../../pipeline/grader.js';
import type { JudgeInfo, ResultRecord } from '../../results/results.js';
import type { ImportRecord } from '../../rubric/records.js';
import type { Item } from '../../rubric/schema.js';
import { randomInteger, seededRandom } from '../../util/random.js';
import { resolveBootstrapOptions, type BootstrapOptions } from '../../statistics/bootstrap.js';
import { mean } from '../../statistics/descriptive.js';
import { analyseProbe, type CriterionPair, type ProbeResult, type VariantObservation } from './analysis.js';
import { PROBE_TEXT_VERSION } from './phrases.js';
import { deletionPerturbations, perturbItem, probeDefinitions, probeNames, type Perturbation, type ProbeName } from './perturbations.js';

export interface ProbeRunOptions {
  /** Probes to run, in this order; all by default. */
  probes?: readonly ProbeName[];
  /** Seed of the perturbations and of the bootstrap; 0 by default. */
  seed?: number;
  /** Perturbed variants per item for the seeded probes (deletion has one per met criterion); 1 by default. */
  variants?: number;
  /** Bootstrap resamples and confidence (the seed comes from `seed`). */
  bootstrap?: Omit<BootstrapOptions, 'seed'>;
  /** Called before each grading pass with the number of responses it will grade. */
  onPass?: (pass: 'originals' | 'variants', responses: number) => void;
  /** Called with every variant whose grading succeeded, beside its original (what `probe --variants-out` writes). */
  onVariant?: (variant: GradedVariant) => void;
}

/** A perturbed response graded beside its original: the pair an augmentation set is made of. */
export interface GradedVariant {
  item: Item;
  perturbation: Perturbation;
  original: ResultRecord;
  perturbed: ResultRecord;
}

export interface ProbeReport {
  kind: 'probes';
  textVersion: string;
  judge: JudgeInfo | null;
  scoring: string;
  seed: number;
  variantsPerItem: number;
  bootstrap: { resamples: number; seed: number; confidence: number; unit: 'item' };
  items: {
    probed: number;
    /** Originals that graded with status ok: the only ones perturbed. */
    originalOk: number;
    originalFailed: number;
    /** Mean original score over the items with one. */
    meanOriginalScore: number | null;
  };
  usage: Usage;
  probes: ProbeResult[];
}

/**
 * The probes named in a comma-separated list (`padding,injection`), each checked by name.
 *
 * @example
 * ```ts
 * import { parseProbeList } from 'rubricate/meta';
 * const probes = parseProbeList('padding,flattery,injection');
 * ```
 */
export function parseProbeList(value: string): ProbeName[] {
  const names = value
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0) throw new RubricateError('CONFIG_INVALID', 'give at least one probe', { field: 'probes' });
  for (const name of names) {
    if (!(probeNames as readonly string[]).includes(name)) {
      throw new RubricateError('CONFIG_INVALID', `unknown probe "${name}" (known: ${probeNames.join(', ')})`, { field: 'probes' });
    }
  }
  return [...new Set(names)] as ProbeName[];
}

/**
 * Up to `count` items chosen uniformly at random (reservoir sampling, seeded), kept in input
 * order. Reads the stream once; holds only the chosen items.
 */
export async function sampleItems<T>(source: AsyncIterable<T>, count: number | undefined, seed: number): Promise<T[]> {
  const chosen: Array<{ index: number; value: T }> = [];
  if (count === undefined) {
    let index = 0;
    for await (const value of source) chosen.push({ index: index++, value });
    return chosen.map((entry) => entry.value);
  }
  const random = seededRandom(seed);
  let seen = 0;
  for await (const value of source) {
    if (chosen.length < count) chosen.push({ index: seen, value });
    else {
      const slot = randomInteger(random, seen + 1);
      if (slot < count) chosen[slot] = { index: seen, value };
    }
    seen += 1;
  }
  return chosen.sort((left, right) => left.index - right.index).map((entry) => entry.value);
}

async function gradeAll(grader: Grader, items: readonly Item[]): Promise<ResultRecord[]> {
  async function* records(): AsyncGenerator<ImportRecord> {
    for (const [index, item] of items.entries()) yield { kind: 'item', item, line: index + 1 };
  }
  const results: ResultRecord[] = [];
  for await (const result of grader.gradeStream(records())) results.push(result);
  if (results.length !== items.length) throw new RubricateError('INTERNAL', `graded ${results.length} of ${items.length} responses`);
  return results;
}

/** Judge criteria with a boolean verdict, by id. */
function judgedVerdicts(record: ResultRecord): Map<string, { text: string; met: boolean }> {
  const verdicts = new Map<string, { text: string; met: boolean }>();
  for (const criterion of record.criteria) {
    if (criterion.source === 'judge' && criterion.status === 'ok' && typeof criterion.met === 'boolean') verdicts.set(criterion.id, { text: criterion.text ?? criterion.id, met: criterion.met });
  }
  return verdicts;
}

function compare(original: ResultRecord, perturbed: ResultRecord): CriterionPair[] {
  const before = judgedVerdicts(original);
  const pairs: CriterionPair[] = [];
  for (const [id, after] of judgedVerdicts(perturbed)) {
    const originalVerdict = before.get(id);
    if (originalVerdict) pairs.push({ id, text: originalVerdict.text, original: originalVerdict.met, perturbed: after.met });
  }
  return pairs;
}

interface PlannedVariant {
  item: number;
  perturbation: Perturbation;
}

/**
 * Grades the originals and their perturbations and reports, per probe, score drift with a
 * paired bootstrap interval and verdict flip rates. Items must have distinct ids only for
 * readable per-item output; pairing is by position.
 *
 * @example
 * ```ts
 * import { Grader, createJudge, normalizeItem } from 'rubricate';
 * import { parseProbeList, probe } from 'rubricate/meta';
 * const grader = new Grader({ judge: await createJudge({ model: 'openai:gpt-4.1-mini' }) });
 * const report = await probe(grader, [normalizeItem({ id: 'q1', prompt: 'What is 2 + 2?', response: '4', rubric: { criteria: [{ text: 'Answers 4' }] } })], { probes: parseProbeList('padding,injection'), seed: 1 });
 * ```
 */
export async function runProbes(grader: Grader, items: readonly Item[], options: ProbeRunOptions = {}): Promise<ProbeReport> {
  const probes = options.probes ?? probeNames;
  const seed = options.seed ?? 0;
  const variantsPerItem = options.variants ?? 1;
  if (!Number.isInteger(variantsPerItem) || variantsPerItem < 1) throw new RubricateError('CONFIG_INVALID', 'variants per item must be a positive integer', { field: 'variants' });
  const bootstrap = resolveBootstrapOptions({ ...options.bootstrap, seed });
  const usage = emptyUsage();

  options.onPass?.('originals', items.length);
  const originals = await gradeAll(grader, items);
  for (const result of originals) if (result.usage) addUsage(usage, result.usage);
  const usable = originals.map((result) => result.status === 'ok');

  const planned: PlannedVariant[] = [];
  const unmatched = new Map<number, number>();
  items.forEach((item, index) => {
    if (!usable[index]) return;
    for (const probe of probes) {
      if (probe === 'deletion') {
        const met = [...judgedVerdicts(originals[index]).entries()].filter(([, verdict]) => verdict.met).map(([id, verdict]) => ({ id, text: verdict.text }));
        const { perturbations, unmatched: missing } = deletionPerturbations(item, met);
        unmatched.set(index, missing.length);
        for (const perturbation of perturbations) planned.push({ item: index, perturbation });
      } else {
        for (const perturbation of perturbItem(item, probe, seed, variantsPerItem)) planned.push({ item: index, perturbation });
      }
    }
  });

  options.onPass?.('variants', planned.length);
  const variantResults = await gradeAll(
    grader,
    planned.map(({ item, perturbation }) => ({ ...items[item], response: perturbation.response })),
  );
  for (const result of variantResults) if (result.usage) addUsage(usage, result.usage);

  const observationsByProbe = new Map<ProbeName, VariantObservation[]>(probes.map((probe) => [probe, []]));
  planned.forEach(({ item, perturbation }, index) => {
    const original = originals[item];
    const perturbed = variantResults[index];
    const ok = perturbed.status === 'ok';
    if (ok) options.onVariant?.({ item: items[item], perturbation, original, perturbed });
    observationsByProbe.get(perturbation.probe)!.push({
      item,
      itemId: items[item].id,
      variant: perturbation.variant,
      ok,
      originalScore: original.score,
      perturbedScore: ok ? perturbed.score : null,
      criteria: ok ? compare(original, perturbed) : [],
      ...(perturbation.target ? { targetCriterionId: perturbation.target.criterionId } : {}),
    });
  });

  const scoredOriginals = originals.filter((result, index) => usable[index] && result.score !== null);
  return {
    kind: 'probes',
    textVersion: PROBE_TEXT_VERSION,
    judge: grader.judgeInfo ?? null,
    scoring: grader.scoring.name,
    seed,
    variantsPerItem,
    bootstrap: { resamples: bootstrap.resamples, seed: bootstrap.seed, confidence: bootstrap.confidence, unit: 'item' },
    items: {
      probed: items.length,
      originalOk: usable.filter(Boolean).length,
      originalFailed: usable.filter((ok) => !ok).length,
      meanOriginalScore: scoredOriginals.length > 0 ? mean(scoredOriginals.map((result) => result.score!)) : null,
    },
    usage,
    probes: probes.map((probe) =>
      analyseProbe(probeDefinitions[probe], observationsByProbe.get(probe)!, bootstrap, probe === 'deletion' ? { unmatchedCriteria: [...unmatched.values()].reduce((total, count) => total + count, 0) } : {}),
    ),
  };
}
