/**
 * The Python harness the sandbox runs (trusted code, ours). It lowers its own limits, finds the
 * tests by name without running them (`ast`), then runs each test in a forked child that executes
 * the response's code and the tests. Only this parent holds the report descriptor (fd 3): a child
 * closes it before any response code runs, so nothing the response prints or exits with is read as
 * a result. A child that exits before its test finishes has failed that test.
 */
export const harnessSource = String.raw`
import ast, json, os, resource, sys, traceback

REPORT_FD = 3

def lower_limits(limits):
    memory = limits["memory_bytes"]
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    resource.setrlimit(resource.RLIMIT_NPROC, (limits["max_processes"], limits["max_processes"]))
    resource.setrlimit(resource.RLIMIT_FSIZE, (limits["max_file_bytes"], limits["max_file_bytes"]))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

def test_names(source):
    tree = ast.parse(source, "tests.py")
    names = [node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test")]
    return names or [None]

def run_in_child(name, solution, tests, write_end):
    namespace = {"__name__": "solution", "__builtins__": __builtins__}
    try:
        exec(compile(solution, "solution.py", "exec"), namespace)
        exec(compile(tests, "tests.py", "exec"), namespace)
        if name is not None:
            namespace[name]()
        outcome = "pass"
    except BaseException as error:
        frames = traceback.extract_tb(error.__traceback__)
        where = frames[-1] if frames else None
        at = (" at %s:%d" % (where.filename, where.lineno)) if where else ""
        outcome = "fail %s%s: %s" % (type(error).__name__, at, str(error)[:200])
    os.write(write_end, outcome.replace("\n", " ").encode("utf-8", "replace")[:400] + b"\n")
    os._exit(0)

def run_test(name, solution, tests, report):
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError as error:
        return False, "could not start the test: %s" % error
    if pid == 0:
        os.close(read_end)
        os.close(REPORT_FD)
        run_in_child(name, solution, tests, write_end)
    os.close(write_end)
    # Read up to the outcome's newline, not to end of file: processes the test forked may hold the pipe open.
    said = b""
    while b"\n" not in said and len(said) <= 4096:
        chunk = os.read(read_end, 4096)
        if not chunk:
            break
        said += chunk
    os.close(read_end)
    _, status = os.waitpid(pid, 0)
    said = said.split(b"\n")[0].decode("utf-8", "replace")
    if said == "pass":
        return True, None
    if said.startswith("fail "):
        return False, said[5:]
    if os.WIFSIGNALED(status):
        return False, "the test process was killed by signal %d" % os.WTERMSIG(status)
    return False, "the test process exited (status %d) before the test finished" % os.waitstatus_to_exitcode(status)

def main():
    report = os.fdopen(REPORT_FD, "w", buffering=1)
    limits = json.loads(sys.argv[1])
    with open("/sandbox/solution.py", encoding="utf-8") as handle:
        solution = handle.read()
    with open("/sandbox/tests.py", encoding="utf-8") as handle:
        tests = handle.read()
    try:
        names = test_names(tests)
    except SyntaxError as error:
        report.write(json.dumps({"tests_invalid": "line %s: %s" % (error.lineno, error.msg)}) + "\n")
        return
    report.write(json.dumps({"started": True, "total": len(names)}) + "\n")
    lower_limits(limits)
    for name in names:
        passed, reason = run_test(name, solution, tests, report)
        report.write(json.dumps({"test": name or "tests", "passed": passed, "reason": reason}) + "\n")
    report.write(json.dumps({"done": True}) + "\n")

main()
`;
