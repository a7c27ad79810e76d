/**
 * `rubricate probe`: what can fool this judge? Grades each response and perturbed copies of
 * it (padding, formatting, confident tone, flattery, prompt injection, and deletion of the
 * sentence that meets a criterion) with the same judge, and reports score drift and verdict
 * flips with paired-bootstrap intervals. See docs/probes.md.
 */
import type { Command } from 'commander';
import { madeUpBy, madeUpFields, madeUpNotice } from '../../util/made-up.js';
import { RubricateError, exitCodes } from '../../errors.js';
import { formatProbeTable } from '../../meta/probes/format.js';
import { probeNames } from '../../meta/probes/perturbations.js';
import { parseProbeList, runProbes, sampleItems, type GradedVariant } from '../../meta/probes/runner.js';
import { probeDefinitions } from '../../meta/probes/perturbations.js';
import type { ResultRecord } from '../../results/results.js';
import { Grader } from '../../pipeline/grader.js';
import { getItemImporter } from '../../formats/index.js';
import type { Item } from '../../rubric/schema.js';
import { quietHelp, reportInputError, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { addJudgeOptions, parseNumber, parsePositiveInteger } from '../judge-options.js';
import { modelFromFlags, runSpecOf } from '../run-spec-flags.js';
import { openRunSession, type SessionFlags } from '../session.js';
import { checkRepeatCount, type RunSpec } from '../../spec/run-spec.js';
import { storeFilesOf } from '../store-options.js';
import { checkFiles, JsonLinesWriter, writeFileAtomic } from '../../util/files.js';
import { ProgressReporter } from '../progress.js';
import { addInputOptions, importOptionsFrom, refuseInapplicableFlags, type InputFlags } from '../input-options.js';

interface ProbeFlags extends SessionFlags, InputFlags {
  out: string;
  variantsOut?: string;
  probes: string;
  items?: number;
  variants: number;
  probeSeed: number;
  resamples: number;
  confidence: number;
}

function parseResamples(value: string): number {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new RubricateError('CONFIG_INVALID', `--bootstrap-resamples must be a non-negative integer, got "${value}"`, { field: 'bootstrap-resamples' });
  return number;
}

function parseConfidence(value: string): number {
  const number = Number(value);
  if (!(number > 0 && number < 1)) throw new RubricateError('CONFIG_INVALID', `--confidence must be between 0 and 1, got "${value}"`, { field: 'confidence' });
  return number;
}

export function registerProbeCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('probe')
    .description('robustness probes: grade responses and perturbed copies with the same judge, and report score drift and verdict flips');
  addInputOptions(command, { formatHelp: 'input format (as for grade)', responseFromVerb: 'probe' });
  command
    .requiredOption('--out <file>', 'probe report JSON')
    .option('--variants-out <file>', 'also write every graded variant beside its original (JSONL), the input of `rubricate export --kind augment`')
    .option('--probes <list>', 'comma-separated subset of the probes', probeNames.join(','))
    // Not --samples: that is the judges' self-consistency option, shared with grade.
    .option('--items <n>', 'probe this many items, drawn at random (seeded) from the input (default: all)', parsePositiveInteger('items'))
    .option('--variants <n>', 'perturbed copies per item for the seeded probes', parsePositiveInteger('variants'), 1)
    .option('--probe-seed <n>', 'seed of the item sample, the perturbations and the bootstrap', parseNumber('probe-seed'), 0)
    .option('--bootstrap-resamples <n>', 'paired bootstrap resamples (0 = no intervals)', parseResamples, 1000)
    .option('--confidence <level>', 'confidence level of the intervals', parseConfidence, 0.95)
    .option('--quiet', quietHelp);
  addJudgeOptions(command);
  organizeHelp(command, [
    'rubricate probe --format healthbench --input examples/healthbench/examples.jsonl --responses examples/healthbench/responses.jsonl --judge openai:gpt-4.1-mini --out probe.json',
    'rubricate probe --input examples/items.jsonl --judge scripted --probes padding,injection --out probe.json',
  ]);
  command.action(async (flags: ProbeFlags, self: Command) => {
    context.exitCode = await runProbeCommand(flags, runSpecOf(self), context);
  });
}

