/**
 * Old flag names kept as deprecated aliases for one minor version: hidden from --help, still
 * accepted, and each use prints one line naming the flag to use instead. The one list of them
 * is `deprecatedFlags` below (the README's "Renamed flags" table; test/cli-flag-aliases.test.ts runs each).
 */
import { Option, type Command } from 'commander';
import { RubricateError } from '../errors.js';
import type { CommandContext } from './context.js';

/** A deprecated flag: how commander declares it, and how its value maps onto the current flags. */
export interface DeprecatedFlag {
  command: string;
  /** As commander declares it, e.g. `--report <file>`. */
  declaration: string;
  /** The flag to use instead, as the notice names it. */
  replacement: string;
  /** Writes the old flag's value into the current options (throws CONFIG_INVALID on a conflict). */
  apply(value: unknown, options: Record<string, unknown>, isDefault: (name: string) => boolean): void;
}

function rename(command: string, old: string, replacement: string, attribute: string): DeprecatedFlag {
  return {
    command,
    declaration: `--${old} <value>`,
    replacement: `--${replacement}`,
    apply(value, options, isDefault) {
      if (options[attribute] !== undefined && !isDefault(attribute) && options[attribute] !== value) {
        throw new RubricateError('CONFIG_INVALID', `--${old} is the old name of --${replacement}: give only --${replacement}`, { field: old });
      }
      options[attribute] = value;
    },
  };
}

export const deprecatedFlags: readonly DeprecatedFlag[] = [
  // JSON summaries are --summary (as on compare); --report is the HTML report (as on grade).
  rename('generate', 'report', 'summary', 'summary'),
  rename('refine', 'report', 'summary', 'summary'),
  // A responses file is --responses everywhere (grade, probe, convert).
  rename('refine', 'responses-file', 'responses', 'responses'),
  // Every command reads --input in --format; generate's pairs are one more format of its input.
  {
    command: 'generate',
    declaration: '--pairs <file>',
    replacement: '--input FILE --format pairs',
    apply(value, options, isDefault) {
      if (options.input !== undefined) throw new RubricateError('CONFIG_INVALID', '--pairs is the old way of giving --input with a pairs --format: give only --input', { field: 'pairs' });
      options.input = value;
      if (isDefault('format')) options.format = 'pairs';
    },
  },
  {
    command: 'generate',
    declaration: '--pairs-format <name>',
    replacement: '--format',
    apply(value, options, isDefault) {
      if (!isDefault('format') && options.format !== value) throw new RubricateError('CONFIG_INVALID', '--pairs-format is the old name of --format: give only --format', { field: 'pairs-format' });
      options.format = value === 'jsonl' ? 'pairs' : value;
    },
  },
];

/** Adds the command's deprecated aliases (hidden) and turns their values into the current flags before it runs. */
export function addDeprecatedFlags(command: Command, context: CommandContext): void {
  const mine = deprecatedFlags.filter((flag) => flag.command === command.name());
  for (const flag of mine) command.addOption(new Option(flag.declaration).hideHelp());
  if (mine.length === 0) return;
  command.hook('preAction', (self) => {
    const options = self.opts<Record<string, unknown>>();
    for (const flag of mine) {
      const attribute = new Option(flag.declaration).attributeName();
      const value = options[attribute];
      if (value === undefined) continue;
      context.stderr(`warning: ${flag.declaration.split(' ')[0]} is deprecated: use ${flag.replacement} (the old name stops working in the next minor version)`);
      const updated = { ...options };
      delete updated[attribute];
      flag.apply(value, updated, (name) => self.getOptionValueSource(name) === 'default' || self.getOptionValueSource(name) === undefined);
      for (const [name, next] of Object.entries(updated)) if (next !== options[name]) self.setOptionValue(name, next);
      self.setOptionValue(attribute, undefined);
    }
  });
}

/** A notice for a deprecated value of a current flag (e.g. `refine --responses 8`, now --responses-per-prompt). */
export function deprecatedValue(context: CommandContext, old: string, replacement: string): void {
  context.stderr(`warning: ${old} is deprecated: use ${replacement} (the old form stops working in the next minor version)`);
}
