"""The forking servers of Python implementations: an interpreter started once
per run by fencelab's runner (src/engine/python.rs, `Zygotes`), the root,
which imports the standard library the contract needs and compiles the
server once, and forks, on the runner's word, a forking server per
implementation; that one forks a child per trial; the child enters the
trial's cage and only then runs python/fencelab_server.py, as a server
started afresh would (standard library only; run by fencelab, not by hand).

Usage: fencelab_forking.py root --forking | --forking-trusted, from a
directory of fencelab's own (`pyroot-<hash>/`: this script and the server,
nothing of any implementation), with a control socket (SOCK_SEQPACKET) at
LISTENER_FD. On it the runner sends a JSON object, an implementation's key,
the server hosting it (the script in its own directory, beside its
`hosted.json` and `impls/`) and the bridge's cdylib, with one descriptor,
the forking server's own control socket; the root forks the forking server
and answers with its pid. The root holds nothing of any implementation (it
never reads one: the forking server it forks reads its own directory), is
single-threaded, not dumpable, and dies with the runner (its parent-death
signal, and the control socket's end); each forking server dies with the
root.

A forking server's control socket (at LISTENER_FD in it) carries, from the
runner, one connection per trial: the trial's dispenser.
Each judge process of the trial (its judge, and the judges it runs again as
claimers in processes of their own) sends on it "connect" with one end of a
socket pair of its own, and makes its request on the other end.

A forking server never imports the implementation: that is imported only
in a child, after the child has entered the trial's cage. It compiles the
implementation's source once (compiling runs none of its code; fencelab
compiled it already to know it viable), and each child runs that code, in
its cage, where a server started afresh would compile the file itself. The
server's own code, compiled by the root, is named after the forking
server's own script before it runs: each frame of it is a frame of that
script, as in a server started afresh from it. It freezes its objects
(`gc.freeze`; the root froze its own before it forked), so that a child's
collector does not write to them, which would copy every page they sit on.

Its loop is the bridge's (`fencelab_forking_loop`, in the cdylib, through
ctypes), which runs no Python between two forks and returns only in a
child. On a connection, the trial's judge (src/bridge/zygote.rs) sends one
request, a JSON object (the cage's strings: the trial's directory, the
program and what it reads, the memory cgroup, the environment) with
descriptors: the listening socket, the server's standard input, output and
error, a pipe for the word "ok" (or why the cage failed), and the trial's
namespaces. The cage is the one a judge gives a learner's implementation,
or, with --forking-trusted (the runner's root for fencelab's own
implementations that a learner's tests talk to), the one the runner gives
those (the request's own word on that is never taken). The child enters
the cage with fencelab's own code; its watcher stays the child of the
forking server. The connection is answered with the watcher's pid, then
with its exit status when it ends, and closed. When the connection closes
first (its judge process ended or was killed), the cage is killed.
"""

import json
import os
import socket
import sys

#: The descriptor of the control socket here, and of the listening socket in
#: a child (as python/fencelab_server.py expects it).
LISTENER_FD = 3
#: The server's file name, beside this script wherever fencelab writes it.
SERVER_FILE = "fencelab_server.py"

#: What the contract's implementations import, imported once here.
PRELOADED = ("__future__", "sqlite3", "concurrent.futures", "concurrent.futures.thread",
             "threading", "linecache", "pathlib", "ctypes", "fcntl")


def prctl(option, value):
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def ctypes_trim():
    """Returns the C heap's free memory to the system (glibc's
    `malloc_trim`); nothing where the C library has none."""
    import ctypes

    try:
        ctypes.CDLL(None).malloc_trim(0)
    except (AttributeError, OSError):
        pass


