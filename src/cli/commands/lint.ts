import type { Command } from 'commander';
import { exitCodes, RubricateError } from '../../errors.js';
import { lintRuleIds, type LintFinding } from '../../lint/types.js';
import { getItemImporter, itemImporters } from '../../rubric/formats/index.js';
import { checkFiles, JsonLinesWriter } from '../../util/files.js';
import { quietHelp, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { addInputOptions, importOptionsFrom, refuseInapplicableFlags, type InputFlags } from '../input-options.js';
import { lintInput, rubricsFormat } from '../lint-input.js';

interface LintFlags extends InputFlags {
  out?: string;
  generic?: boolean;
  quiet?: boolean;
}

export function registerLintCommand(program: Command, context: CommandContext): void {
  const command = program.command('lint').description('check rubrics before grading: contradictions, vague or stacked criteria, duplicates, option labels, weights, hard rules (exit 3 on errors)');
  addInputOptions(command, { formatHelp: `input format (${[rubricsFormat, ...itemImporters.names()].join(', ')}; ${rubricsFormat}: a rubrics file, each rubric with an id)`, responseFromVerb: 'read' });
  command
    .option('--generic', 'the rubrics are meant for any prompt: flag topic-specific wording (a rubric may say so itself with metadata.generic: true)')
    .option('--out <file>', 'write every finding as a JSON line (rule, severity, rubric_id, item_id, criterion_id, related_criterion_id, message, fix)')
    .option('--quiet', quietHelp);
  organizeHelp(command, [
    'rubricate lint --format healthbench --input examples/healthbench/examples.jsonl',
    `rubricate lint --format ${rubricsFormat} --input examples/lint/rubrics.jsonl --generic --out lint-findings.jsonl`,
  ]).action(async (flags: LintFlags) => {
    context.exitCode = await runLint(flags, context);
  });
}

async function runLint(flags: LintFlags, context: CommandContext): Promise<number> {
  if (flags.format === rubricsFormat) {
    const extra = (['responses', 'responseFrom', 'rubrics', 'examples', 'imageRoot'] as const).find((name) => flags[name] !== undefined);
    if (extra) throw new RubricateError('CONFIG_INVALID', `--format ${rubricsFormat} reads rubrics alone: leave out --${extra.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`, { field: extra });
  } else {
    refuseInapplicableFlags(flags, getItemImporter(flags.format));
  }
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input }, { flag: 'rubrics', path: flags.rubrics }, { flag: 'examples', path: flags.examples }],
    outputs: [{ flag: 'out', path: flags.out }],
  });
  const options = flags.format === rubricsFormat ? {} : await importOptionsFrom({ ...flags, responses: undefined }, context);
  const writer = flags.out ? new JsonLinesWriter(flags.out) : undefined;
  const printFinding = (finding: LintFinding) => {
    if (flags.quiet) return;
    context.stdout(`${finding.severity.padEnd(7)}  ${finding.rule.padEnd(longestRule)}  ${finding.message}`);
    context.stdout(`${' '.repeat(9 + longestRule)}fix: ${finding.fix}`);
  };
  let tally;
  try {
    tally = await lintInput({ format: flags.format, input: flags.input, options }, context, { generic: flags.generic }, async (finding) => {
      printFinding(finding);
      await writer?.write(finding);
    });
  } catch (error) {
    await writer?.discard();
    throw error;
  }
  await writer?.close();
  if (!flags.quiet) {
    const invalid = tally.invalid > 0 ? `; ${tally.invalid} input record${tally.invalid === 1 ? '' : 's'} could not be read` : '';
    context.stderr(`lint: ${tally.rubrics} rubric${tally.rubrics === 1 ? '' : 's'}, ${tally.criteria} criteria: ${tally.errors} error${tally.errors === 1 ? '' : 's'}, ${tally.warnings} warning${tally.warnings === 1 ? '' : 's'}${invalid}${flags.out ? ` (written to ${flags.out})` : ''}`);
  }
  return tally.errors > 0 || tally.invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
}

const longestRule = Math.max(...lintRuleIds.map((rule) => rule.length));

