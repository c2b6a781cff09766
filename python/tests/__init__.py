"""Unit tests of fencelab's Python programs: python3 -m unittest discover -s python/tests -t python"""
