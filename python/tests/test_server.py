"""The server's dispatch (fencelab_server.respond): each request of the
bridge reaches the module's function, and what the function returns or
raises is answered as the contract says, on the Python reference."""

import math
import os
import pathlib
import struct
import tempfile
import unittest

import fencelab_server as server
import lease

HERE = pathlib.Path(__file__).resolve().parent.parent


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


class Dispatch(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.db = os.path.join(self.dir.name, "jobs.db")
        self.respond(("InitDb", {}))

    def tearDown(self):
        self.dir.cleanup()

    def respond(self, request, module=lease):
        name, args = request
        return server.respond(module, "lease.py", {name: dict(args, path=self.db)})

    def test_every_function_answers_as_the_contract_says(self):
        ok = lambda value: {"Returned": {"Ok": value}}
        self.assertEqual(self.respond(("Enqueue", {"job_id": "j"})), ok({"Bool": True}))
        claim = {"job_id": "j", "owner": "a", "now": bits(1.0), "ttl": bits(10.0)}
        self.assertEqual(self.respond(("Claim", claim)), ok({"Fence": 1}))
        job = self.respond(("State", {"job_id": "j"}))["Returned"]["Ok"]["Job"]
        self.assertEqual((job["owner"], job["fence"], job["until"], job["done"]),
                         ("a", 1, bits(11.0), False))
        held = {"job_id": "j", "owner": "a", "fence": 1, "now": bits(2.0)}
        self.assertEqual(self.respond(("Renew", dict(held, ttl=bits(5.0)))), ok({"Bool": True}))
        self.assertEqual(self.respond(("Complete", dict(held, result="r"))), ok({"Bool": True}))
        self.assertEqual(self.respond(("Release", {"job_id": "j", "owner": "a", "fence": 1})),
                         ok({"Bool": False}))
        many = {"job_id": "j", "owners": ["b"], "now": bits(3.0), "ttl": bits(1.0)}
        self.assertEqual(self.respond(("ClaimMany", many)), ok({"Fences": [None]}))
        self.assertEqual(self.respond(("State", {"job_id": "none"})), ok({"Job": None}))

    def test_a_value_error_is_the_contracts_error_for_the_argument_that_is_wrong(self):
        self.respond(("Enqueue", {"job_id": "j"}))
        bad = {"job_id": "j", "owner": "a", "now": bits(1.0), "ttl": bits(math.nan)}
        answer = self.respond(("Claim", bad))["Returned"]["Err"]["error"]
        self.assertEqual(answer, {"InvalidTtl": bits(math.nan)})
        bad = dict(bad, ttl=bits(1.0), now=bits(math.inf))
        self.assertEqual(self.respond(("Claim", bad))["Returned"]["Err"]["error"],
                         {"InvalidNow": bits(math.inf)})

    def test_a_wrong_type_is_a_misfit_and_other_exceptions_a_failure(self):
        class Wrong:
            @staticmethod
            def enqueue(path, job_id):
                return 1

            @staticmethod
            def state(path, job_id):
                raise NotImplementedError

        misfit = self.respond(("Enqueue", {"job_id": "j"}), Wrong)
        self.assertEqual(misfit["Misfit"]["function"], "enqueue")
        failed = self.respond(("State", {"job_id": "j"}), Wrong)
        self.assertIn("not yet implemented", failed["Panicked"]["message"])


class Sources(unittest.TestCase):
    def test_every_python_file_compiles(self):
        for path in sorted(HERE.glob("*.py")):
            with self.subTest(path=path.name):
                compile(path.read_text(encoding="utf-8"), str(path), "exec")


if __name__ == "__main__":
    unittest.main()
