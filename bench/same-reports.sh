#!/usr/bin/env bash
# Every report and screen of an earlier revision beside the work tree's, on
# the same inputs: for "behaviour unchanged" claims of a restructure.
#
#   bench/same-reports.sh BEFORE          (e.g. 48c395c)
#
# BEFORE is built (release) in a temporary worktree with a target directory
# of its own; the work tree's release build is AFTER. The inputs come from
# BEFORE's tree: its references, mutants, hostile fixtures, attacks and
# learner tests. Both sides run at the same paths and share one scratch
# cache (crates named by their sources' hash: the dependencies are built
# once); timings are masked, then the outputs are diffed. Raw and masked outputs stay in OUT (default target/same-reports).
# SAME_REPORTS_WORK=DIR keeps the worktree, builds and caches in DIR.
set -euo pipefail
. "$(dirname "$0")/keep.sh"
cd "$(dirname "$0")/.."
rev=${1:?give the revision to compare with, e.g. 48c395c}
out=$(realpath -m "${OUT:-target/same-reports}")
work=${SAME_REPORTS_WORK:-}
if [ -z "$work" ]; then
  work=$(mktemp -d)
  trap 'git worktree remove --force "$work/before" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
fi
work=$(realpath "$work")
[ -d "$work/before" ] || git worktree add --quiet --detach "$work/before" "$rev"
( cd "$work/before" && CARGO_TARGET_DIR="$work/before-target" cargo build --release --quiet )
cargo build --release --quiet
b=$work/before
before_bin=$work/before-target/release/fencelab
after_bin=$PWD/target/release/fencelab

# The inputs, at one path for both sides ($work/run, copied afresh for each).
in=$work/inputs
rm -rf "$in" "$work/run" "$out"
mkdir -p "$in"/{subs-rs,subs-py,mine} "$work/home" "$out"
"$before_bin" new "$in/rs" --lang en >/dev/null 2>&1
"$before_bin" new "$in/py" --python --lang en >/dev/null 2>&1
python3 - "$b" "$in" "$work/run" "$work/home" <<'PY'
import pathlib, re, shutil, sys, tomllib
b, inp, run, home = (pathlib.Path(p) for p in sys.argv[1:])
rs, py = (b / "src/lease.rs").read_text(), (b / "python/lease.py").read_text()

def changed(toml, source):
    m = tomllib.loads(toml.read_text())
    assert source.count(m["find"]) == 1, toml
    return source.replace(m["find"], m["replace"], 1)

# Labs: the reference, and a mutant of step 4, in each edition.
(inp / "rs/src/lib.rs").write_text(rs)
(inp / "py/lease.py").write_text(py)
shutil.copytree(inp / "rs", inp / "rs-mutant")
shutil.copytree(inp / "py", inp / "py-mutant")
(inp / "rs-mutant/src/lib.rs").write_text(changed(b / "mutants/claim-expiry-inclusive.toml", rs))
(inp / "py-mutant/lease.py").write_text(changed(b / "mutants-python/claim-expiry-inclusive.toml", py))
# A learner's tests: a thin happy path (with one invalid test), and Python's thorough file.
shutil.copytree(inp / "rs", inp / "rs-mine")
shutil.copy(b / "tests/fixtures/learner_tests/happy_path.rs", inp / "rs-mine/tests/mine/main.rs")
shutil.copy(b / "tests/fixtures/learner_tests/happy_path.rs", inp / "mine/happy_path.rs")
shutil.copy(b / "tests/fixtures/python_mine/thorough.py", inp / "mine/thorough.py")

# A class: the reference, four mutants, the hostile fixtures, a few attacks.
mutants = ["enqueue-insert-or-replace", "claim-expiry-inclusive",
           "complete-ignores-fence", "release-ignores-owner"]
for ext, source, subs, mdir in (("rs", rs, "subs-rs", "mutants"), ("py", py, "subs-py", "mutants-python")):
    (inp / subs / f"reference.{ext}").write_text(source)
    for m in mutants:
        (inp / subs / f"mutant-{m}.{ext}").write_text(changed(b / mdir / f"{m}.toml", source))
fixtures = b / "tests/fixtures/submissions"
for f in sorted(fixtures.glob("*.toml")):
    (inp / "subs-rs" / f"hostile-{f.stem}.rs").write_text(changed(f, rs))
for f in ("alternative.rs", "no_api.rs", "not_utf8.rs"):
    shutil.copy(fixtures / f, inp / "subs-rs" / f"hostile-{f}")
# The Python fixtures' placeholders, as tests/cli/python.rs fills them (no
# listener on port 1: reaching it fails the same way on both sides).
fill = {"GRADER_PORT": "1", "PEER_PATH": str(run / "peer.py"), "ROOT_DIR": str(b),
        "HOME_DIR": str(home), "SUBMISSIONS_DIR": str(run / "subs-py")}
(inp / "peer.py").write_text(py.replace("\n", "\n# PEER-SECRET-7f3a9c\n", 1))
for f in sorted((b / "tests/fixtures/python").glob("*.toml")):
    text = changed(f, py)
    for k, v in fill.items():
        text = text.replace(k, v)
    (inp / "subs-py" / f"hostile-{f.stem}.py").write_text(text)
# Attacks of tests/attacks/submissions.rs that need no placeholder: code put
# at the start of `renew`, or (at compile time) after the reference.
attacks = (b / "tests/attacks/submissions.rs").read_text()
code = dict(re.findall(r'\(\s*"(\w+)",\s*r#"(.*?)"#,?\s*\)', attacks, re.S))
renew = "    check_ttl(ttl)?;\n    check_now(now)?;\n    let conn = open(path.as_ref())?;"
assert rs.count(renew) == 1
for name in ("capabilities", "escapes", "thousand_processes", "fills_disk"):
    (inp / "subs-rs" / f"attack-{name}.rs").write_text(rs.replace(renew, f"{code[name]}\n{renew}", 1))
