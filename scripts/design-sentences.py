#!/usr/bin/env python3
"""Hold DESIGN.md to short sentences: none of its prose sentences over 25 words.

Usage: scripts/design-sentences.py [FILE] [--map]

FILE defaults to DESIGN.md at the repository's root (the parent of this
script's folder). Prose is what is left once ``` code blocks, table rows
(lines starting with `|`) and headings are set aside. A paragraph (or a list
item) is split into sentences at `.`, `!` or `?` followed by whitespace or by
the paragraph's end; never inside `backticks`, after "e.g." or "i.e.", or in
a number such as 1.5 or v0.2. A word is a whitespace-separated token.

Prints each sentence over 25 words with its line and word count, then a
summary (sentences, mean words, longest). Exits 1 if any sentence is over 25
words, else 0. With --map, also prints the entries of the map of parts (the
first ``` block after "## The parts") whose text after the name is over 20
words, and exits 1 for those too.

Standard library only.
"""

import re
import sys
from pathlib import Path

MAX_WORDS = 25
MAX_MAP_WORDS = 20

# A list item starts a block of its own, as a new paragraph does.
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# Abbreviations whose full stop ends no sentence.
ABBREVIATIONS = ("e.g.", "i.e.")
# What may stand between a sentence's last mark and the space after it.
CLOSERS = ")]\"'\u201d\u2019*_"


def blocks(lines):
    """The prose blocks of the file: (first line number, [(line number, text)])."""
    in_code = False
    block = []
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("```"):
            in_code = not in_code
            if block:
                yield block
                block = []
            continue
        if in_code:
            continue
        if not stripped or stripped.startswith("|") or stripped.startswith("#"):
            if block:
                yield block
                block = []
            continue
        item = LIST_ITEM.match(line)
        if item:
            if block:
                yield block
                block = []
            # The item's marker ("-", "1.") is no word of its sentence.
            stripped = line[item.end():].strip()
        block.append((number, stripped))
    if block:
        yield block


def sentences(block):
    """The sentences of one block: (line number, text)."""
    # Join the lines, remembering where each line starts in the joined text.
    text = ""
    starts = []
    for number, line in block:
        if text:
            text += " "
        starts.append((len(text), number))
        text += line

    def line_at(offset):
        found = starts[0][1]
        for start, number in starts:
            if start <= offset:
                found = number
            else:
                break
        return found

    found = []
    begin = 0
    in_code = False
    i = 0
    while i < len(text):
        char = text[i]
        if char == "`":
            # A code span ends at the same run of backticks that opened it.
            run = len(text[i:]) - len(text[i:].lstrip("`"))
            if not in_code:
                close = text.find("`" * run, i + run)
                if close >= 0:
                    i = close + run
                    continue
            i += run
            continue
        if char in ".!?":
            end = i + 1
            while end < len(text) and text[end] in CLOSERS:
                end += 1
            at_end = end >= len(text)
            if (at_end or text[end].isspace()) and not abbreviation(text, i):
                sentence = text[begin:end].strip()
                if sentence:
                    found.append((line_at(begin + leading(text, begin)), sentence))
                begin = end
                i = end
                continue
        i += 1
    rest = text[begin:].strip()
    if rest:
        found.append((line_at(begin + leading(text, begin)), rest))
    return found


def leading(text, begin):
    """How many spaces start `text` at `begin`."""
    return len(text[begin:]) - len(text[begin:].lstrip())


def abbreviation(text, i):
    """Whether the full stop at `i` closes an abbreviation such as "e.g."."""
    if text[i] != ".":
        return False
    before = text[: i + 1].lower()
    return any(
        before.endswith(a) and (len(before) == len(a) or not before[-len(a) - 1].isalnum())
        for a in ABBREVIATIONS
    )


def map_entries(lines):
    """The map of parts: (line number, words after the name) per entry."""
    in_parts = False
    in_code = False
    for number, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped.startswith("#"):
            if in_parts and not in_code:
                return
            in_parts = stripped.lstrip("#").strip().lower() == "the parts"
            continue
        if not in_parts:
            continue
        if stripped.startswith("```"):
            if in_code:
                return
            in_code = True
            continue
        if in_code and stripped:
            yield number, len(stripped.split()) - 1


def main(argv):
    args = [a for a in argv[1:] if a != "--map"]
    check_map = "--map" in argv[1:]
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    root = Path(__file__).resolve().parent.parent
    path = Path(args[0]) if args else root / "DESIGN.md"
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        print(f"{path}: {err.strerror}", file=sys.stderr)
        return 2

    found = [s for block in blocks(lines) for s in sentences(block)]
    counts = [len(text.split()) for _, text in found]
    long_ones = [(n, c, t) for (n, t), c in zip(found, counts) if c > MAX_WORDS]
    for number, count, text in long_ones:
        print(f"{path}:{number}: {count} words: {text}")

    failed = bool(long_ones)
    if check_map:
        for number, count in map_entries(lines):
            if count > MAX_MAP_WORDS:
                failed = True
                print(f"{path}:{number}: map entry of {count} words: {lines[number - 1].strip()}")

    if counts:
        longest = max(range(len(counts)), key=counts.__getitem__)
        print(
            f"{path}: {len(counts)} sentences, mean {sum(counts) / len(counts):.1f} words, "
            f"longest {counts[longest]} words (line {found[longest][0]}), "
            f"{len(long_ones)} over {MAX_WORDS}"
        )
    else:
        print(f"{path}: no prose sentences")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
