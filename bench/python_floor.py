"""The floor of one Python trial's server: the interpreter started as the
judge starts it (fencelab_server.py serve KEY, the listening socket as fd 3),
the hosted module imported, one call answered (init_db), the server ended.
Uncaged and without a judge, so a lower bound of what each Python trial
adds to a Rust one. Prints the median CPU and wall time of N runs.

Then the same server forked per run from an interpreter that imported it and
the contract's standard library once (the pre-started interpreter of issue
20, not built yet), for the floor that design would have.

Last, what a submission's forking server costs to make
(python/fencelab_forking.py): an interpreter started afresh that imports
what it preloads, runs the server's definitions and compiles the module,
beside the same forked from the root, which did the first two once.

Usage: python3 bench/python_floor.py SERVER_DIR [N [ROOT_DIR]]
  SERVER_DIR: a pyserver-* directory of the scratch workspace (its first
  hosted implementation is served); ROOT_DIR: a pyroot-* directory (the
  root's script), for the last figures."""

import json
import os
import socket
import sys
import tempfile
import time


def one(script, key):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.sock")
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(path)
        listener.listen(8)
        r, w = os.pipe()
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            fd = os.dup(listener.fileno()) if listener.fileno() == 3 else listener.fileno()
            os.dup2(fd, 3)
            os.set_inheritable(3, True)
            os.dup2(r, 0)
            os.chdir(d)
            os.execv(script, [script, "serve", key])
        os.close(r)
        conn = socket.socket(socket.AF_UNIX)
        conn.connect(path)
        request = {"InitDb": {"path": os.path.join(d, "jobs.db")}}
        conn.sendall((json.dumps(request) + "\n").encode())
        answer = conn.makefile().readline()
        conn.close()
        answered = time.perf_counter() - start
        os.close(w)
        _, _, usage = os.wait4(pid, 0)
        listener.close()
        if "Unit" not in answer:
            sys.exit(f"the server answered {answer!r}")
        return usage.ru_utime + usage.ru_stime, answered


def forked(server_module, key):
    """`one`, but the server is a fork of this process, which imported the
    server's code and the standard library the contract needs once: what a
    pre-started interpreter forking per trial would cost (uncaged)."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s.sock")
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(path)
        listener.listen(8)
        r, w = os.pipe()
        start = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(w)
                fd = os.dup(listener.fileno()) if listener.fileno() == 3 else listener.fileno()
                os.dup2(fd, 3)
                os.dup2(r, 0)
                os.chdir(d)
                server_module.serve(key)
            finally:
                os._exit(1)
        os.close(r)
        conn = socket.socket(socket.AF_UNIX)
        conn.connect(path)
        request = {"InitDb": {"path": os.path.join(d, "jobs.db")}}
        conn.sendall((json.dumps(request) + "\n").encode())
        answer = conn.makefile().readline()
        conn.close()
        answered = time.perf_counter() - start
        os.close(w)
        _, _, usage = os.wait4(pid, 0)
        listener.close()
        if "Unit" not in answer:
            sys.exit(f"the forked server answered {answer!r}")
        return usage.ru_utime + usage.ru_stime, answered


def forking_server(server_dir, root_dir, n):
    """CPU-seconds of making one forking server, started afresh (as each
    submission's was before the root) and forked from a root (as now; the
    root's script is in `root_dir`)."""
    import subprocess

    forking = os.path.join(root_dir, "fencelab_forking.py")
    script = os.path.join(server_dir, "fencelab_server.py")
    with open(os.path.join(server_dir, "hosted.json"), encoding="utf-8") as f:
        key = json.load(f)["impls"][0]["key"]
    with open(forking, encoding="utf-8") as f:
        python = f.readline()[2:].split()[0]  # the interpreter of its #! line
    setup = (f"import sys, os, json, gc, importlib, resource\n"
             f"sys.path.insert(0, {root_dir!r})\n"
             f"import fencelab_forking as F\n"
             f"def made(compiled):\n"
             f"    F.server_definitions({script!r}, compiled)\n"
             f"    table = json.load(open({os.path.join(server_dir, 'hosted.json')!r}))\n"
             f"    F.precompiled({script!r}, {key!r}, table)\n"
             f"    gc.collect(); F.ctypes_trim()\n"
             f"def ready():\n"
             f"    for name in F.PRELOADED: importlib.import_module(name)\n"
             f"    import selectors, signal\n"
             f"    return F.server_code({os.path.join(root_dir, 'fencelab_server.py')!r})\n")

    def children():
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    import resource

    afresh = []
    for _ in range(n):
        before = children()
        subprocess.run([python, "-IuS", "-c", setup + "made(ready())"], check=True)
        afresh.append(children() - before)
    root = subprocess.run(
        [python, "-IuS", "-c", setup + (
            "compiled = ready(); gc.collect(); F.ctypes_trim(); gc.freeze()\n"
            "def children():\n"
            "    r = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "    return r.ru_utime + r.ru_stime\n"
            f"for _ in range({n}):\n"
            "    before = children()\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        made(compiled); os._exit(0)\n"
            "    os.waitpid(pid, 0)\n"
            "    print(children() - before)\n")],
        check=True, capture_output=True, text=True)
    forked = [float(line) for line in root.stdout.split()]
    for what, runs in (("a forking server started afresh", afresh),
                       ("a forking server forked from the root", forked)):
        print(f"{what}, median of {n}: {sorted(runs)[n // 2] * 1000:.1f} ms CPU")


def report(what, runs):
    n = len(runs)
    cpu = sorted(c for c, _ in runs)[n // 2]
    wall = sorted(a for _, a in runs)[n // 2]
    print(f"{what}, median of {n}: {cpu * 1000:.1f} ms CPU, {wall * 1000:.1f} ms to its answer")


def main():
    server = os.path.abspath(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    with open(os.path.join(server, "hosted.json"), encoding="utf-8") as f:
        key = json.load(f)["impls"][0]["key"]
    script = os.path.join(server, "fencelab_server.py")
    report("floor of one Python server (start, import, one call)",
           [one(script, key) for _ in range(n)])
    # The design not built yet: the same server forked from an interpreter
    # that imported the server and the contract's standard library once.
    import importlib.machinery
    import importlib.util

    spec = importlib.util.spec_from_loader(
        "fencelab_server", importlib.machinery.SourceFileLoader("fencelab_server", script))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    import concurrent.futures  # noqa: F401 (what the hosted module imports)
    import sqlite3  # noqa: F401

    report("the same, forked from a pre-started interpreter (uncaged)",
           [forked(module, key) for _ in range(n)])
    if len(sys.argv) > 3:
        forking_server(server, os.path.abspath(sys.argv[3]), n)


if __name__ == "__main__":
    main()
