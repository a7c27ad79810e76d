/**
 * `--config FILE`: a command's flags written down once, in YAML or JSON. Its keys are the long
 * flag names (kebab, as typed: `samples-per-prompt`, or camelCase: `samplesPerPrompt`), so a flag
 * line converts by rote. The file's settings become flags placed before the command line's own,
 * and go through the same option parsers and the same run-spec mapping as typed flags; a flag
 * given on the command line replaces the file's value (repeatable flags too). A key the command
 * does not read is refused by name, with the nearest name, as an unknown flag is.
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Command, Option } from 'commander';
import { RubricateError } from '../errors.js';
import { isRecord } from '../util/is-record.js';
import { redactDeep } from '../util/redact.js';
import { nearestName } from '../util/registry.js';

/** A config file is a page of settings: anything larger is not one. */
const maxConfigBytes = 1024 * 1024;

/** What a run read from `--config`: the file as named and every setting the run was given (secrets left out), for its results. */
export interface ResolvedConfig {
  file: string;
  settings: Record<string, unknown>;
}

/** `--config FILE` in a command's help (the flag itself is read before the command line is parsed). */
export function addConfigOption(command: Command): Command {
  return command.option('--config <file>', 'settings from a YAML or JSON file whose keys are the long flag names (model: …, samples-per-prompt: 4); flags typed on the command line win; `rubricate init` writes a starter');
}

/** The results lines with the run's resolved config on each. */
export async function* withResolvedConfig<Line extends object>(lines: AsyncIterable<Line>, config: ResolvedConfig | undefined): AsyncGenerator<Line> {
  for await (const line of lines) yield config ? { ...line, config } : line;
}

/** Where `--config` stands in a command line: its file, and the line without it. */
export function takeConfigFlag(argv: readonly string[]): { file?: string; rest: string[] } {
  const rest: string[] = [];
  let file: string | undefined;
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index];
    if (argument === '--') {
      rest.push(...argv.slice(index));
      break;
    }
    if (argument === '--config' || argument.startsWith('--config=')) {
      if (file !== undefined) throw new RubricateError('CONFIG_INVALID', '--config is given twice: give one config file', { field: 'config' });
      file = argument === '--config' ? argv[(index += 1)] : argument.slice('--config='.length);
      if (file === undefined || file === '') throw new RubricateError('CONFIG_INVALID', '--config needs a file: --config rubricate.yaml', { field: 'config' });
      continue;
    }
    rest.push(argument);
  }
  return { file, rest };
}

/** The file's settings: a YAML or JSON mapping, read within its size bound. */
export function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    const size = statSync(file).size;
    if (size > maxConfigBytes) throw new RubricateError('CONFIG_INVALID', `${file}: a config file is at most ${maxConfigBytes} bytes, this one has ${size}`, { field: 'config', file });
    const buffer = Buffer.alloc(size);
    const descriptor = openSync(file, 'r');
    try {
      readSync(descriptor, buffer, 0, size, 0);
    } finally {
      closeSync(descriptor);
    }
    text = new TextDecoder('utf-8', { fatal: true }).decode(buffer);
  } catch (error) {
    if (RubricateError.isInstance(error)) throw error;
    throw new RubricateError('INPUT_UNREADABLE', `--config: cannot read ${file}: ${(error as Error).message}`, { field: 'config', file });
  }
  let parsed: unknown;
  try {
    // YAML 1.2 reads JSON too; aliases are bounded so that a small file cannot expand without limit.
    const { parse } = createRequire(import.meta.url)('yaml') as { parse: (text: string, options: Record<string, unknown>) => unknown };
    parsed = parse(text, { maxAliasCount: 100, uniqueKeys: true });
  } catch (error) {
    const line = (error as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
    throw new RubricateError('CONFIG_INVALID', `${file}: not YAML or JSON: ${(error as Error).message.split('\n')[0]}`, { field: 'config', file, ...(line !== undefined ? { line } : {}) });
  }
  if (parsed === null || parsed === undefined) return {};
  if (!isRecord(parsed)) throw new RubricateError('CONFIG_INVALID', `${file}: a config file is a mapping of flag names to values (e.g. "judge: openai:gpt-4.1-mini")`, { field: 'config', file });
  return parsed;
}

