/**
 * `rubricate calibrate-cascade`: the escalation band of a cascade, chosen on labelled results for
 * a target agreement, with accuracy and cost against the strong judge alone on held-out labels
 * (`src/meta/cascade-calibration.ts`). With `--dry-run`, before paying for the strong run: from
 * the cheap run alone, the escalation rate and estimated cost of a few bands; nothing is written.
 */
import type { Command } from 'commander';
import { defaultPrices, loadPriceTable, priceFor } from '../../engine/usage.js';
import { RubricateError, exitCodes } from '../../errors.js';
import { chooseBand, estimateBands, evaluateBand, isHeldOut, joinUnits, judgedCriteria, type Band } from '../../meta/cascade-calibration.js';
import { loadLabels } from '../../meta/labels.js';
import { checkFiles, writeFileAtomic } from '../../util/files.js';
import { reportInputError, type CommandContext } from '../context.js';
import { parseNumber } from '../judge-options.js';
import { organizeHelp } from '../help.js';

interface CalibrateFlags {
  cheap: string;
  strong?: string;
  labels?: string;
  targetAgreement?: number;
  holdout: number;
  seed: number;
  prices?: string;
  strongModel?: string;
  out?: string;
  dryRun?: boolean;
}

function parseFraction(name: string, open = false) {
  return (value: string): number => {
    const number = Number(value);
    if (!(number >= 0 && number <= 1) || (open && (number === 0 || number === 1))) throw new RubricateError('CONFIG_INVALID', `--${name} must be a number ${open ? 'strictly ' : ''}between 0 and 1, got "${value}"`, { field: name });
    return number;
  };
}

/** The bands a dry run estimates: symmetric around 0.5, from narrow to wide. */
const estimatedBands: Band[] = [0.1, 0.2, 0.3, 0.4].map((half) => [0.5 - half, 0.5 + half] as const);

export function registerCalibrateCascadeCommand(program: Command, context: CommandContext): void {
  const command = program
    .command('calibrate-cascade')
    .description('choose the P(met) band a cascade escalates on, from a cheap judge\'s and a strong judge\'s results on labelled items; report accuracy and cost against the strong judge alone on held-out labels')
    .requiredOption('--cheap <file>', 'results of the first (cheap) judge, graded with --verdict probability')
    .option('--strong <file>', 'results of the strong judge on the same items (not needed with --dry-run)')
    .option('--labels <file>', 'labels JSONL ({id, criterion_id, label} or {id, labels: {…}}; several raters: their majority)')
    .option('--target-agreement <x>', 'agreement with the labels the cascade must reach on the calibration part', parseFraction('target-agreement'))
    .option('--holdout <fraction>', 'share of items held out to test the chosen band (by a seeded hash of the item id)', parseFraction('holdout', true), 0.5)
    .option('--seed <n>', 'seed of the calibration / held-out split', parseNumber('seed'), 0)
    .option('--prices <file>', 'price table (JSON/YAML, USD per 1M tokens) for the cost figures')
    .option('--strong-model <model>', 'with --dry-run: the strong judge\'s model, whose price the estimates use')
    .option('--out <file>', 'report JSON (default: stdout)')
    .option('--dry-run', 'before the strong run: the escalation rate and estimated cost of a few bands from the cheap results alone; writes nothing');
  organizeHelp(command, [
    'rubricate calibrate-cascade --cheap examples/cascade/cheap.jsonl --strong examples/cascade/strong.jsonl --labels examples/cascade/labels.jsonl --target-agreement 0.9 --out band.json',
    'rubricate calibrate-cascade --cheap examples/cascade/cheap.jsonl --dry-run --strong-model gpt-4.1',
  ]);
  command.action(async (flags: CalibrateFlags) => {
    context.exitCode = await runCalibrate(flags, context);
  });
}

