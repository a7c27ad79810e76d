/**
 * The JSON Schema of `--config` files, for editors (`assets/config.schema.json`): generated from
 * the options of the commands a config file is written for, so it lists every flag they take under
 * its long name, with its help text and its choices. `npm run config-schema` writes it; a test
 * fails while the file is not the one the commands give.
 */
import type { Command, Option } from 'commander';

/** The commands a starter config is written for (`rubricate init`), and whose flags the schema lists. */
export const configCommands = ['eval', 'grade', 'serve'] as const;

/** Where the schema is published in the package. */
export const configSchemaPath = 'assets/config.schema.json';

/** A flag's value in a config file: a switch is true or false; a repeatable flag also takes a list (headers a mapping). */
function valueSchema(option: Option): Record<string, unknown> {
  if (!option.required && !option.optional) return { type: 'boolean' };
  if (option.argChoices) return { enum: option.argChoices };
  const one = { type: ['string', 'number'] };
  const name = option.long!.slice(2);
  if (name.endsWith('header')) return { anyOf: [one, { type: 'array', items: one }, { type: 'object', additionalProperties: { type: 'string' } }] };
  if (/repeat/i.test(option.description)) return { anyOf: [one, { type: 'array', items: one }] };
  if (name.endsWith('extra-body')) return { anyOf: [{ type: 'string' }, { type: 'object' }] };
  return one;
}

/** The schema of a config file for these commands: every long flag (the `config` flag itself and `help` excepted). */
export function configSchemaOf(program: Command, commands: readonly string[] = configCommands): Record<string, unknown> {
  const properties: Record<string, Record<string, unknown>> = {};
  const usedBy: Record<string, string[]> = {};
  for (const name of commands) {
    const command = program.commands.find((candidate) => candidate.name() === name);
    if (!command) continue;
    for (const option of command.options) {
      const flag = option.long?.slice(2);
      if (!flag || flag === 'help' || flag === 'config') continue;
      (usedBy[flag] ??= []).push(name);
      properties[flag] ??= { ...valueSchema(option), description: option.description };
    }
  }
  const sorted = Object.fromEntries(
    Object.keys(properties)
      .sort()
      .map((flag) => [flag, { ...properties[flag], description: `${usedBy[flag].join(', ')}: ${String(properties[flag].description)}` }]),
  );
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'rubricate --config file',
    description: `Settings of rubricate ${commands.join(', ')} (rubricate COMMAND --config FILE): each key is a long flag name, as typed (kebab-case; camelCase is accepted too); flags given on the command line win. A key the command does not read is refused. Generated from the commands' options.`,
    type: 'object',
    additionalProperties: false,
    properties: sorted,
  };
}

/** The schema file's text, as written. */
export function configSchemaText(program: Command): string {
  return `${JSON.stringify(configSchemaOf(program), null, 2)}\n`;
}
