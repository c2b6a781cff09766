"""The lab's API as a learner's own tests import it (``import lease``, ``from
lease import claim``) when fencelab judges them: every call is sent to the
implementation under test, which runs in another process (the reference, a
wheat or a mutant; the test cannot tell which but by its answers), and what
it returned or raised comes back as Python values. Written by fencelab into
the judge's directory as ``api/lease.py``; standard library only.

What crosses: the call's arguments and the answer, each tagged with its
Python type (``True`` stays a ``bool`` and ``1`` an ``int``, a ``tuple``
stays a ``tuple``, floats travel as their bits so ``nan`` and ``-0.0``
arrive as sent); an exception comes back as its class (a built-in one, or
one of ``sqlite3``'s, with ``sqlite_errorcode``) and its arguments, so
``pytest.raises``-style checks, ``str(err)`` and ``err.args`` see what the
implementation raised. A value of another type comes back as an object that
only compares equal to itself and shows the original's ``repr``.
"""

import json
import os
import socket
import struct

__all__ = ["init_db", "enqueue", "state", "claim", "renew", "complete", "release",
           "claim_many"]

_SOCKET_ENV = "FENCELAB_SOCKET"


def _socket_path():
    path = os.environ.get(_SOCKET_ENV)
    if not path:
        return None
    # A test may change directory: a relative path is pinned now, unless the
    # absolute one would be too long for a socket.
    absolute = os.path.abspath(path)
    return absolute if len(absolute) <= 100 else path


_SOCKET = _socket_path()


from fencelab_wire import Opaque, decode, encode  # fencelab: the wire (written in place)


def _exception(raised):
    """The exception the implementation raised, as this process can raise it."""
    name, module = raised.get("type", "Exception"), raised.get("module", "builtins")
    args = tuple(decode(a) for a in raised.get("args", []))
    cls = None
    if module == "builtins":
        import builtins

        cls = getattr(builtins, name, None)
    elif module == "sqlite3":
        import sqlite3

        cls = getattr(sqlite3, name, None)
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):
        cls = type(name, (Exception,), {"__module__": module})
    try:
        err = cls(*args)
    except Exception:
        err = cls(raised.get("message", ""))
    for attribute in ("sqlite_errorcode", "sqlite_errorname"):
        if attribute in raised:
            setattr(err, attribute, raised[attribute])
    return err


class _ProcessEnded(ConnectionError):
    """The implementation's process ended, or could not be reached, during a
    call. ``fencelab_said`` is what fencelab says of it, as data
    (``bridge::said::Said``): the judge words it, never this text."""

    def __init__(self, text, name, why):
        super().__init__(text)
        how = {"StoppedAnswering": {"why": why}}
        self.fencelab_said = {"ProcessEnded": {"call": f"lease.{name}", "how": how}}


def _call(name, *args):
    if _SOCKET is None:
        raise RuntimeError(f"lease.{name}() was called outside a test (while the tests were "
                           f"collected): call the lab's API inside your test functions")
    request = json.dumps({"Python": {"call": name, "args": [encode(a) for a in args]}})
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
        try:
            conn.connect(_SOCKET)
            conn.sendall(request.encode() + b"\n")
            line = conn.makefile("rb").readline()
        except OSError as err:
            raise _ProcessEnded(f"fencelab: the implementation's process could not be "
                                f"reached during lease.{name}(): {err}", name,
                                f"cannot reach it: {err}") from None
    if not line:
        raise _ProcessEnded(f"fencelab: the implementation's process ended during "
                            f"lease.{name}() without answering", name,
                            "it closed the connection without answering")
    answer = json.loads(line)
    if "PyReturned" in answer:
        return decode(answer["PyReturned"])
    raise _exception(answer.get("PyRaised", {})) from None


def init_db(path):
    return _call("init_db", path)


def enqueue(path, job_id):
    return _call("enqueue", path, job_id)


def state(path, job_id):
    return _call("state", path, job_id)


def claim(path, job_id, owner, now, ttl):
    return _call("claim", path, job_id, owner, now, ttl)


def renew(path, job_id, owner, fence, now, ttl):
    return _call("renew", path, job_id, owner, fence, now, ttl)


def complete(path, job_id, owner, fence, now, result):
    return _call("complete", path, job_id, owner, fence, now, result)


def release(path, job_id, owner, fence):
    return _call("release", path, job_id, owner, fence)


def claim_many(path, job_id, owners, now, ttl):
    return _call("claim_many", path, job_id, owners, now, ttl)