async function runCalibrate(flags: CalibrateFlags, context: CommandContext): Promise<number> {
  checkFiles({ inputs: [{ flag: 'cheap', path: flags.cheap }, { flag: 'strong', path: flags.strong }, { flag: 'labels', path: flags.labels }, { flag: 'prices', path: flags.prices }], outputs: flags.dryRun ? [] : [{ flag: 'out', path: flags.out }] });
  const prices = flags.prices ? loadPriceTable(flags.prices) : defaultPrices;
  const cheap = await judgedCriteria(flags.cheap, prices);
  if (flags.dryRun) {
    if (flags.out) throw new RubricateError('CONFIG_INVALID', '--dry-run writes nothing: leave out --out (the estimate is printed)', { field: 'out' });
    const { units, counts } = joinUnits(cheap.byKey, undefined, undefined);
    const strongPrice = flags.strongModel ? priceFor(flags.strongModel, prices) : undefined;
    const estimate = { dry_run: true, cheap: { file: flags.cheap, model: cheap.model ?? null }, strong_model: flags.strongModel ?? null, join: counts, estimates: estimateBands(units, estimatedBands, strongPrice) };
    context.stdout(JSON.stringify(estimate, null, 2));
    context.stderr(`dry run: ${units.length} criteria with a P(met); ${estimate.estimates.map((entry) => `band [${entry.band![0].toFixed(1)}, ${entry.band![1].toFixed(1)}] escalates ${entry.escalated}`).join(', ')}${strongPrice ? '' : ' (no --strong-model price: costs are n/a)'}`);
    return exitCodes.success;
  }
  if (!flags.strong || !flags.labels || flags.targetAgreement === undefined) {
    throw new RubricateError('CONFIG_INVALID', 'calibrating needs --strong FILE, --labels FILE and --target-agreement X (or --dry-run for estimates from the cheap run alone)', { field: !flags.strong ? 'strong' : !flags.labels ? 'labels' : 'target-agreement' });
  }
  const strong = await judgedCriteria(flags.strong, prices);
  const labels = await loadLabels(flags.labels, { onInvalid: (error) => reportInputError(context, error) });
  const { units, counts } = joinUnits(cheap.byKey, strong.byKey, labels);
  const heldOut = units.filter((unit) => isHeldOut(unit.item, flags.holdout, flags.seed));
  const calibration = units.filter((unit) => !isHeldOut(unit.item, flags.holdout, flags.seed));
  const choice = chooseBand(calibration, flags.targetAgreement);
  const report = {
    inputs: { cheap: flags.cheap, strong: flags.strong, labels: flags.labels, cheap_model: cheap.model ?? null, strong_model: strong.model ?? null },
    join: counts,
    split: { seed: flags.seed, holdout: flags.holdout, calibration: calibration.length, held_out: heldOut.length },
    target_agreement: flags.targetAgreement,
    band: choice.band,
    target_met: choice.targetMet,
    candidates: choice.candidates,
    calibration: evaluateBand(calibration, choice.band),
    held_out: evaluateBand(heldOut, choice.band),
  };
  const text = `${JSON.stringify(report, null, 2)}\n`;
  if (flags.out) await writeFileAtomic(flags.out, text);
  else context.stdout(text.trimEnd());
  const percent = (value: number | null) => (value === null ? 'n/a' : `${(value * 100).toFixed(1)}%`);
  const held = report.held_out;
  context.stderr(
    `band ${choice.band ? `[${choice.band[0]}, ${choice.band[1]}]` : 'none (nothing escalates)'}: ${percent(choice.agreement)} agreement on ${calibration.length} calibration criteria${choice.targetMet ? '' : ` (target ${percent(flags.targetAgreement)} not reached)`}; held out (${held.criteria}): cascade ${percent(held.accuracy.cascade)}, strong alone ${percent(held.accuracy.strong_alone)}, cheap alone ${percent(held.accuracy.cheap_alone)}; ${held.escalated} escalated (${percent(held.escalation_rate)})`,
  );
  return exitCodes.success;
}
