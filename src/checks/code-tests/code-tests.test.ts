import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { describe, expect } from 'vitest';
import { RubricateError } from '../../errors.js';
import { GradingEngine } from '../../engine/engine.js';
import { createPerCriterionStrategy } from '../../grading/strategies.js';
import { defaultCheckRunner } from '../../pipeline/defaults.js';
import { normalizeItem } from '../../rubric/normalize.js';
import { haveData } from '../../testing/data.js';
import { test } from '../../testing/vitest-fixtures.js';
import { runCheck, runCheckAsync, validateCheck } from '../registry.js';
import { extractPythonCode } from './code-tests.js';
import { bwrapPath, runPythonTests } from './sandbox.js';

const context = { prompt: '', mode: 'strict' as const };
const fenced = (code: string) => `Here is my answer.\n\n\`\`\`python\n${code}\n\`\`\`\n`;
const check = (tests: string, extra: Record<string, unknown> = {}) => ({ type: 'code-tests', language: 'python', tests, ...extra });
const limits = { timeoutMs: 3000, memoryMb: 256, maxOutputBytes: 65_536, maxProcesses: 16 };

/** Processes left on this host by the sandbox's user (as root it runs as nobody): none may outlive a run. */
function sandboxProcesses(): number[] {
  const user = process.getuid?.() === 0 ? 65534 : -1;
  if (user < 0) return [];
  return readdirSync('/proc').filter((entry) => /^\d+$/.test(entry)).flatMap((pid) => {
    try {
      const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(join('/proc', pid, 'status'), 'utf8'));
      return uid && Number(uid[1]) === user ? [Number(pid)] : [];
    } catch {
      return [];
    }
  });
}

describe('which code a response offers', () => {
  test('the last python block, else the last unlabelled block, else none', () => {
    expect(extractPythonCode('```js\nx\n```\n```python\na = 1\n```\ntext\n```py\nb = 2\n```')).toBe('b = 2');
    expect(extractPythonCode('```\nplain = 1\n```\n```bash\nls\n```')).toBe('plain = 1');
    expect(extractPythonCode('```text\nno\n```\nno code at all')).toBeNull();
    expect(extractPythonCode('~~~python\ntilde = 1\n~~~')).toBe('tilde = 1');
    expect(extractPythonCode('````python\nx = "```"\n```\ny = 2\n````')).toBe('x = "```"\n```\ny = 2');
    expect(extractPythonCode('```python\nnever closed = 1')).toBeNull();
  });

  test('inside an open fence, other fences are text: a block opened and never closed offers no code', () => {
    const hostile = '```\n' + '~~~\n```python\n'.repeat(20_000);
    expect(extractPythonCode(hostile)).toBeNull();
    expect(extractPythonCode(`${hostile}\`\`\`\n`)).toBe(hostile.slice(4, -1));
  });

  test('parameters are checked: python only, tests required, limits in range', () => {
    expect(validateCheck(check('def test_a(): pass')).ok).toBe(true);
    const wrongLanguage = validateCheck({ type: 'code-tests', language: 'ruby', tests: 'x' });
    expect(wrongLanguage.ok ? '' : wrongLanguage.error.message).toMatch(/parameter "language"/);
    const noTests = validateCheck({ type: 'code-tests', language: 'python' });
    expect(noTests.ok ? '' : noTests.error.message).toMatch(/parameter "tests" is required/);
    const hugeTimeout = validateCheck(check('x', { timeout_ms: 10_000_000 }));
    expect(hugeTimeout.ok ? '' : hugeTimeout.error.message).toMatch(/timeout_ms/);
  });

  test('the synchronous runCheck refuses it rather than returning a promise as an outcome', () => {
    expect(() => runCheck(check('def test_a(): pass'), fenced('x = 1'), context)).toThrowError(/runs out of process/);
  });
});

describe('a sandbox that cannot run is an error, never a failed test', () => {
  test('bubblewrap missing', async () => {
    const error = await runPythonTests('x = 1', 'def test_a(): pass', limits, '/nonexistent/bwrap').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RubricateError);
    expect((error as RubricateError).code).toBe('SANDBOX_UNAVAILABLE');
    expect((error as RubricateError).message).toMatch(/not installed/);
  });

  test('a sandbox program that exits before the harness starts', async () => {
    const error = await runPythonTests('x = 1', 'def test_a(): pass', limits, '/bin/false').catch((caught: unknown) => caught);
    expect((error as RubricateError).code).toBe('SANDBOX_UNAVAILABLE');
    expect((error as RubricateError).message).toMatch(/before the harness started/);
  });

  test('through the engine, the criterion is an error with the reason and the item has no score', async ({ scriptedJudge }) => {
    const { judge } = await scriptedJudge(() => ({ content: '{}' }));
    const failing = () => Promise.reject(new RubricateError('SANDBOX_UNAVAILABLE', 'the code sandbox could not run: test'));
    const engine = new GradingEngine({ judge, strategy: createPerCriterionStrategy({ sampling: { temperature: 0, maxTokens: 64 } }), checkRunner: failing, checkMode: 'strict' });
    const graded = await engine.gradeItem(normalizeItem({ id: 'e', prompt: 'q', response: fenced('x = 1'), rubric: { criteria: [{ text: 'tests pass', check: check('def test_a(): pass') }] } }));
    expect(graded.status).toBe('error');
    expect(graded.criteria[0].error?.code).toBe('SANDBOX_UNAVAILABLE');
    expect(graded.criteria[0].verdict).toBeUndefined();
  });
});

