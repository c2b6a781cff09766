"""What a learner's Python tests' judge says of the implementation's end
(fencelab_tests.describe): a line marked with the trial's key, its value as
JSON, never the exception's English; nothing marked without a key."""

import json
import os
import unittest
from unittest import mock

import fencelab_tests as judge
import lease_proxy


class Said(unittest.TestCase):
    def ended(self):
        try:
            raise lease_proxy._ProcessEnded("fencelab: the implementation's process ended",
                                            "claim", "it closed the connection without answering")
        except ConnectionError as err:
            return err

    def test_the_proxys_end_is_a_marked_line_with_the_trials_key(self):
        with mock.patch.dict(os.environ, {judge.SAID_KEY_ENV: "k1"}):
            text = judge.describe(self.ended(), "test_mine.py")
        head = "\x01said k1\x01"
        self.assertTrue(text.startswith(head), text)
        said = json.loads(text[len(head):])
        self.assertEqual(said, {"ProcessEnded": {
            "call": "lease.claim",
            "how": {"StoppedAnswering": {"why": "it closed the connection without answering"}}}})

    def test_without_a_key_the_exception_is_told_as_it_is(self):
        with mock.patch.dict(os.environ, {judge.SAID_KEY_ENV: ""}):
            text = judge.describe(self.ended(), "test_mine.py")
        self.assertEqual(text, "lease_proxy._ProcessEnded: fencelab: the implementation's "
                               "process ended")
        self.assertNotIn("\x01", text)

    def test_another_exception_is_told_as_it_is(self):
        with mock.patch.dict(os.environ, {judge.SAID_KEY_ENV: "k1"}):
            try:
                raise ValueError("x")
            except ValueError as err:
                text = judge.describe(err, "test_mine.py")
        self.assertEqual(text, "ValueError: x")


    def test_a_test_cases_error_from_the_proxy_is_said_first(self):
        ended = self.ended()

        class Case(unittest.TestCase):
            def test_it(self):
                raise ended

        with mock.patch.dict(os.environ, {judge.SAID_KEY_ENV: "k1"}):
            text = judge.case_runner(Case, "test_it")()
        self.assertTrue(text.startswith("\x01said k1\x01{\"ProcessEnded\""), text)
        self.assertIn("Traceback", text)


if __name__ == "__main__":
    unittest.main()
