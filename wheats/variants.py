#!/usr/bin/env python3
"""Writes every variant of wheats/ out as a complete implementation.

A variant is a wheat given as one change of the reference: wheats/<id>.toml
with `find` and `replace` (as a mutant in mutants/) and no wheats/<id>.rs.
This applies each one to src/lease.rs and writes the result to DIR/<id>.rs.

Usage: wheats/variants.py DIR      (needs Python 3.11 or later, for tomllib)

It checks what it can without compiling: `find` occurs exactly once in
src/lease.rs, `freedoms` names exactly one freedom of wheats/freedoms.toml,
and the file has no keys but title, freedoms, find, replace and explanation.
Exit status 1 (and nothing written for that variant) when a check fails.
"""

import sys
import tomllib
from pathlib import Path

KEYS = {"title", "freedoms", "find", "replace", "explanation"}


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    wheats = Path(__file__).resolve().parent
    reference = (wheats.parent / "src" / "lease.rs").read_text()
    with open(wheats / "freedoms.toml", "rb") as f:
        known = set(tomllib.load(f)["freedom"])
    out.mkdir(parents=True, exist_ok=True)
    status = 0
    for toml in sorted(wheats.glob("*.toml")):
        if toml.name == "freedoms.toml":
            continue
        with open(toml, "rb") as f:
            wheat = tomllib.load(f)
        if "find" not in wheat:
            continue
        problems = []
        if (wheats / f"{toml.stem}.rs").exists():
            problems.append(f"a variant has no {toml.stem}.rs beside it")
        if set(wheat) - KEYS:
            problems.append(f"unknown keys {sorted(set(wheat) - KEYS)}")
        if "replace" not in wheat:
            problems.append("`find` without `replace`")
        freedoms = wheat.get("freedoms", [])
        if len(freedoms) != 1:
            problems.append(f"takes {len(freedoms)} freedoms, not exactly one")
        problems += [f"unknown freedom {x!r}" for x in freedoms if x not in known]
        count = reference.count(wheat["find"])
        if count != 1:
            problems.append(f"`find` occurs {count} times in src/lease.rs")
        if problems:
            for problem in problems:
                print(f"{toml}: {problem}", file=sys.stderr)
            status = 1
            continue
        source = reference.replace(wheat["find"], wheat["replace"])
        (out / f"{toml.stem}.rs").write_text(source)
    return status


if __name__ == "__main__":
    sys.exit(main())
