"""The values that cross the bridge for Python, kept once: the server
(fencelab_server.py) and a learner's `lease` (lease_proxy.py) both import
them. fencelab writes this code in place of that import when it writes
either file, so each stays one self-contained script. Standard library only.

A value keeps its type: an int travels as its decimal text, a float as its
bits (so NaN, infinities and -0.0 arrive as sent), a tuple apart from a list.
"""

import os
import struct

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
