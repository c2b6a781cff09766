"""The implementation's side of the bridge for a Python implementation: the
server process that imports the learner's module and answers the judge's
calls, as src/bridge/server.rs does for a Rust one (written by fencelab next
to the hosted modules; standard library only; run by fencelab, not by hand).

Requests come one after another on a connection, each answered before the
next is read, each a line of JSON: a judge's thread makes all its calls on
one connection, so they run on one thread here, as a learner's own calls
would; calls made at once come on connections of their own. Floats
travel as their bits (an unsigned 64-bit integer), so NaN, infinities and
every fraction arrive exactly as sent. The messages are serde's encoding of
src/bridge/protocol.rs.

How Python maps onto the contract (python/CONTRACT.md says it for learners):
- a ValueError is the contract's InvalidTtl when the ttl given is not a
  finite number greater than 0, else its InvalidNow when now is not finite;
  a ValueError for valid arguments is an error the contract does not have;
- a sqlite3.Error is the contract's database error (Db), with SQLite's code;
- any other exception is the implementation failing inside the call (as a
  Rust panic), NotImplementedError a step not yet written;
- a value of the wrong type (state() answering {} or a tuple, enqueue()
  answering 1) is reported as such, never converted.

Usage: fencelab_server.py --identify [DIR...] | serve KEY | serve-stdin
(KEY on the standard input) | --check FILE (sources as JSON; prints what
does not compile). --identify says, of this server's directory or of each
DIR, the build and the implementations it hosts, and whether the server
there is this very file (a line of JSON each): a run identifies all of its
servers with one interpreter.

A learner's own Python tests reach it through python/lease_proxy.py: a
request {"Python": {"call", "args"}} is answered with what the function
returned or raised as Python values ({"PyReturned"} or {"PyRaised"}), the
types kept, so that those tests see the implementation as if imported.
"""

import json
import math
import os
import socket
import struct
import sys
import threading
import traceback
import types

#: The server's directory (hosted.json, impls/); fencelab runs the script
#: from its file, except for --check.
HERE = os.path.dirname(os.path.abspath(globals().get("__file__", ".")))
LISTENER_FD = 3
#: What `--import KEY` prints once the module is imported.
IMPORTED = "fencelab-server: imported"
KEYS = ("id", "owner", "until", "fence", "result", "done")


