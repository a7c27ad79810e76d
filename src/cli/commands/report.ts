import { Option, type Command } from 'commander';
import { RubricateError, exitCodes } from '../../errors.js';
import type { ReportFormat } from '../../report/types.js';
import { organizeHelp } from '../help.js';
import type { CommandContext } from '../context.js';
import { readFileSync } from 'node:fs';
import { checkFiles } from '../../util/files.js';
import { describeNonJsonl, wrongFileType } from '../../util/file-kind.js';
import { isRecord } from '../../util/is-record.js';
import { safeParseJson } from '../../util/json.js';

interface ReportFlags {
  input: string;
  compare?: string;
  labels?: string;
  format?: ReportFormat;
  out?: string;
  title?: string;
  scoring?: string;
}

export function registerReportCommand(program: Command, context: CommandContext): void {
  organizeHelp(
    program
      .command('report')
      .description('write a self-contained HTML report (or a Markdown summary) of a results file, a compare file or a meta-evaluation report')
      .requiredOption('--input <file>', 'results JSONL, compare JSONL, or a meta-evaluation report JSON (detected by content)')
      .option('--compare <file>', 'baseline results to compare with: items matched by id, Δ = input − compare')
      .option('--labels <file>', 'human labels (the labels JSONL of meta --labels, or a report\'s review export) laid over the input: agreement per criterion and tag, and the disagreements')
      .addOption(new Option('--format <format>', 'html or md (default: md when --out ends in .md, else html)').choices(['html', 'md']))
      .option('--out <file>', 'report file (default: the input\'s name ending in .html, or .md with --format md); "-" prints a Markdown summary to stdout')
      .option('--title <title>', 'report title')
      .option('--scoring <name>', 'scoring to apply (default: the one recorded in the results, else healthbench)'),
    [
      'rubricate report --input hb-results.jsonl --out hb-report.html',
      'rubricate report --input hb-results.jsonl --compare baseline.jsonl --out diff.html',
    ],
  )
    .action(async (flags: ReportFlags) => {
      context.exitCode = await runReport(flags, context);
    });
}

async function runReport(given: ReportFlags, context: CommandContext): Promise<number> {
  const flags = { ...given, out: given.out ?? defaultReportFile(given.input, given.format) };
  checkFiles({ inputs: [{ flag: 'input', path: flags.input }, { flag: 'compare', path: flags.compare }, { flag: 'labels', path: flags.labels }], outputs: [{ flag: 'out', path: flags.out === '-' ? undefined : flags.out }] });
  for (const file of [flags.input, flags.compare]) if (file) refuseWrongType(file);
  const onWarning = (message: string) => context.stderr(`invalid input: ${message}`);
  const common = { input: flags.input, compare: flags.compare, labels: flags.labels, title: flags.title, scoring: flags.scoring, onWarning };
  // Loaded here, not at registration: `report --help` and a refused command line skip the report's code (its page client, scoring, statistics).
  const { buildReport, renderReport, writeReportFromResults } = await import('../../report/index.js');
  if (flags.out === '-') {
    // Printing to a CI log: HTML would be unreadable there, so stdout gets Markdown.
    if (flags.format === 'html') throw new RubricateError('CONFIG_INVALID', 'an HTML report needs a file: --out FILE (stdout takes --format md)', { field: 'out' });
    const document = await buildReport(common);
    context.stdout(renderReport(document, 'md').trimEnd());
    return exitCodes.success;
  }
  const written = await writeReportFromResults({ ...common, out: flags.out, format: flags.format });
  const skipped = written.invalidLines > 0 ? ` (${written.invalidLines} unreadable lines skipped)` : '';
  context.stderr(`report: ${flags.out} (${written.format}, ${formatBytes(written.bytes)})${skipped}`);
  return exitCodes.success;
}

/** results.jsonl → results.html (results.md with --format md), beside the input. */
function defaultReportFile(input: string, format: ReportFormat | undefined): string {
  return `${input.replace(/\.(jsonl|json|ndjson)$/i, '')}.${format === 'md' ? 'md' : 'html'}`;
}

/**
 * An input that is none of what a report reads (JSON lines, or one meta-evaluation JSON document)
 * is INPUT_WRONG_TYPE (exit 2), as for every other command: a report of nothing is not written.
 */
function refuseWrongType(file: string): void {
  const looksLike = describeNonJsonl(file);
  if (!looksLike) return;
  const whole = safeParseJson(readFileSync(file, 'utf8').trim());
  if (whole.ok && isRecord(whole.value)) return;
  throw wrongFileType(file, looksLike, 'a results or compare file (JSON lines) or a meta-evaluation report (one JSON object)');
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} kB`;
  return `${bytes} B`;
}
