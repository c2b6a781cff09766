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


# --- values: the same in python/lease_proxy.py and python/fencelab_server.py ---
class Opaque:
    """A value of a type that does not cross (an object of the
    implementation's own): equal only to itself, shown as the original."""

    def __init__(self, type_name, text):
        self._type_name = type_name
        self._text = text

    def __repr__(self):
        return self._text

    __str__ = __repr__


def _bits(value):
    return struct.unpack("<Q", struct.pack("<d", value))[0]


def _float(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def encode(value, strict=True):
    """A Python value as JSON, its type kept; a value of another type is a
    TypeError when `strict`, else an Opaque's description."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return {"int": str(value)}
    if isinstance(value, float):
        return {"float": _bits(value)}
    if isinstance(value, (list, tuple)):
        kind = "tuple" if isinstance(value, tuple) else "list"
        return {kind: [encode(v, strict) for v in value]}
    if isinstance(value, dict):
        return {"dict": [[encode(k, strict), encode(v, strict)] for k, v in value.items()]}
    if isinstance(value, bytes):
        return {"bytes": value.hex()}
    if isinstance(value, os.PathLike):
        return {"path": os.fspath(value)}
    if strict:
        raise TypeError(f"the lab's API takes None, bools, numbers, strings, paths, lists, "
                        f"tuples and dicts, not {type(value).__name__}")
    return {"other": {"type": type(value).__name__, "repr": repr(value)[:1000]}}


def decode(value):
    """What `encode` made, back."""
    if value is None or isinstance(value, (bool, str)):
        return value
    (kind, inner), = value.items()
    if kind == "int":
        return int(inner)
    if kind == "float":
        return _float(inner)
    if kind == "list":
        return [decode(v) for v in inner]
    if kind == "tuple":
        return tuple(decode(v) for v in inner)
    if kind == "dict":
        return {decode(k): decode(v) for k, v in inner}
    if kind == "bytes":
        return bytes.fromhex(inner)
    if kind == "path":
        import pathlib

        return pathlib.Path(inner)
    return Opaque(inner.get("type", "?"), inner.get("repr", "?"))
# --- end of values ---


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
            raise ConnectionError(f"fencelab: the implementation's process could not be "
                                  f"reached during lease.{name}(): {err}") from None
    if not line:
        raise ConnectionError(f"fencelab: the implementation's process ended during "
                              f"lease.{name}() without answering")
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