def root(here, trusted):
    """The root: what every forking server needs, made once (the standard
    library the contract imports, the server compiled: `here` is the
    directory of fencelab's own it was started from, the server beside it),
    then a fork of itself per implementation the runner names, which serves
    it (`forking`). Nothing of an implementation is read here."""
    import gc
    import importlib
    import signal

    for name in PRELOADED:
        importlib.import_module(name)
    compiled = server_code(os.path.join(here, SERVER_FILE))
    parent = os.getppid()
    prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    prctl(4, 0)  # PR_SET_DUMPABLE
    if os.getppid() != parent:
        return 0
    # What importing freed goes back to the system, and what is left is
    # frozen: each forking server's collector, and its children's, leave
    # it alone (a page written is a page copied).
    gc.collect()
    ctypes_trim()
    gc.freeze()
    control = socket.socket(fileno=LISTENER_FD)
    me = os.getpid()
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 1 << 16, 1)
        except OSError:
            message, fds = b"", []
        reap_ended()
        if not message:
            # The runner is gone, or done: its forking servers die with
            # this process (their parent-death signal).
            os._exit(0)
        try:
            asked = json.loads(message)
            key, script, library = asked["key"], asked["server"], asked["library"]
            if not (isinstance(key, str) and isinstance(script, str) and len(fds) == 1
                    and isinstance(library, str)):
                raise ValueError
        except (ValueError, KeyError, TypeError):
            for fd in fds:
                os.close(fd)
            control.send(json.dumps({"error": "not a forking server's start"}).encode())
            continue
        pid = os.fork()
        if pid == 0:
            status = 1
            try:
                # The forking server's control socket takes this one's place.
                control.detach()
                os.dup2(fds[0], LISTENER_FD)
                os.close(fds[0])
                os.setpgid(0, 0)
                status = forking(script, key, trusted, compiled, me, library)
            finally:
                os._exit(status or 0)
        os.close(fds[0])
        control.send(json.dumps({"pid": pid}).encode())


def ended_children():
    """The pid and wait status of each child of this process that has ended,
    each collected."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        yield pid, status


def reap_ended():
    """Collects the forking servers that ended. The runner, which waits on
    them by their pid (a pidfd it opens while it holds the answer), asks
    one at a time: none is collected while it may still open one."""
    for _ in ended_children():
        pass


def server_code(script):
    """The server's code, compiled once: its top level up to its entry point
    (which defines, and does nothing else), and the entry point alone, at
    its own lines. Run once here, so that what it imports is imported for
    every forking server (`server_definitions` runs it again for each)."""
    import types

    with open(script, encoding="utf-8") as f:
        source = f.read()
    entry = source.index('\nif __name__ == "__main__":') + 1
    definitions = compile(source[:entry], script, "exec", dont_inherit=True)
    code = compile("\n" * source.count("\n", 0, entry) + source[entry:], script, "exec",
                   dont_inherit=True)
    exec(definitions, types.ModuleType("__main__").__dict__)
    return definitions, code


def named(code, script):
    """`code` and every code object within it, named after `script`."""
    import types

    consts = tuple(named(c, script) if isinstance(c, types.CodeType) else c
                   for c in code.co_consts)
    return code.replace(co_filename=script, co_consts=consts)


def server_definitions(script, compiled):
    """The server `script` (the one in the implementation's own directory,
    the same file as the root's), run up to its entry point, as the __main__
    each child takes on, and the entry point's code: the root's compiled
    code, named after `script`, so that its frames are those of a server
    started afresh from it. Each child ran the definitions itself before:
    about 0.5 ms and 115 copied pages a trial; compiling them in each
    forking server, about 3.6 ms."""
    import types

    definitions, code = (named(c, script) for c in compiled)
    server = types.ModuleType("__main__")
    server.__file__ = script
    exec(definitions, server.__dict__)
    return server, code


def forking(script, key, trusted, compiled, root_pid, library):
    """A forking server: the root's fork (the root: `root_pid`) for the
    implementation `key`, hosted by the server `script`, forking a child per
    trial from the bridge's loop (in its cdylib `library`:
    `served_by_the_bridge`)."""
    import gc
    import signal

    server, code = server_definitions(script, compiled)
    with open(os.path.join(os.path.dirname(script), "hosted.json"), encoding="utf-8") as f:
        table = json.load(f)
    if not any(i["key"] == key for i in table["impls"]):
        print(f"fencelab forking server: no implementation {key!r} in this build",
              file=sys.stderr)
        return 2
    # The table read here is the one each child's server finds read.
    server.HOSTED = table
    # The implementation, compiled once too (never run here: compiling runs
    # none of its code, and fencelab compiled it already to know it is
    # viable): each child runs this code, in its cage, as a server started
    # afresh runs what it compiles itself.
    module = precompiled(script, key, table)
    prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG: with the root
    if os.getppid() != root_pid:
        return 0  # the root is gone already
    # What compiling freed goes back to the system: a page kept here is a
    # page each child's fork copies the mapping of and its exit unmaps.
    gc.collect()
    ctypes_trim()
    served_by_the_bridge(library, key, trusted, (code, server, module))
    print(f"fencelab forking server: cannot serve from {library!r}", file=sys.stderr)
    return 2


def precompiled(script, key, table):
    """The implementation `key`'s source and its code, compiled as
    fencelab_server.py's `compile_module` compiles it, or None when it does
    not compile (the child then compiles it, and fails, as a server started
    afresh does)."""
    shown = next(i["shown"] for i in table["impls"] if i["key"] == key)
    try:
        with open(os.path.join(os.path.dirname(script), "impls", key, "lease.py"),
                  encoding="utf-8") as f:
            source = f.read()
        return key, source, compile(source, shown, "exec", dont_inherit=True)
    except (OSError, SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def served_by_the_bridge(library, key, trusted, codes):
    """Serves every trial from the bridge's loop (`fencelab_forking_loop`, in
    its cdylib `library`), which returns only in a child, in its cage: this
    process runs no Python between two forks, and writes to a few pages of
    its own (a loop in Python wrote to about 115 after each fork, each page
    a copy). Returns where the bridge's loop cannot start."""
    import ctypes
    import gc
    import signal

    try:
        loop = ctypes.PyDLL(library).fencelab_forking_loop
    except (OSError, AttributeError):
        return
    loop.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                     ctypes.c_char_p, ctypes.c_size_t]
    loop.restype = ctypes.c_int
    # The implementation's key, then each message the loop receives.
    buffer = ctypes.create_string_buffer(key.encode(), 1 << 16)
    hooks = (ctypes.pythonapi.PyOS_BeforeFork, ctypes.pythonapi.PyOS_AfterFork_Parent)
    # This interpreter's own (the child's is reset to the default).
    interrupt = signal.getsignal(signal.SIGINT)
    gc.freeze()
    told = loop(LISTENER_FD, int(trusted), *hooks, buffer, len(buffer))
    if told < 0:
        return
    in_child(key, codes, buffer.value, told, interrupt, trusted)


