"""The judge of a learner's own Python tests: collects the tests of one test
file and runs one of them, as the libtest binary of a learner's Rust tests
does (written by fencelab into the scratch workspace beside the file and the
lab's API, api/lease.py; standard library only; run by fencelab, not by
hand). No pytest is needed: a test is a top-level function whose name starts
with ``test`` (called without arguments, or with ``tmp_path``, a fresh
directory as a ``pathlib.Path``), or a method ``test*`` of a
``unittest.TestCase`` class (named ``Class.method``), each with its
set-ups and tear-downs.

The process is the untrusted side of the bridge: fencelab runs it caged, one
test per process, and reads its verdict from its exit status and the
libtest-shaped lines it prints (``test result: ok. 1 passed;`` and exit 0,
or the test's output and traceback under ``---- NAME stdout ----`` and exit
101). The implementation the test talks to is in another process, reached
through api/lease.py.

Usage: fencelab_tests.py --identify | --list | --exact NAME [--test-threads 1]
"""

import io
import json
import os
import sys
import traceback
import types

HERE = os.path.dirname(os.path.abspath(__file__))
#: What a learner's test file could not be collected for (a syntax error, an
#: exception at import): its message, after this marker, on the first line.
UNCOLLECTABLE = "fencelab-tests: cannot collect: "
#: The parameters a test function may take, and what it is given.
FIXTURES = ("tmp_path",)


def table():
    with open(os.path.join(HERE, "judge.json"), encoding="utf-8") as f:
        return json.load(f)


def learner_frames(tb, shown):
    """The traceback's frames in the learner's own file, none of this
    runner's or the API's."""
    return [f for f in traceback.extract_tb(tb) if f.filename == shown]


#: The environment variable that holds the trial's key (``bridge::said``).
SAID_KEY_ENV = "FENCELAB_SAID_KEY"


def said_line(said):
    """What fencelab says, as the line fencelab reads as data: marked with
    the trial's key, its value as JSON (``bridge::said::Said::line``)."""
    key = os.environ.get(SAID_KEY_ENV, "")
    if not key:
        return None
    return f"\x01said {key}\x01" + json.dumps(said, separators=(",", ":"))


def describe(err, shown):
    """An exception as a learner reads it: their frames, then what it was
    (fencelab's own words as data where the lab's API raised it)."""
    frames = learner_frames(err.__traceback__, shown)
    text = ""
    if frames:
        text = "Traceback (most recent call last):\n" + "".join(
            traceback.format_list(frames))
    said = getattr(err, "fencelab_said", None)
    line = said_line(said) if isinstance(said, dict) else None
    if line is not None:
        return text + line
    return text + "".join(traceback.format_exception_only(type(err), err)).rstrip()


def install(name, path, shown):
    """Runs the module at `path` as `name`, compiled under the path `shown`
    (what tracebacks name), and returns it."""
    import linecache

    with open(path, encoding="utf-8") as f:
        source = f.read()
    linecache.cache[shown] = (len(source), None, source.splitlines(True), shown)
    module = types.ModuleType(name)
    module.__file__ = shown
    sys.modules[name] = module
    exec(compile(source, shown, "exec", dont_inherit=True), module.__dict__)
    return module


def load(info):
    """The lab's API, then the learner's module, compiled under the path the
    learner gave."""
    install("lease", os.path.join(HERE, "api", "lease.py"), "lease.py")
    return install(info["module"], os.path.join(HERE, "mine", info["file"]), info["shown"])


def collect(module):
    """[(name, runner)] in the order of the file: test functions, then each
    TestCase class's test methods where the class is defined."""
    found = []
    unittest = sys.modules.get("unittest")
    for name, value in list(vars(module).items()):
        if isinstance(value, types.FunctionType) and name.startswith("test"):
            if getattr(value, "__module__", None) == module.__name__:
                found.append((name, function_runner(value)))
        elif (unittest is not None and isinstance(value, type)
              and issubclass(value, unittest.TestCase)
              and value.__module__ == module.__name__):
            for method in unittest.TestLoader().getTestCaseNames(value):
                found.append((f"{name}.{method}", case_runner(value, method)))
    return found


def function_runner(function):
    def run():
        import inspect
        import tempfile

        parameters = list(inspect.signature(function).parameters)
        unknown = [p for p in parameters if p not in FIXTURES]
        if unknown:
            raise TypeError(
                f"{function.__name__}() takes {', '.join(unknown)}: fencelab calls test "
                f"functions without arguments (or with tmp_path, a fresh directory)")
        arguments = {}
        if "tmp_path" in parameters:
            import pathlib

            arguments["tmp_path"] = pathlib.Path(tempfile.mkdtemp(prefix="tmp_path-"))
        function(**arguments)
        return None

    return run


def case_runner(cls, method):
    def run():
        import unittest

        said = []

        class Result(unittest.TestResult):
            def addError(self, test, err):
                # The lab's API says the implementation's end as data.
                value = getattr(err[1], "fencelab_said", None)
                line = said_line(value) if isinstance(value, dict) else None
                if line is not None:
                    said.append(line)
                super().addError(test, err)

        result = Result()
        suite = unittest.TestSuite([cls(method)])
        suite.run(result)
        problems = result.errors + result.failures
        if problems:
            return "\n".join(said + [text for _, text in problems])
        if result.unexpectedSuccesses:
            return f"{method} is marked expectedFailure and passed"
        return None

    return run


def list_tests(info):
    try:
        module = load(info)
        tests = collect(module)
    except BaseException as err:  # anything at import: the file cannot be judged
        print(UNCOLLECTABLE + json.dumps(describe(err, info["shown"])))
        return 2
    for name, _ in tests:
        print(f"{name}: test")
    return 0


def run_one(info, wanted):
    out = sys.stdout
    captured = io.StringIO()
    failure = None
    try:
        module = load(info)
        tests = dict(collect(module))
        if wanted not in tests:
            failure = f"no test named {wanted}"
        else:
            sys.stdout = sys.stderr = captured
            try:
                failure = tests[wanted]()
            finally:
                sys.stdout, sys.stderr = out, sys.__stderr__
    except BaseException as err:  # the test's own exception: its failure
        sys.stdout, sys.stderr = out, sys.__stderr__
        failure = describe(err, info["shown"])
    out.write("\nrunning 1 test\n")
    if failure is None:
        out.write(f"test {wanted} ... ok\n\n"
                  "test result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n")
        out.flush()
        return 0
    printed = captured.getvalue()
    out.write(f"test {wanted} ... FAILED\n\nfailures:\n\n---- {wanted} stdout ----\n")
    if printed:
        out.write(printed.rstrip("\n") + "\n")
    out.write(failure.rstrip("\n") + "\n\nfailures:\n    " + wanted + "\n\n"
              "test result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n")
    out.flush()
    return 101


def main(argv):
    info = table()
    if argv == ["--identify"]:
        print(json.dumps({"build": info["build"]}))
        return 0
    if argv[:1] == ["--list"]:
        if "--ignored" in argv:
            return 0
        return list_tests(info)
    if len(argv) >= 2 and argv[0] == "--exact":
        return run_one(info, argv[1])
    print("usage: fencelab_tests.py --identify | --list | --exact NAME "
          "(run by fencelab, not by hand)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    # Ends at once: threads a test left running do not keep the verdict waiting
    # (what they left behind is the cage's to count).
    os._exit(code)
