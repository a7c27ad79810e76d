/**
 * The commands in the README's quick start, docs/formats.md and docs/judging.md run as written, on the files
 * in examples/, against a loopback judge that answers every request in the shape the request
 * asks for (its JSON schema). Each must exit 0, or the code its `# exit N` comment names, and
 * every output it names must exist. The walkthrough of docs/meta-evaluation.md runs in order in
 * one folder, each command reading what the earlier ones wrote. Docs that drift from the code
 * fail here.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { binaryVerdict, type FakeJudgeRequest } from '../src/testing/fake-judge.js';
import { test } from '../src/testing/vitest-fixtures.js';
import { projectRoot, runCliInProcess } from './helpers.js';

interface DocCommand {
  source: string;
  args: string[];
  exit: number;
}

/** Shell-like words of one command line (plain and single- or double-quoted words; no expansions). */
function words(line: string): string[] {
  const found: string[] = [];
  for (const match of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) found.push(match[1] ?? match[2] ?? match[3]);
  return found;
}

/** `rubricate …` lines of the fenced bash blocks of a Markdown file (`npx rubricate …` too); only the first block with `firstBlock`. */
function commandsIn(file: string, options: { firstBlock?: boolean } = {}): DocCommand[] {
  const blocks = [...readFileSync(join(projectRoot, file), 'utf8').matchAll(/```bash\n([\s\S]*?)```/g)].map((block) => block[1]);
  const commands: DocCommand[] = [];
  for (const block of options.firstBlock ? blocks.slice(0, 1) : blocks) {
    for (const raw of block.split('\n')) {
      const line = raw.replace(/^npm ci && /, '').trim();
      const match = /^(?:npx )?rubricate (.*?)(?:\s+#\s*exit (\d+))?(?:\s+#.*)?$/.exec(line);
      if (!match) continue;
      commands.push({ source: `${file}: ${line}`, args: words(match[1]), exit: match[2] ? Number(match[2]) : 0 });
    }
  }
  return commands;
}

const outputFlags = new Set(['--out', '--metrics', '--report', '--summary']);

/**
 * The command's arguments with examples/… read from the checkout and outputs written in
 * `directory`; in a walkthrough, the files earlier commands wrote are read from there too.
 */
function placed(args: readonly string[], directory: string, written: ReadonlySet<string> = new Set()): string[] {
  return args.map((argument, index) => {
    if (argument.startsWith('examples/')) return join(projectRoot, argument);
    if (outputFlags.has(args[index - 1] ?? '') || written.has(argument)) return join(directory, argument);
    return argument;
  });
}

/** A value that satisfies a JSON schema, choosing the last enum member (a scale's top label). */
function conforming(schema: Record<string, unknown>): unknown {
  if (Array.isArray(schema.enum)) return schema.enum.at(-1);
  if (schema.const !== undefined) return schema.const;
  const choices = (schema.anyOf ?? schema.oneOf) as Array<Record<string, unknown>> | undefined;
  if (choices) return conforming(choices[0]);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'object') {
    const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
    return Object.fromEntries(Object.entries(properties).map(([name, property]) => [name, conforming(property)]));
  }
  if (type === 'array') return Array.from({ length: Number(schema.minItems ?? 0) }, () => conforming((schema.items ?? {}) as Record<string, unknown>));
  if (type === 'boolean') return true;
  if (type === 'integer' || type === 'number') return schema.maximum ?? schema.minimum ?? 1;
  return 'The response does this.';
}

/** The reply a judge trained on a protocol gives, in that protocol's own format (docs/judging.md), when the prompt is one. */
function protocolReply(text: string): string | undefined {
  if (text.includes('### OUTPUT FORMAT')) return text.includes('"PairwiseResponse"') ? '{"explanation": "Better.", "score": "Response 1"}' : text.includes('"BinaryResponse"') ? '{"explanation": "Met.", "score": true}' : '{"explanation": "Complete.", "score": 5}';
  if (text.includes('**Result:** <an integer between 1 and 5>')) return '**Reasoning:** Complete.\n\n**Result:** 5';
  if (text.includes('**Result:** <Yes or No>')) return '**Reasoning:** Met.\n\n**Result:** Yes';
  if (text.includes('**Result:** <A or B>')) return '**Reasoning:** Better.\n\n**Result:** A';
  if (text.includes('QUESTION (THIS DOES NOT COUNT AS BACKGROUND INFORMATION)')) return '{"REASONING": ["Faithful to the document."], "SCORE": "PASS"}';
  return undefined;
}