def in_child(key, codes, message, told, interrupt, trusted):
    """The child of a trial, in its cage (this is its program now): the
    signals as a server started afresh has them, nothing else of the
    forking server's open (the cage's own descriptors included, which
    `fencelab_forking_loop` leaves to this), and the environment a server
    started by the judge would have had (the request's); then the server.
    Never returns."""
    import ctypes
    import signal

    try:
        ctypes.pythonapi.PyOS_AfterFork_Child()
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        if interrupt is not None:
            signal.signal(signal.SIGINT, interrupt)
        env = dict(json.loads(message).get("env", []))
        os.write(told, b"ok")
        os.closerange(LISTENER_FD + 1, 1 << 16)
        os.environ.clear()
        os.environ.update(env)
        run_child(key, trusted, *codes)
    except BaseException as err:  # nothing of a child returns to the loop
        try:
            os.write(told, f"the forked server failed: {err!r}".encode())
        except OSError:
            pass
    os._exit(1)


def run_child(key, trusted, code, server, module):
    """The caged child: this script run again as its `__main__` with `serve
    KEY`, so that the child is a server started afresh in all it shows (an
    uncaught exception's traceback, frame for frame; SystemExit's status;
    `sys.argv`), and ends as one would. `server`: the server's module, its
    definitions run by the forking server, and `code` its entry point.
    `module`: the implementation's source and code, compiled by the forking
    server (its `serve` runs that code rather than compile the file
    again)."""
    sys.argv = [server.__file__, "serve", key]
    server.PRECOMPILED = module
    # A learner's tests see what the contract returns, never where in the
    # implementation something was raised (a mutant's lines differ).
    server.HIDE_LOCATIONS = bool(trusted)
    sys.modules["__main__"] = server
    try:
        exec(code, server.__dict__)
        status = 0
    except SystemExit as err:
        status = exit_status(err.code)
    except BaseException as err:
        # What Python prints of an uncaught exception in a server started
        # afresh (its own hook, from the script's top level: this frame
        # left out).
        err = err.with_traceback(err.__traceback__.tb_next)
        sys.excepthook(type(err), err, err.__traceback__)
        status = 1
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(status)


def exit_status(code):
    """The status Python exits with for `sys.exit(code)`."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def main(argv):
    modes = {"--forking": False, "--forking-trusted": True}
    if len(argv) == 2 and argv[0] == "root" and argv[1] in modes:
        return root(os.path.dirname(os.path.abspath(__file__)), modes[argv[1]])
    print("usage: fencelab_forking.py root --forking | --forking-trusted "
          "(run by fencelab, not by hand)", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