def to_float(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def to_bits(value):
    return struct.unpack("<Q", struct.pack("<d", float(value)))[0]


#: hosted.json once read (a forking server reads it before it forks: its
#: children do not read it again).
HOSTED = None


def hosted():
    global HOSTED
    if HOSTED is None:
        with open(os.path.join(HERE, "hosted.json"), encoding="utf-8") as f:
            HOSTED = json.load(f)
    return HOSTED


def compile_module(source, shown):
    """The module's code, compiled under the path the learner knows."""
    return compile(source, shown, "exec", dont_inherit=True)


def check(listing):
    """Says which sources (a JSON file of {"shown", "source"}) do not compile:
    a list, per source, of None or Python's own message (file, line, the
    line, a caret)."""
    with open(listing, encoding="utf-8") as f:
        sources = json.load(f)
    answers = []
    for item in sources:
        try:
            compile_module(item["source"], item["shown"])
            answers.append(None)
        except (SyntaxError, ValueError, MemoryError, RecursionError) as err:
            answers.append("".join(traceback.format_exception_only(type(err), err)).rstrip())
    print(json.dumps(answers))


from fencelab_wire import Opaque, decode, encode  # fencelab: the wire (written in place)


class Refusal(Exception):
    """An answer that does not fit the contract: the implementation's fault,
    observed as the value it returned beside what the contract allows."""

    def __init__(self, function, value, contract):
        super().__init__(function, contract)
        self.function = function
        self.returned = shown(value)
        self.contract = contract


#: How much of a value that does not fit the contract is shown.
SHOWN = 200


def shown(value):
    """Python's repr of `value`, capped; a repr that fails is its type."""
    try:
        text = repr(value)
    except BaseException:  # the learner's __repr__ is theirs to break
        text = f"<{type_name(value)} object>"
    text = text.replace("\r", "\\r").replace("\n", "\\n")
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"


def type_name(value):
    return type(value).__name__


def as_bool(function, value):
    if isinstance(value, bool):
        return value
    raise Refusal(function, value, "True or False")


def as_fence(function, value):
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        if value is not None and not -(2**63) <= value < 2**63:
            raise Refusal(function, value, "an int of 64 bits (the new fence), or None")
        return value
    raise Refusal(function, value, "an int (the new fence), or None")


JOB = f"None for a missing job, else a dict with exactly the keys {', '.join(KEYS)}"
def as_job(value):
    if value is None:
        return None
    if not isinstance(value, dict) or set(value) != set(KEYS):
        raise Refusal("state", value, JOB)
    id_, owner, until, fence = value["id"], value["owner"], value["until"], value["fence"]
    result, done = value["result"], value["done"]
    wrong = []
    if not isinstance(id_, str):
        wrong.append("id a str")
    if owner is not None and not isinstance(owner, str):
        wrong.append("owner a str or None")
    if (isinstance(until, bool) or not isinstance(until, (int, float))
            or (isinstance(until, int) and float(until) != until)):
        wrong.append("until a float")
    if isinstance(fence, bool) or not isinstance(fence, int):
        wrong.append("fence an int")
    if result is not None and not isinstance(result, str):
        wrong.append("result a str or None")
    if done not in (0, 1) or not isinstance(done, int):
        wrong.append("done True/False or 1/0")
    if wrong:
        raise Refusal("state", value, "a dict whose " + ", ".join(wrong))
    return {"id": id_, "owner": owner, "until": to_bits(until), "fence": fence,
            "result": result, "done": bool(done)}


def call(module, request):
    """Calls the module for one request: (answer, the arguments checked by
    ValueError's mapping)."""
    (name, args), = request.items()
    path = args.get("path")
    if name == "InitDb":
        module.init_db(path)
        return "Unit"
    if name == "Enqueue":
        return {"Bool": as_bool("enqueue", module.enqueue(path, args["job_id"]))}
    if name == "State":
        return {"Job": as_job(module.state(path, args["job_id"]))}
    if name == "Claim":
        fence = module.claim(path, args["job_id"], args["owner"], to_float(args["now"]),
                             to_float(args["ttl"]))
        return {"Fence": as_fence("claim", fence)}
    if name == "Renew":
        return {"Bool": as_bool("renew", module.renew(
            path, args["job_id"], args["owner"], args["fence"], to_float(args["now"]),
            to_float(args["ttl"])))}
    if name == "Complete":
        return {"Bool": as_bool("complete", module.complete(
            path, args["job_id"], args["owner"], args["fence"], to_float(args["now"]),
            args["result"]))}
    if name == "Release":
        return {"Bool": as_bool("release", module.release(
            path, args["job_id"], args["owner"], args["fence"]))}
    if name == "ClaimMany":
        fences = module.claim_many(path, args["job_id"], list(args["owners"]),
                                   to_float(args["now"]), to_float(args["ttl"]))
        if not isinstance(fences, (list, tuple)):
            raise Refusal("claim_many", fences, "a list, one answer per owner")
        return {"Fences": [as_fence("claim_many", f) for f in fences]}
    raise LookupError(f"unknown request {name}")


def value_error(request, err):
    """The contract's error for a ValueError raised by the call."""
    (_, args), = request.items()
    ttl = to_float(args["ttl"]) if "ttl" in args else None
    now = to_float(args["now"]) if "now" in args else None
    if ttl is not None and not (math.isfinite(ttl) and ttl > 0):
        return {"InvalidTtl": args["ttl"]}
    if now is not None and not math.isfinite(now):
        return {"InvalidNow": args["now"]}
    return {"ValueError": f"ValueError: {err}"}


def location(err, shown):
    """Where in the learner's module the exception was raised (its last frame
    there), as file:line; None when serving a learner's tests, which observe
    only what the contract returns (a mutant's line numbers differ)."""
    if globals().get("HIDE_LOCATIONS"):
        return None
    at = None
    for frame in traceback.extract_tb(err.__traceback__):
        if frame.filename == shown:
            at = f"{shown}:{frame.lineno}"
    return at


def answer(conn, module, shown):
    """Answers the requests of one connection, one after another, until the
    judge closes it."""
    with conn:
        try:
            for line in conn.makefile("rb"):
                if not answer_one(conn, line, module, shown):
                    return
        except OSError:
            return


def answer_one(conn, line, module, shown):
    """Answers one request; False when the answer could not be sent."""
    try:
        request = json.loads(line)
    except ValueError as err:
        response = {"Returned": {"Err": {"error": {"Other": f"malformed bridge message: {err}"},
                                         "display": f"malformed bridge message: {err}"}}}
    else:
        if isinstance(request, dict) and "Python" in request:
            response = respond_python(module, request["Python"])
        else:
            response = respond(module, shown, request)
    try:
        conn.sendall((json.dumps(response) + "\n").encode())
    except OSError:
        return False
    return True


def respond(module, shown, request):
    import sqlite3

    try:
        return {"Returned": {"Ok": call(module, request)}}
    except ValueError as err:
        error = value_error(request, err)
        return {"Returned": {"Err": {"error": error, "display": str(err)}}}
    except sqlite3.Error as err:
        code = getattr(err, "sqlite_errorcode", None)
        return {"Returned": {"Err": {"error": {"Db": {"code": code, "message": str(err)}},
                                     "display": str(err)}}}
    except Refusal as err:
        return {"Misfit": {"function": err.function, "returned": err.returned,
                           "contract": err.contract}}
    except NotImplementedError as err:
        text = f"not yet implemented (NotImplementedError{': ' + str(err) if str(err) else ''})"
        return {"Panicked": {"message": text, "location": location(err, shown)}}
    except BaseException as err:  # SystemExit and KeyboardInterrupt too: it is the call's.
        text = "".join(traceback.format_exception_only(type(err), err)).rstrip()
        return {"Panicked": {"message": text, "location": location(err, shown)}}


#: The contract's functions a learner's Python tests may call.
FUNCTIONS = ("init_db", "enqueue", "state", "claim", "renew", "complete", "release",
             "claim_many")


def respond_python(module, call):
    """A call from a learner's own Python tests (lease_proxy.py): what the
    function returned, or what it raised, as Python values; nothing else of
    the implementation (no traceback, no file name) crosses."""
    name = call.get("call") if isinstance(call, dict) else None
    try:
        if name not in FUNCTIONS:
            raise AttributeError(f"module 'lease' has no attribute {name!r}")
        args = [decode(a) for a in call.get("args", [])]
        value = getattr(module, name)(*args)
        return {"PyReturned": encode(value, strict=False)}
    except BaseException as err:  # SystemExit too: it is the call's answer.
        return {"PyRaised": raised(err)}


def raised(err):
    """An exception as the learner's side raises it again."""
    cls = type(err)
    try:
        message = str(err)
        args = [encode(a, strict=False) for a in err.args]
    except BaseException:
        message, args = "", []
    out = {"type": cls.__name__, "module": cls.__module__, "message": message, "args": args}
    for attribute in ("sqlite_errorcode", "sqlite_errorname"):
        if hasattr(err, attribute):
            out[attribute] = getattr(err, attribute)
    return out


def answer_until_the_judge_goes(listener, module, shown):
    """Answers each connection on a thread of its own, until the judge goes
    away (its end of the standard input closes): then the process ends. One
    thread watches both (a thread of its own for the input cost each trial
    about 0.4 ms of processor time)."""
    import select

    poller = select.poll()
    poller.register(0, select.POLLIN)
    poller.register(listener.fileno(), select.POLLIN)
    while True:
        for fd, _ in poller.poll():
            if fd == 0:
                try:
                    if os.read(0, 256):
                        continue
                except OSError:
                    pass
                os._exit(0)
            conn, _ = listener.accept()
            threading.Thread(target=answer, args=(conn, module, shown), daemon=True).start()


def print_own_traceback(err, shown):
    """Prints what the learner's module raised at import as Python prints an
    uncaught exception, its frames from the module's own on (the server's,
    which name fencelab's scratch files, left out: `python lease.py` shows
    none of them either)."""
    tb = err.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename != shown:
        tb = tb.tb_next
    err = err.with_traceback(tb)
    sys.excepthook(type(err), err, tb)


def serve(key):
    listener = socket.socket(fileno=LISTENER_FD)
    module, shown = imported(key)
    answer_until_the_judge_goes(listener, module, shown)


def imported(key):
    """The learner's module `key`, imported under the path the learner
    knows; what its top level raises ends the process, as a Rust server's
    failing constructor would."""
    table = hosted()
    shown = next((i["shown"] for i in table["impls"] if i["key"] == key), None)
    if shown is None:
        print(f"fencelab server: no implementation {key!r} in this build", file=sys.stderr)
        sys.exit(2)
    # Forked by python/fencelab_forking.py, the server finds the module's
    # source and code compiled there (the same compile, of the same file).
    precompiled = globals().get("PRECOMPILED")
    if precompiled is not None and precompiled[0] == key:
        _, source, code = precompiled
    else:
        with open(os.path.join(HERE, "impls", key, "lease.py"), encoding="utf-8") as f:
            source = f.read()
        code = None
    module = types.ModuleType("lease")
    module.__file__ = shown
    sys.modules["lease"] = module
    import linecache

    linecache.cache[shown] = (len(source), None, source.splitlines(True), shown)
    # Importing runs the learner's top level: what it raises ends the process,
    # as a Rust server's failing constructor would.
    try:
        exec(code if code is not None else compile_module(source, shown), module.__dict__)
    except (SystemExit, KeyboardInterrupt):
        raise
    except BaseException as err:
        print_own_traceback(err, shown)
        raise SystemExit(1) from None
    return module, shown


def identify(dirs):
    """Prints, per directory of `dirs`, what its server would say of itself:
    its build and keys, where its server is this file, byte for byte."""
    with open(os.path.abspath(__file__), "rb") as f:
        me = f.read()
    for here in dirs:
        said = {"dir": here}
        try:
            with open(os.path.join(here, "fencelab_server.py"), "rb") as f:
                said["same"] = f.read() == me
            with open(os.path.join(here, "hosted.json"), encoding="utf-8") as f:
                table = json.load(f)
            said["build"] = table["build"]
            said["impls"] = [{"key": i["key"]} for i in table["impls"]]
        except (OSError, ValueError, KeyError, TypeError) as err:
            said["error"] = repr(err)
        print(json.dumps(said))


def main(argv):
    if argv[:1] == ["--identify"]:
        identify(argv[1:] or [HERE])
        return 0
    if len(argv) == 2 and argv[0] == "--check":
        check(argv[1])
        return 0
    if len(argv) == 2 and argv[0] == "serve":
        serve(argv[1])
        return 0
    if len(argv) == 2 and argv[0] == "--import":
        # Asked once in a cage before any trial: a module that cannot be
        # imported is one reason, not a crash per test.
        imported(argv[1])
        print(IMPORTED)
        return 0
    if argv == ["serve-stdin"]:
        # Started by fencelab's runner for a learner's tests: which
        # implementation comes on the standard input, never in the arguments,
        # and nothing of this process may be read by the tests it serves,
        # nor where in an implementation something was raised.
        globals()["HIDE_LOCATIONS"] = True
        try:
            import ctypes

            ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)  # PR_SET_DUMPABLE, 0
        except (OSError, AttributeError):
            pass
        key = b""
        while True:
            byte = os.read(0, 1)
            if not byte or byte == b"\n":
                break
            key += byte
        serve(key.decode())
        return 0
    print("usage: fencelab_server.py --identify [DIR...] | serve KEY | serve-stdin | --check FILE "
          "| --import KEY "
          "(run by fencelab, not by hand)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
