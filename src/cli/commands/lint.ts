import type { Command } from 'commander';
import { exitCodes, RubricateError } from '../../errors.js';
import { lintRuleIds, metaRuleIds, type LintFinding } from '../../lint/types.js';
import { defaultMetaRubric, metaFindings, metaItem, singleMetaRubric } from '../../lint/meta-rubric.js';
import { Grader } from '../../pipeline/grader.js';
import type { RunSpec } from '../../spec/run-spec.js';
import { addJudgeOptions } from '../judge-options.js';
import { loadRubrics } from '../rubrics-file.js';
import { modelFromFlags, runSpecOf } from '../run-spec-flags.js';
import { openRunSession, type SessionFlags } from '../session.js';
import { storeFilesOf } from '../store-options.js';
import { getItemImporter, itemImporters } from '../../formats/index.js';
import { checkFiles, JsonLinesWriter } from '../../util/files.js';
import { quietHelp, type CommandContext } from '../context.js';
import { organizeHelp } from '../help.js';
import { addInputOptions, importOptionsFrom, refuseInapplicableFlags, type InputFlags } from '../input-options.js';
import { lintInput, rubricsFormat } from '../lint-input.js';

interface LintFlags extends InputFlags, SessionFlags {
  out?: string;
  generic?: boolean;
  quiet?: boolean;
  /** `--meta`: a judge also grades each rubric on the meta-rubric. */
  meta?: boolean;
  metaRubric?: string;
}

export function registerLintCommand(program: Command, context: CommandContext): void {
  const command = program.command('lint').description('check rubrics before grading: contradictions, vague or stacked criteria, duplicates, option labels, weights, hard rules (exit 3 on errors)');
  addInputOptions(command, { formatHelp: `input format (${[rubricsFormat, ...itemImporters.names()].join(', ')}; ${rubricsFormat}: a rubrics file, each rubric with an id)`, responseFromVerb: 'read' });
  command
    .option('--generic', 'the rubrics are meant for any prompt: flag topic-specific wording (a rubric may say so itself with metadata.generic: true)')
    .option('--out <file>', 'write every finding as a JSON line (rule, severity, rubric_id, item_id, criterion_id, related_criterion_id, message, fix)')
    .option('--meta', 'also have the judge grade each rubric on the meta-rubric (grounding specified, unverifiable claims, overly strict requirements, atomicity): its findings are warnings')
    .option('--meta-rubric <file>', 'with --meta: a rubrics file holding the one meta-rubric to grade with instead of the built-in one')
    .option('--quiet', quietHelp);
  addJudgeOptions(command, ['plan', 'sampling', 'calls', 'text', 'limits']);
  organizeHelp(command, [
    'rubricate lint --format healthbench --input examples/healthbench/examples.jsonl',
    `rubricate lint --format ${rubricsFormat} --input examples/lint/rubrics.jsonl --generic --out lint-findings.jsonl`,
  ]).action(async (flags: LintFlags, self: Command) => {
    const judged = ['judge', 'metaRubric'].find((name) => self.getOptionValueSource(name) === 'cli');
    if (!flags.meta && judged) throw new RubricateError('CONFIG_INVALID', `--${judged === 'judge' ? 'judge' : 'meta-rubric'} applies with --meta (static lint asks no model)`, { field: judged === 'judge' ? 'judge' : 'meta-rubric' });
    context.exitCode = await runLint(flags, flags.meta ? runSpecOf(self) : undefined, context);
  });
}

async function runLint(flags: LintFlags, spec: RunSpec | undefined, context: CommandContext): Promise<number> {
  if (flags.format === rubricsFormat) {
    const extra = (['responses', 'responseFrom', 'rubrics', 'examples', 'imageRoot'] as const).find((name) => flags[name] !== undefined);
    if (extra) throw new RubricateError('CONFIG_INVALID', `--format ${rubricsFormat} reads rubrics alone: leave out --${extra.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`, { field: extra });
  } else {
    refuseInapplicableFlags(flags, getItemImporter(flags.format));
  }
  checkFiles({
    inputs: [{ flag: 'input', path: flags.input }, { flag: 'rubrics', path: flags.rubrics }, { flag: 'examples', path: flags.examples }, { flag: 'meta-rubric', path: flags.metaRubric }],
    outputs: [{ flag: 'out', path: flags.out }],
    keep: spec ? storeFilesOf(flags) : [],
  });
  const meta = spec ? await openMetaGrading(flags, spec, context) : undefined;
  const options = flags.format === rubricsFormat ? {} : await importOptionsFrom({ ...flags, responses: undefined }, context);
  const writer = flags.out ? new JsonLinesWriter(flags.out) : undefined;
  const printFinding = (finding: LintFinding) => {
    if (flags.quiet) return;
    context.stdout(`${finding.severity.padEnd(7)}  ${finding.rule.padEnd(longestRule)}  ${finding.message}`);
    context.stdout(`${' '.repeat(9 + longestRule)}fix: ${finding.fix}`);
  };
  const report = async (finding: LintFinding) => {
    printFinding(finding);
    await writer?.write(finding);
  };
  let tally;
  let metaCount = 0;
  try {
    tally = await lintInput({ format: flags.format, input: flags.input, options }, context, { generic: flags.generic }, report, meta && (async (rubric, itemId) => {
      for (const finding of metaFindings(await meta.grader.gradeItem(metaItem(rubric, meta.metaRubric)), itemId)) {
        metaCount += 1;
        await report(finding);
      }
    }));
  } catch (error) {
    await writer?.discard();
    await meta?.session.close();
    throw error;
  }
  await writer?.close();
  meta?.session.finish();
  await meta?.session.close();
  if (!flags.quiet) {
    const invalid = tally.invalid > 0 ? `; ${tally.invalid} input record${tally.invalid === 1 ? '' : 's'} could not be read` : '';
    context.stderr(`lint: ${tally.rubrics} rubric${tally.rubrics === 1 ? '' : 's'}, ${tally.criteria} criteria: ${tally.errors} error${tally.errors === 1 ? '' : 's'}, ${tally.warnings} warning${tally.warnings === 1 ? '' : 's'}${invalid}${flags.out ? ` (written to ${flags.out})` : ''}`);
    if (meta) context.stderr(`meta-rubric (${meta.metaRubric.id}, judge ${meta.session.judge?.provenance.id ?? 'none'}): ${metaCount} finding${metaCount === 1 ? '' : 's'}${meta.madeUp() ? ' [made-up verdicts: no model was asked]' : ''}`);
  }
  return tally.errors > 0 || tally.invalid > 0 ? exitCodes.itemsFailed : exitCodes.success;
}

const longestRule = Math.max(...[...lintRuleIds, ...metaRuleIds].map((rule) => rule.length));

/** `lint --meta`: the judge's session and grader, and the meta-rubric it grades with. */
async function openMetaGrading(flags: LintFlags, spec: RunSpec, context: CommandContext) {
  const metaRubric = flags.metaRubric ? singleMetaRubric(await loadRubrics(flags.metaRubric), flags.metaRubric) : defaultMetaRubric();
  const session = await openRunSession(spec, modelFromFlags(flags, 'judge').credentials, flags, { context, out: flags.out, needsJudge: 'lint --meta needs a judge to grade the rubrics with (--judge SPEC; --judge scripted asks no model)' });
  const grader = new Grader({ ...session.graderOptions(), signal: context.signal });
  const judge = session.judge?.provenance;
  return { session, grader, metaRubric, madeUp: () => judge?.model === 'scripted' || judge?.id.startsWith('scripted:') === true };
}

