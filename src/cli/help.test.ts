import { describe, expect, it } from 'vitest';
import { helpSectionOf, helpSections } from './help.js';
import { commandLineProblem, runCliCaptured } from './in-process.js';
import { buildProgram } from './main.js';

const context = { stdout: () => undefined, stderr: () => undefined, signal: new AbortController().signal, exitCode: 0 };

/** The example commands a command's help ends with. */
function examplesOf(help: string): string[] {
  const block = help.split('\nExamples:\n')[1] ?? '';
  return block.split('\n').filter((line) => line.startsWith('  ')).map((line) => line.trim());
}

/** Shell-like words of an example (quotes removed; a leading VAR=value and a trailing comment or `&` left out). */
function words(line: string): string[] {
  const found = [...line.replace(/\s+#.*$/, '').replace(/\s*&$/, '').matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2] ?? match[3]);
  return found.slice(found.findIndex((word) => word === 'rubricate') + 1);
}

describe('--version', () => {
  it('prints the version without loading any command, and the full help still lists them all', async () => {
    expect((await buildProgram(context, ['--version'])).commands).toHaveLength(0);
    const { stdout, code } = await runCliCaptured(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect((await buildProgram(context, ['--version', '--help'])).commands.length).toBeGreaterThan(20);
  });
});

describe('--help', () => {
  it('places every option of every command in a section', async () => {
    const program = await buildProgram(context);
    const unplaced = program.commands.flatMap((command) => command.options.filter((option) => !option.hidden && !helpSectionOf(option.long!)).map((option) => `${command.name()} ${option.long}`));
    expect(unplaced).toEqual([]);
  });

  it('lists grade\'s options in its seven sections, in order, then two examples', async () => {
    const { stdout, code } = await runCliCaptured(['grade', '--help']);
    expect(code).toBe(0);
    const headings = stdout.split('\n').filter((line) => /^[A-Z][\w -]*:$/.test(line));
    expect(headings).toEqual(['Input:', 'Judge:', 'Grading:', 'Output:', 'Scale-out:', 'Batch and cost:', 'Interrupts:', 'Options:', 'Examples:']);
    expect(headings.slice(0, -2).every((heading) => helpSections.includes(heading.slice(0, -1) as never))).toBe(true);
    const section = (name: string) => stdout.split(`\n${name}:\n`)[1].split(/\n\n/)[0];
    expect(section('Input')).toMatch(/--limit <n>/);
    expect(section('Output')).toMatch(/--quiet {2,}only errors and warnings on stderr/);
    expect(section('Options')).toMatch(/^ {2}-h, --help/);
    expect(section('Options').trim().split('\n')).toHaveLength(1);
  });

  it('gives every command two examples, each a valid command line', async () => {
    const program = await buildProgram(context);
    for (const command of program.commands.filter((entry) => entry.name() !== 'cache')) {
      const { stdout } = await runCliCaptured([command.name(), '--help']);
      const examples = examplesOf(stdout);
      expect(examples, command.name()).toHaveLength(2);
      expect(words(examples[0])[0], examples[0]).toBe(command.name());
      for (const example of examples) expect(await commandLineProblem(words(example)), example).toBeUndefined();
    }
  });

  it('finds what is wrong with a command line without running it', async () => {
    expect(await commandLineProblem(['grade', '--input', 'x.jsonl', '--no-such-flag'])).toMatch(/unknown option '--no-such-flag'/);
    expect(await commandLineProblem(['grade', '--input', 'x.jsonl', '--mode', 'sideways'])).toMatch(/argument 'sideways' is invalid/);
    expect(await commandLineProblem(['grade', '--input', 'does-not-exist.jsonl'])).toBeUndefined();
  });
});