/** Token probabilities of a reply, one token per character, each certain: what `--verdict probability` and `expected-score` read. */
function certainTokens(content: string) {
  return { content: [...content].map((token) => ({ token, logprob: 0, top_logprobs: [{ token, logprob: 0 }] })) };
}

function answer(request: FakeJudgeRequest) {
  const format = request.body.response_format as { type?: string; json_schema?: { schema?: Record<string, unknown> } } | undefined;
  const schema = format?.json_schema?.schema;
  const content = schema ? JSON.stringify(conforming(schema)) : (protocolReply(request.userText) ?? JSON.stringify(binaryVerdict(true)));
  return { content, ...(request.body.logprobs ? { logprobs: certainTokens(content) } : {}) };
}

const documented = [...commandsIn('README.md', { firstBlock: true }), ...commandsIn('docs/formats.md'), ...commandsIn('docs/judging.md')];
const walkthrough = commandsIn('docs/meta-evaluation.md');

/** Runs one documented command in this process, the judge and the cache from the environment as for a user. */
async function runDocumented(args: string[], judgeUrl: string, cacheDirectory: string) {
  const saved = { OPENAI_BASE_URL: process.env.OPENAI_BASE_URL, OPENAI_API_KEY: process.env.OPENAI_API_KEY, RUBRICATE_CACHE_DIR: process.env.RUBRICATE_CACHE_DIR, RUBRICATE_JUDGE: process.env.RUBRICATE_JUDGE };
  Object.assign(process.env, { OPENAI_BASE_URL: judgeUrl, OPENAI_API_KEY: 'test-key', RUBRICATE_CACHE_DIR: cacheDirectory });
  delete process.env.RUBRICATE_JUDGE;
  try {
    return await runCliInProcess(args);
  } finally {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

describe('documented commands run as written', { timeout: 120_000 }, () => {
  test('the docs hold commands for every input format', () => {
    expect(documented.length).toBeGreaterThan(20);
    const formats = new Set(documented.map((command) => command.args[command.args.indexOf('--format') + 1]));
    for (const name of ['items', 'healthbench', 'researchrubrics', 'prbench', 'profbench', 'advancedif', 'drb2', 'biggen', 'rar', 'rubrichub', 'ifeval', 'tau-bench', 'simple-evals', 'pairs', 'llmbar', 'pandalm', 'autoj', 'judgebench', 'multichallenge', 'rewardbench2', 'rm-bench']) {
      expect(formats, name).toContain(name);
    }
  });

  test.for(documented.map((command) => [command.source, command] as const))('%s', async ([, command], { tempDir, startJudge }) => {
    const judge = await startJudge(answer);
    // In this process (no start-up per command): the judge and the cache come from the environment, as for a user.
    const result = await runDocumented(placed(command.args, tempDir), judge.baseUrl, join(tempDir, 'cache'));
    expect(result.code, result.stderr).toBe(command.exit);
    if (command.exit === 0) {
      for (const [index, flag] of command.args.entries()) if (outputFlags.has(flag)) expect(existsSync(join(tempDir, command.args[index + 1])), `${flag} ${command.args[index + 1]}`).toBe(true);
    }
  });

  test('the meta-evaluation loop runs in order: grade, report, align, re-grade, meta before and after, rejudge, repeats', async ({ tempDir, startJudge }) => {
    expect(walkthrough.map((command) => command.args[0])).toEqual(['grade', 'report', 'align', 'grade', 'meta', 'meta', 'rejudge', 'grade']);
    const judge = await startJudge(answer);
    const written = new Set<string>();
    for (const command of walkthrough) {
      const result = await runDocumented(placed(command.args, tempDir, written), judge.baseUrl, join(tempDir, 'cache'));
      expect(result.code, `${command.source}\n${result.stderr}`).toBe(command.exit);
      for (const [index, flag] of command.args.entries()) {
        if (!outputFlags.has(flag)) continue;
        expect(existsSync(join(tempDir, command.args[index + 1])), `${command.source}: ${flag} ${command.args[index + 1]}`).toBe(true);
        written.add(command.args[index + 1]);
      }
    }
    const after = JSON.parse(readFileSync(join(tempDir, 'after.json'), 'utf8')) as { overall: { records: number } };
    const alignment = JSON.parse(readFileSync(join(tempDir, 'alignment.json'), 'utf8')) as { fit: { split: { test: string[] } } };
    // Only the held-out items are scored: 4 criteria each.
    expect(after.overall.records).toBe(alignment.fit.split.test.length * 4);
  });
});
