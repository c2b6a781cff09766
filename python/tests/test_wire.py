"""The wire (fencelab_wire.py): every value of the contract, and every value
a learner's tests may pass, arrives as it was sent, its type kept."""

import math
import pathlib
import struct
import unittest

import fencelab_wire as wire


def same(a, b):
    """Equal, NaN to NaN and -0.0 apart from 0.0, types kept throughout."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return struct.pack("<d", a) == struct.pack("<d", b)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a.items(), b.items()))
    return a == b


class RoundTrip(unittest.TestCase):
    VALUES = [
        None, True, False, 0, -1, 2**70, "", "job-1", "ジョブ", " padded ", "two\nlines",
        0.0, -0.0, 1e-300, 1e300, math.nan, math.inf, -math.inf, 5e-324,
        [], [None, 1, "a"], (), (1, 2.5), {"id": "j", "done": False, "until": 1.5},
        b"\x00\xff", pathlib.Path("/tmp/jobs.db"),
        {"job": [(1, None), {"nested": [math.nan]}]},
    ]

    def test_every_value_arrives_as_sent(self):
        for value in self.VALUES:
            with self.subTest(value=value):
                self.assertTrue(same(wire.decode(wire.encode(value)), value))

    def test_a_float_travels_as_its_bits(self):
        self.assertEqual(wire.encode(-0.0), {"float": 1 << 63})
        nan = wire.decode({"float": 0x7FF8000000000001})
        self.assertTrue(math.isnan(nan))
        self.assertEqual(struct.pack("<d", nan), struct.pack("<Q", 0x7FF8000000000001))

    def test_an_int_and_a_bool_do_not_become_each_other(self):
        self.assertIs(wire.decode(wire.encode(True)), True)
        self.assertEqual(wire.encode(1), {"int": "1"})

    def test_a_value_of_another_type_is_refused_or_described(self):
        class Thing:
            def __repr__(self):
                return "<thing>"

        with self.assertRaises(TypeError):
            wire.encode(Thing())
        opaque = wire.decode(wire.encode([Thing()], strict=False))[0]
        self.assertIsInstance(opaque, wire.Opaque)
        self.assertEqual(repr(opaque), "<thing>")
        self.assertNotEqual(opaque, wire.decode(wire.encode(Thing(), strict=False)))


if __name__ == "__main__":
    unittest.main()