/** `samplesPerPrompt` → `samples-per-prompt`; kebab names stay as they are. */
export function flagNameOf(key: string): string {
  return key.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/** The option a config key sets, and whether a `false` turns it off (`text: false` → `--no-text`). */
function optionFor(command: Command, name: string, value: unknown): { option: Option; negated: boolean } | undefined {
  const negation = command.options.find((candidate) => candidate.long === `--no-${name}`);
  // `cache: false` is `--no-cache`, though `--cache <file>` exists too.
  if (negation && value === false) return { option: negation, negated: true };
  const option = command.options.find((candidate) => candidate.long === `--${name}`);
  if (option) return { option, negated: false };
  return negation ? { option: negation, negated: true } : undefined;
}

/** A value as the flag's arguments: repeated for a list, `NAME=VALUE` per header, JSON for any other object. */
function argumentsOf(name: string, value: unknown, file: string): string[] {
  if (Array.isArray(value)) return value.flatMap((entry) => argumentsOf(name, entry, file));
  if (isRecord(value)) return name.endsWith('header') ? Object.entries(value).map(([header, text]) => `${header}=${String(text)}`) : [JSON.stringify(value)];
  if (value === null || value === undefined) throw new RubricateError('CONFIG_INVALID', `${file}: "${name}" has no value: give one, or leave the key out`, { field: name, file });
  return [String(value)];
}

/** The flags a config file's settings stand for, in the file's order; `given`: flags on the command line, which win. */
function flagsOf(command: Command, settings: Record<string, unknown>, file: string, given: ReadonlySet<string>): string[] {
  const flags: string[] = [];
  const known = command.options.flatMap((option) => (option.long ? [option.long.slice(2)] : [])).filter((name) => name !== 'help');
  for (const [key, value] of Object.entries(settings)) {
    const name = flagNameOf(key);
    const target = optionFor(command, name, value);
    if (name === 'config') throw new RubricateError('CONFIG_INVALID', `${file}: a config file cannot name another one ("${key}")`, { field: key, file });
    if (!target || name === 'help') {
      const nearest = nearestName(name, known);
      throw new RubricateError('CONFIG_INVALID', `${file}: "${key}" is not a setting of rubricate ${command.name()}${nearest ? ` (did you mean "${nearest}"?)` : ''}`, { field: key, file });
    }
    const { option, negated } = target;
    const long = option.long!;
    if (given.has(long) || given.has(long.replace(/^--no-/, '--')) || (!negated && given.has(`--no-${name}`))) continue;
    const takesValue = option.required || option.optional;
    if (!takesValue) {
      if (typeof value !== 'boolean') throw new RubricateError('CONFIG_INVALID', `${file}: "${key}" is a switch: true or false, got ${JSON.stringify(value)}`, { field: key, file });
      // A switch is on when its flag is given: `text: false` gives `--no-text`, `strict: false` gives nothing.
      if (value !== negated) flags.push(long);
      continue;
    }
    for (const argument of argumentsOf(name, value, file)) flags.push(long, argument);
  }
  return flags;
}

/** The long flags a command line gives (`--judge`, `--timeout=5` → `--timeout`). */
function givenFlags(argv: readonly string[]): Set<string> {
  return new Set(argv.filter((argument) => argument.startsWith('--')).map((argument) => argument.replace(/=.*$/, '')));
}

/**
 * The command line with the config file's flags put right after the command's name, before the
 * flags typed after it (which therefore win), or as it was without `--config`.
 */
export function withConfigFlags(program: Command, rest: readonly string[], file: string | undefined): string[] {
  if (file === undefined) return [...rest];
  const at = rest.findIndex((argument) => !argument.startsWith('-'));
  const command = at === -1 ? undefined : program.commands.find((candidate) => candidate.name() === rest[at]);
  if (!command) throw new RubricateError('CONFIG_INVALID', '--config goes with a command: rubricate eval --config rubricate.yaml', { field: 'config' });
  const flags = flagsOf(command, readConfigFile(file), file, givenFlags(rest.slice(at + 1)));
  return [...rest.slice(0, at + 1), ...flags, ...rest.slice(at + 1)];
}

/** Flag names whose values are secrets: never recorded. */
const secretFlag = /(api-key|token|header)$/;

/** The settings a run was given (by the file or the command line), by flag name, without secrets: what its results record. */
export function resolvedConfigOf(command: Command, file: string | undefined): ResolvedConfig | undefined {
  if (file === undefined) return undefined;
  const settings: Record<string, unknown> = {};
  for (const option of command.options) {
    if (!option.long || option.long === '--help') continue;
    const attribute = option.attributeName();
    const source = command.getOptionValueSource(attribute);
    if (source === undefined || source === 'default' || source === 'implied') continue;
    const name = option.long.slice(2).replace(/^no-/, '');
    if (secretFlag.test(name)) continue;
    settings[name] = command.getOptionValue(attribute);
  }
  // Credentials in a URL (`https://user:key@host`) or a query are redacted as in every output.
  return { file, settings: redactDeep(settings) };
}
