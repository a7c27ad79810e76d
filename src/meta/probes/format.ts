/** Plain-text rendering of a probe report for terminals and logs. */
import type { ConfidenceInterval } from '../../statistics/bootstrap.js';
import type { ProbeResult, ProbeSummary, Rate } from './analysis.js';
import type { ProbeReport } from './runner.js';

const missing = '\u2014';

function signed(value: number | null | undefined): string {
  if (value === null || value === undefined) return missing;
  const text = value.toFixed(4);
  return value > 0 ? `+${text}` : text;
}

function interval(value: ConfidenceInterval | null | undefined, format: (value: number) => string): string {
  return value ? `[${format(value.lower)}, ${format(value.upper)}]` : '';
}

function rate(value: Rate | undefined): string {
  if (!value || value.rate === null) return missing;
  return `${value.rate.toFixed(3)} (${value.count}/${value.of})`;
}

function renderTable(header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const widths = header.map((cell, column) => Math.max(cell.length, ...rows.map((row) => (row[column] ?? '').length)));
  const renderRow = (row: readonly string[]) =>
    row
      .map((cell, column) => (column === 0 || column === row.length - 1 ? cell.padEnd(widths[column]) : cell.padStart(widths[column])))
      .join('  ')
      .trimEnd();
  return [renderRow(header), widths.map((width) => '-'.repeat(width)).join('  '), ...rows.map(renderRow)].join('\n');
}

/** The rate each kind of probe is about: targeted flips (deletion), flips to met (injection), any flip (spurious). */
function keyRate(kind: ProbeResult['kind'], summary: ProbeSummary): Rate | undefined {
  if (kind === 'causal') return summary.target;
  if (kind === 'injection') return summary.flips.notMetToMet;
  return summary.flips.any;
}

function summaryRow(name: string, kind: ProbeResult['kind'], summary: ProbeSummary, assessment: string): string[] {
  const drift = summary.drift;
  const key = keyRate(kind, summary);
  return [
    name,
    signed(drift.mean),
    interval(drift.interval, (bound) => signed(bound)),
    `${drift.rose}/${drift.fell}/${drift.unchanged}`,
    rate(summary.flips.metToNotMet),
    rate(summary.flips.notMetToMet),
    `${rate(key)} ${interval(key?.interval, (bound) => bound.toFixed(3))}`.trim(),
    assessment,
  ];
}

const readings: Record<string, (result: ProbeResult) => string> = {
  spurious: (result) =>
    result.assessment === 'score rises'
      ? `${result.probe}: the score rises (${signed(result.drift.mean)}) when the response only gains ${result.description}; the judge can be gamed this way.`
      : result.assessment === 'verdicts flip, score unchanged'
        ? `${result.probe}: ${rate(result.flips.any)} of verdicts change under a change that should not matter (${result.description}), both ways, so the mean score hides it; the judge's verdicts are unstable here.`
        : `${result.probe}: the score falls (${signed(result.drift.mean)}) under a change that should not matter (${result.description}).`,
  injection: (result) =>
    `injection: ${rate(result.flips.notMetToMet)} of not-met verdicts became met when the response addressed the judge; the judge follows text inside the response.`,
  causal: (result) =>
    `deletion: removing the sentence that satisfies a criterion does not lower the score significantly (targeted flips ${rate(result.target)}); the judge may not be reading the content.`,
};

/** A readable summary: one row per probe (and per injection kind), then what the flagged rows mean. */
export function formatProbeTable(report: ProbeReport): string {
  const judge = report.judge ? `${report.judge.id} (${report.judge.mode}, ${report.judge.template_version})` : 'no judge';
  const header = [
    `Robustness probes: judge ${judge}, scoring ${report.scoring}`,
    `${report.items.probed} items (${report.items.originalOk} graded ok${report.items.originalFailed > 0 ? `, ${report.items.originalFailed} failed and not probed` : ''}), mean original score ${report.items.meanOriginalScore === null ? missing : report.items.meanOriginalScore.toFixed(4)}, ${report.variantsPerItem} variant(s) per item, seed ${report.seed}`,
  ].join('\n');
  const confidence = `${Math.round(report.bootstrap.confidence * 100)}% CI`;
  const rows: string[][] = [];
  for (const result of report.probes) {
    rows.push(summaryRow(result.probe, result.kind, result, `${result.assessment}${result.flagged ? ' !' : ''}`));
    for (const [variant, summary] of Object.entries(result.byVariant ?? {})) rows.push(summaryRow(`  ${variant}`, result.kind, summary, `${summary.assessment}${summary.flagged ? ' !' : ''}`));
  }
  const table = renderTable(['probe', 'score drift', confidence, 'up/down/same', 'met->not', 'not->met', `key flips (${confidence})`, 'assessment'], rows);
  const notes = [
    'key flips: any verdict change (spurious probes), not met -> met (injection), targeted criterion met -> not met (deletion; collateral flips are in the met->not and not->met columns).',
    '"!" marks a weakness: drift whose interval excludes 0, or verdicts that flip significantly, for a change that should not matter; any significant rise to met under injection; or, under deletion, neither a significant fall nor significant flips of the targeted criterion.',
  ];
  const flagged = report.probes.filter((result) => result.flagged).map((result) => `- ${readings[result.kind](result)}`);
  const failures = report.probes.filter((result) => result.variants.failed > 0).map((result) => `${result.probe}: ${result.variants.failed} variant(s) could not be graded and are left out`);
  const sections = [header, table, notes.join('\n')];
  if (flagged.length > 0) sections.push(`Weaknesses found:\n${flagged.join('\n')}`);
  else sections.push('No weakness found by these probes.');
  if (failures.length > 0) sections.push(failures.join('\n'));
  return `${sections.join('\n\n')}\n`;
}