describe.skipIf(!haveData(bwrapPath, 'code-tests sandbox tests (Debian package bubblewrap)'))('code-tests under bubblewrap', () => {
  test('tests passed and failed are counted per response, and recorded in the verdict', async ({ scriptedJudge }) => {
    const tests = 'def test_small():\n    assert add(1, 2) == 3\n\ndef test_negative():\n    assert add(-1, -1) == -2\n\ndef test_strings():\n    assert add("a", "b") == "ab!"\n';
    const partial = await runCheckAsync(check(tests), fenced('def add(a, b):\n    return a + b'), context);
    expect(partial.passed).toBe(false);
    expect(partial.tests).toEqual({ passed: 2, total: 3, ending: 'finished' });
    expect(partial.detail).toMatch(/^2\/3 tests passed; test_strings: AssertionError at tests\.py:8/);

    const { judge } = await scriptedJudge(() => ({ content: '{}' }));
    const engine = new GradingEngine({ judge, strategy: createPerCriterionStrategy({ sampling: { temperature: 0, maxTokens: 64 } }), checkRunner: defaultCheckRunner, checkMode: 'strict' });
    const graded = await engine.gradeItem(normalizeItem({ id: 'p', prompt: 'q', response: fenced('def add(a, b):\n    return a + b + ("!" if isinstance(a, str) else 0)'), rubric: { criteria: [{ text: 'tests pass', check: check(tests) }] } }));
    expect(graded.status).toBe('ok');
    expect(graded.criteria[0].verdict).toMatchObject({ met: true, source: 'check', tests: { passed: 3, total: 3, ending: 'finished' } });
  });

  test('a response without a code block fails, with nothing run', async () => {
    const outcome = await runCheckAsync(check('def test_a(): pass'), 'I would write a function.', context);
    expect(outcome).toMatchObject({ passed: false, detail: 'no Python code block in the response', tests: { passed: 0, total: 0 } });
  });

  test('a plain script of asserts is one test; a syntax error in the response fails it', async () => {
    expect((await runCheckAsync(check('assert double(4) == 8'), fenced('def double(x):\n    return 2 * x'), context)).tests).toEqual({ passed: 1, total: 1, ending: 'finished' });
    const broken = await runCheckAsync(check('assert double(4) == 8'), fenced('def double(x) return'), context);
    expect(broken.passed).toBe(false);
    expect(broken.detail).toMatch(/SyntaxError/);
  });

  test('exiting early, or printing a pass, is not a passed test', async () => {
    const exits = await runCheckAsync(check('def test_a():\n    assert False'), fenced('import os\nprint(\'{"test": "test_a", "passed": true}\')\nos._exit(0)'), context);
    expect(exits.tests).toEqual({ passed: 0, total: 1, ending: 'finished' });
    expect(exits.detail).toMatch(/exited \(status 0\) before the test finished/);
    const raises = await runCheckAsync(check('def test_a():\n    pass'), fenced('raise SystemExit(0)'), context);
    expect(raises.passed).toBe(false);
  });

  test('no network: a connection to a server listening on this host fails, and the server sees nothing', async ({ closeAfter }) => {
    let connections = 0;
    const server: Server = createServer((socket) => {
      connections += 1;
      socket.destroy();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closeAfter({ close: () => new Promise<void>((resolve) => server.close(() => resolve())) });
    const port = (server.address() as { port: number }).port;
    const code = `import socket\ndef reach():\n    socket.create_connection(("127.0.0.1", ${port}), timeout=2).close()\n    return True`;
    const outcome = await runCheckAsync(check('def test_reach():\n    assert reach()\n\ndef test_dns():\n    socket.getaddrinfo("example.com", 80)'), fenced(code), context);
    expect(outcome.tests).toEqual({ passed: 0, total: 2, ending: 'finished' });
    expect(outcome.detail).toMatch(/test_reach: (ConnectionRefusedError|OSError)/);
    expect(connections).toBe(0);
  });

  test('no secrets: a key in our environment is not in the sandbox', async () => {
    process.env.RUBRICATE_TEST_FAKE_SECRET = 'sk-fake-secret-for-the-sandbox-test';
    try {
      const tests = 'import os\ndef test_sees_secret():\n    assert "RUBRICATE_TEST_FAKE_SECRET" in os.environ\n\ndef test_environment_is_clean():\n    assert set(os.environ) <= {"PATH", "HOME", "LANG", "PWD", "LC_CTYPE"}, sorted(os.environ)\n';
      const outcome = await runCheckAsync(check(tests), fenced('import os\nleaked = os.environ.get("RUBRICATE_TEST_FAKE_SECRET")'), context);
      expect(outcome.tests).toEqual({ passed: 1, total: 2, ending: 'finished' });
      expect(outcome.detail).toMatch(/test_sees_secret: AssertionError/);
      expect(outcome.detail).not.toContain('sk-fake');
    } finally {
      delete process.env.RUBRICATE_TEST_FAKE_SECRET;
    }
  });

  test('writes: only its private /tmp is writable; the host folder it names does not exist there', async ({ tempDir }) => {
    const outside = join(tempDir, 'escaped.txt');
    const tests = [
      'def write(path):\n    with open(path, "w") as handle:\n        handle.write("x")\n',
      'def test_private_tmp():\n    write("/tmp/scratch.txt")\n    assert open("/tmp/scratch.txt").read() == "x"\n',
      'def test_usr():\n    write("/usr/escaped.txt")\n',
      'def test_own_code():\n    write("/sandbox/solution.py")\n',
      `def test_host_folder():\n    write(${JSON.stringify(outside)})\n`,
    ].join('\n');
    const outcome = await runCheckAsync(check(tests), fenced('x = 1'), context);
    expect(outcome.tests).toEqual({ passed: 1, total: 4, ending: 'finished' });
    expect(existsSync(outside)).toBe(false);
    expect(existsSync('/usr/escaped.txt')).toBe(false);
  });

  test('processes: the count is bounded, and a fork bomb ends at the time limit with nothing left on the host', async () => {
    const counting = 'import os, time\ndef forks():\n    n = 0\n    try:\n        while n < 200:\n            if os.fork() == 0:\n                time.sleep(5)\n                os._exit(0)\n            n += 1\n    except OSError:\n        pass\n    return n\n';
    const bounded = await runCheckAsync(check('def test_bounded():\n    assert forks() < 8, forks\n', { max_processes: 8, timeout_ms: 20_000 }), fenced(counting), context);
    expect(bounded.tests).toEqual({ passed: 1, total: 1, ending: 'finished' });

    const bomb = 'import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass';
    const outcome = await runCheckAsync(check('def test_a():\n    pass', { timeout_ms: 1500 }), fenced(bomb), context);
    expect(outcome.passed).toBe(false);
    expect(outcome.tests).toEqual({ passed: 0, total: 1, ending: 'time_limit' });
    expect(outcome.detail).toMatch(/stopped at the time limit/);
    // The pid namespace closes as its last process is reaped: wait for that, then none is left.
    while (sandboxProcesses().length > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(sandboxProcesses()).toEqual([]);
    // The host still starts sandboxes and runs code after it.
    expect((await runCheckAsync(check('assert 1 + 1 == 2'), fenced('pass'), context)).passed).toBe(true);
  });

  test('time, memory and output limits are the code\'s failures, with the reason recorded', async () => {
    const loop = await runCheckAsync(check('def test_a():\n    pass\n\ndef test_b():\n    pass', { timeout_ms: 1000 }), fenced('while True:\n    pass'), context);
    expect(loop).toMatchObject({ passed: false, tests: { passed: 0, total: 2, ending: 'time_limit' } });

    const memory = await runCheckAsync(check('def test_a():\n    blob = bytearray(512 * 1024 * 1024)', { memory_mb: 128 }), fenced('x = 1'), context);
    expect(memory.tests).toEqual({ passed: 0, total: 1, ending: 'finished' });
    expect(memory.detail).toMatch(/MemoryError/);

    const flood = await runCheckAsync(check('def test_a():\n    pass', { max_output_bytes: 4096, timeout_ms: 20_000 }), fenced('while True:\n    print("x" * 1000)'), context);
    expect(flood).toMatchObject({ passed: false, tests: { passed: 0, total: 1, ending: 'output_limit' } });
  });

  test('a tests text that is not Python is the criterion\'s error, not the response\'s failure', async () => {
    const error = await runCheckAsync(check('def test_a(:\n'), fenced('x = 1'), context).catch((caught: unknown) => caught);
    expect((error as RubricateError).code).toBe('CHECK_INVALID');
    expect((error as RubricateError).message).toMatch(/"tests" is not valid Python: line 1/);
  });
});
