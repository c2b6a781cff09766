# Sourced by the bench scripts that count processor time.
# run_counted FILE CMD...: runs CMD (in the current directory) and appends to
# FILE the nanoseconds of processor time of all it started (a cpuacct cgroup
# of its own, where this user may make one; else "-"); CMD's exit status is
# returned.
cpuacct=/sys/fs/cgroup/cpuacct
run_counted() {
  out=$1; shift
  group=$cpuacct/fencelab-bench-$$
  if mkdir "$group" 2>/dev/null; then
    status=0
    sh -c 'echo $$ >"$1/tasks"; shift; exec "$@"' sh "$group" "$@" || status=$?
    cat "$group/cpuacct.usage" >>"$out"
    # Leftovers (none expected) go back to the root before the group goes.
    for pid in $(cat "$group/tasks"); do echo "$pid" >"$cpuacct/tasks" 2>/dev/null || true; done
    rmdir "$group" 2>/dev/null || true
    return $status
  fi
  echo - >>"$out"
  "$@"
}