(inp / "subs-rs/attack-env_after_slashes.rs").write_text(f"{rs}\n{code['env_after_slashes']}\n")
print("inputs:", len(list((inp / "subs-rs").iterdir())), "Rust and",
      len(list((inp / "subs-py").iterdir())), "Python submissions")
PY

run=$work/run
mkdir -p "$work/cache" "$out/before" "$out/after"
# One command by one side, in a fresh copy of the inputs: its stdout, stderr
# and exit code, and the report.json and report.csv it may write.
r() { # SIDE LABEL DIR ARGS...
  local side=$1 label=$2 dir=$run/$3 bin=$before_bin o=$out/$1
  shift 3
  [ "$side" = after ] && bin=$after_bin
  rm -rf "$run"
  cp -a "$in" "$run"
  (cd "$dir" && { env -u GITHUB_ACTIONS -u NO_COLOR LANG=C.UTF-8 FENCELAB_CACHE="$work/cache" \
    FENCELAB_ATTACK_TOKEN=fencelab-attack-token-93c1 "$bin" "$@" \
    >"$o/$label.out" 2>"$o/$label.err" && echo 0 || echo $?; } >"$o/$label.rc")
  for ext in json csv; do
    if [ -f "$run/report.$ext" ]; then mv "$run/report.$ext" "$o/$label.$ext"; fi
  done
}
# Before, then after, command by command: an interrupted run still compares.
both() { r before "$@"; r after "$@"; echo "ran $1" >&2; }
report=(--json "$run/report.json")
for ed in rs py; do
  both "check-$ed-reference-en" "$ed" check --color never --lang en
  both "check-$ed-reference-ja" "$ed" check --color never --lang ja
  both "check-$ed-mutant-en" "$ed-mutant" check --color never --lang en
  both "check-$ed-mutant-ja" "$ed-mutant" check --color never --lang ja
  both "check-$ed-mutant-step4-en" "$ed-mutant" check --color never --step 4 --lang en
  both "check-$ed-mutant-step4-ja" "$ed-mutant" check --color never --step 4 --lang ja
done
both mine-rs rs-mine check --mine --color never "${report[@]}"
both mine-py py check --mine --color never "${report[@]}" "$run/mine/thorough.py"
both grade-tests-rs . grade --tests --color never "${report[@]}" --csv "$run/report.csv" \
  mine/happy_path.rs
for ed in py rs; do
  both "grade-$ed" . grade --color never "${report[@]}" --csv "$run/report.csv" \
    $(cd "$in" && ls subs-$ed/*)
done

# Timings masked, then a diff. JSON: each "secs" (a test's or a run's wall
# time) and "stopped_after_secs" (when a test over budget was stopped) go.
# Screens: the scratch build's status lines go whole ("Building ...",
# "Built ... in 12.3s"): whether they show depends on the cache's state and
# the build's time. grade's progress lines ("Graded [3/18] NAME 87.50 / 100")
# come in the order submissions finish: their counter goes and each run of
# them is sorted. Any other "in 1.2s" or "（1.2 秒）" keeps its words, the
# figure masked. Random names a hostile submission may print are masked too:
# the trials' root (fencelab-run-XXXXXX), a test's database (jobs-XXXXXX), a
# server's socket (fencelab-<16 hex>-N.sock).
python3 - "$out" <<'PY'
import json, pathlib, re, sys
out = pathlib.Path(sys.argv[1])
TIMINGS = {"secs", "stopped_after_secs"}
def drop(value):
    if isinstance(value, dict):
        return {k: drop(v) for k, v in value.items() if k not in TIMINGS}
    if isinstance(value, list):
        return [drop(v) for v in value]
    return value
built = re.compile(r"^\s*(Building|Built|ビルド中|ビルド完了) ")
progress = re.compile(r"^(\s*Graded) \[\d+/\d+\]")
RANDOM = [(r"fencelab-run-[A-Za-z0-9]{6}", "fencelab-run-XXXXXX"),
          (r"jobs-[A-Za-z0-9]{6}\b", "jobs-XXXXXX"),
          (r"fencelab-[0-9a-f]{16}-(\d+)\.sock", r"fencelab-<hex>-\1.sock")]
for side in ("before", "after"):
    for f in sorted((out / side).iterdir()):
        text = f.read_bytes().decode("utf-8", "replace")
        for pattern, mask in RANDOM:
            text = re.sub(pattern, mask, text)
        if f.suffix == ".json":
            text = json.dumps(drop(json.loads(text)), ensure_ascii=False, indent=1) + "\n"
        elif f.suffix in (".out", ".err"):
            lines, run = [], []
            for l in text.split("\n") + [""]:
                if progress.match(l):
                    run.append(progress.sub(r"\1", l))
                    continue
                lines += sorted(run)
                run = []
                if not built.match(l):
                    lines.append(l)
            text = "\n".join(lines[:-1])
            text = re.sub(r"\bin \d+\.\ds\b", "in <t>s", text)
            text = re.sub(r"（\d+\.\d 秒）", "（<t> 秒）", text)
        masked = out / f"masked-{side}" / f.name
        masked.parent.mkdir(exist_ok=True)
        masked.write_text(text)
PY
cd "$out" && diff -r masked-before masked-after && echo "same reports and screens: none differs"
