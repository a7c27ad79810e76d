/**
 * `--help` in sections (Input, Judge, Grading, Output, Scale-out, Batch and cost, Interrupts, and
 * the generator's, the server's…), each option placed by its name in one table, and two example
 * commands per command. A command's options come from several modules (judge, run-spec, batch,
 * queue flags); placing them here, once all are added, keeps those modules unaware of the help.
 */
import type { Command } from 'commander';

/** Sections in the order the help lists them. */
export const helpSections = ['Input', 'Model under test', 'Judge', 'Generator', 'Grading', 'Generation', 'Output', 'Scale-out', 'Batch and cost', 'Interrupts', 'Server', 'Benchmark'] as const;
export type HelpSection = (typeof helpSections)[number];

/** The first rule that matches an option's long name (without `--` and `no-`) places it. */
const rules: ReadonlyArray<readonly [RegExp, HelpSection]> = [
  [/^(config|for|format|input|benchmark|fetch-data|responses|response-from|rubrics|examples|limit|strict|labels|outcome-field|source-field|reference-field|responses-per-prompt|items|split|image-root|allow-private-image-urls|held-out|holdout|test-fraction|split-seed|cheap|strong|kind|pairing|judging|train|test|scores|results|generic|golden|baseline)$/, 'Input'],
  [/^generator/, 'Generator'],
  // `eval`'s model flags; its `--model` itself is placed by the command (bench-local has a `--model` of its own).
  [/^(model-(?!under-test$).*|samples-per-prompt)$/, 'Model under test'],
  [/^(judge|judge-.*|max-reply-bytes|cache-namespace|structured-output|reasoning-effort|azure-api-version|thinking-budget|threads|sequences|context-size|concurrency|max-attempts|timeout|max-retry-after|breaker-threshold|cache|cache-ttl|verdicts|cascade-judge|escalate-band|escalate-on|strong-model|canary|fetch-.*|documents)$/, 'Judge'],
  [/^(mode|criteria-per-call|likert-levels|context-budget|verdict|top-logprobs|explanation|temperature|max-tokens|seed|samples|jury-aggregate|scoring|check-mode|failed-as-zero|include-checks|swap|ties|overall|probes|variants|probe-seed|bootstrap-.*|confidence|group-by|abstain|alignment|calibration|listwise|tournament|orders|repeats|stability-threshold|max-group-size|max-tournament-pairs|max-repeats|max-steps|model-under-test|self-preference|examples-per-verdict|reword|reword-below|max-rewordings|target-agreement|lint|accept|max-flip-rate|meta|meta-rubric)$/, 'Grading'],
  [/^(attempts|iterations|filter|gate|importance-points|min-criteria|max-criteria|cluster-threshold|correlation-threshold|pass-rate-.*|response-max-tokens|response-temperature|text-similarity|best-of|rounds|distill|distill-.*)$/, 'Generation'],
  [/^(out|run-index|metrics|metrics-format|report|summary|force|quiet|table|text|title|compare|json|keep-requests|variants-out|calibration-out|write-replay|write-items|min-margin|min-score|top-k|target|allow-scripted)$/, 'Output'],
  [/^(queue|chunk-size|shard|store|global-concurrency|rate-limit|lease|exit-when-idle|queue-timeout|allow-endpoint)$/, 'Scale-out'],
  [/^(batch|batch-.*|dry-run|prices|refresh|cancel)$/, 'Batch and cost'],
  [/^drain-timeout$/, 'Interrupts'],
  [/^(host|port|token|adapters|allow-origin|deadline|evolve-.*|log-level|max-body-bytes|max-queue|max-waiting|on-error|pool-cooldown|expected-step-size|audit-.*)$/, 'Server'],
  [/^(criteria|model|plans|quantization|quick|shape)$/, 'Benchmark'],
];

/** The section of an option (by its long name), or undefined when no rule places it. */
export function helpSectionOf(long: string): HelpSection | undefined {
  const name = long.replace(/^--(no-)?/, '');
  return rules.find(([pattern]) => pattern.test(name))?.[1];
}

/**
 * Places every option of `command` in its section, in the table's order, and ends its help with
 * two example commands. Call it once the command has all its options.
 */
export function organizeHelp(command: Command, examples: readonly [string, string]): Command {
  for (const option of command.options) {
    const section = option.long ? helpSectionOf(option.long) : undefined;
    if (section) option.helpGroup(`${section}:`);
  }
  const rank = (heading: string) => {
    const index = helpSections.indexOf(heading.replace(/:$/, '') as HelpSection);
    return index === -1 ? helpSections.length : index;
  };
  return command
    .configureHelp({
      // The sections in the table's order (commander would list them in the order their first option was added).
      groupItems<T>(_all: T[], visible: T[], groupOf: (item: T) => string): Map<string, T[]> {
        const groups = new Map<string, T[]>();
        for (const item of visible) groups.set(groupOf(item), [...(groups.get(groupOf(item)) ?? []), item]);
        return new Map([...groups].sort(([first], [second]) => rank(first) - rank(second)));
      },
    })
    .addHelpText('after', `\nExamples:\n${examples.map((example) => `  ${example}`).join('\n')}`);
}