async function runProbeCommand(flags: ProbeFlags, spec: RunSpec, context: CommandContext): Promise<number> {
  checkRepeatCount(spec.limits, '--variants', flags.variants);
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input }, { flag: 'responses', path: flags.responses }, { flag: 'rubrics', path: flags.rubrics }, { flag: 'examples', path: flags.examples }],
    outputs: [{ flag: 'out', path: flags.out }, { flag: 'variants-out', path: flags.variantsOut }],
    keep: storeFilesOf(flags),
  });
  const probes = parseProbeList(flags.probes);
  const importer = getItemImporter(flags.format);
  refuseInapplicableFlags(flags, importer);
  const importOptions = await importOptionsFrom(flags, context);

  let invalid = 0;
  async function* validItems(): AsyncGenerator<Item> {
    for await (const record of importer.read(flags.input, importOptions)) {
      if (record.kind === 'invalid') {
        invalid += 1;
        reportInputError(context, record.error);
        continue;
      }
      yield record.item;
    }
  }
  const items = await sampleItems(validItems(), flags.items, flags.probeSeed);
  if (items.length === 0) throw new RubricateError('INPUT_INVALID', 'no valid items to probe', { file: flags.input });

  const session = await openRunSession(
    { ...spec, scoring: { ...spec.scoring, name: spec.scoring.name ?? importer.defaultScoring ?? 'weighted_mean' } },
    modelFromFlags(flags, 'judge').credentials,
    flags,
    { context, out: flags.out, needsJudge: 'probes test a judge: --judge none has nothing to probe' },
  );
  const progress = new ProgressReporter(ProgressReporter.displayFor(process.stderr, Boolean(flags.quiet)), 'probing');
  try {
    const grader = new Grader({ ...session.graderOptions(), omitText: true, onEvent: progress.onEvent, signal: context.signal });
    let expected = 0;
    const variants = flags.variantsOut ? new JsonLinesWriter(flags.variantsOut) : undefined;
    const written: Promise<void>[] = [];
    const report = await runProbes(grader, items, {
      probes,
      seed: flags.probeSeed,
      variants: flags.variants,
      bootstrap: { resamples: flags.resamples, confidence: flags.confidence },
      onPass: (_pass, responses) => {
        expected += responses;
        progress.setTotal(expected);
      },
      ...(variants ? { onVariant: (variant: GradedVariant) => void written.push(variants.write(variantLine(variant))) } : {}),
    });
    progress.stop();
    await Promise.all(written);
    if (context.signal.aborted) await variants?.discard();
    else await variants?.close();
    if (context.signal.aborted) {
      context.stderr('interrupted: verdicts obtained so far are in the reply cache; rerun the same command to resume');
      return exitCodes.interrupted;
    }
    const madeUp = madeUpBy(grader.judgeInfo);
    await writeFileAtomic(flags.out, `${JSON.stringify({ ...madeUpFields(madeUp), ...report, input: { format: flags.format, file: flags.input, invalidRecords: invalid } }, null, 2)}\n`);
    session.finish();
    if (!flags.quiet) context.stderr(`${madeUp !== undefined ? `${madeUpNotice(madeUp)}\n` : ''}${formatProbeTable(report)}report: ${flags.out}`);
    const failedVariants = report.probes.reduce((total, result) => total + result.variants.failed, 0);
    return invalid > 0 || report.items.originalFailed > 0 || failedVariants > 0 ? exitCodes.itemsFailed : exitCodes.success;
  } catch (error) {
    progress.stop();
    if (context.signal.aborted) {
      context.stderr('interrupted: verdicts obtained so far are in the reply cache; rerun the same command to resume');
      return exitCodes.interrupted;
    }
    throw error;
  } finally {
    await session.close();
  }
}

/** A graded variant as `--variants-out` writes it: the perturbed response beside the original, with the verdicts of each. */
function variantLine({ item, perturbation, original, perturbed }: GradedVariant): Record<string, unknown> {
  const verdicts = (record: ResultRecord) => Object.fromEntries(record.criteria.filter((criterion) => criterion.source === 'judge' && typeof criterion.met === 'boolean').map((criterion) => [criterion.id, criterion.met]));
  return {
    item_id: item.id,
    prompt: item.prompt,
    probe: perturbation.probe,
    kind: probeDefinitions[perturbation.probe].kind,
    variant: perturbation.variant,
    sample: perturbation.sample,
    ...(perturbation.target ? { target_criterion: perturbation.target.criterionId } : {}),
    expected: probeDefinitions[perturbation.probe].expected,
    original: { response: item.response, score: original.score, verdicts: verdicts(original) },
    perturbed: { response: perturbation.response, score: perturbed.score, verdicts: verdicts(perturbed) },
  };
}
