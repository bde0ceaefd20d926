#!/usr/bin/env bash
# swarmpy-compat.sh: run swarm.py's own black-box tests against our swarm.
#
# swarm is a drop-in replacement for the Python tool swarm.py. That tool's
# repository has tests that drive `./swarm.py` only as a program (through
# subprocess, or tests/test_tmux_isolation.py's TmuxIsolatedTestCase), never
# by importing it. This script runs those tests with `./swarm.py` replaced by
# a stub that execs our binary, so every command, flag, message, exit code
# and file they check is checked against swarm.
#
# Nothing of swarm.py is kept in this repository: give the path of a
# checkout, the tests are copied from it into a temporary directory.
#
#   scripts/swarmpy-compat.sh [options] SWARMPY_CHECKOUT [TEST...]
#
#   -b BINARY   the swarm binary to test (default: build ./cmd/swarm)
#   -k          keep the work directory (its path is printed)
#   -t SECONDS  stop the whole run after this long (default 3600)
#   -x          also run the CLI-only classes of the other test modules
#   -l          list the default tests (and with -x the extra ones) and exit
#   TEST...     unittest names (module, module.Class or module.Class.test);
#               default: every black-box test module
#
# Needs python3, tmux and git. The tests run with HOME, TMUX_TMPDIR and the
# git identity set to throwaway values, and SWARM_HOME/SWARM_DIR unset, so
# they never touch the caller's ~/.swarm or tmux server. Exit status: 0 when
# every test passed, 1 when some failed, 2 on a usage or setup error.

set -euo pipefail

# The black-box modules: they run swarm.py only as a program. Other test
# files of swarm.py import it as a module and test its internals.
default_tests=(
    test_kill_integration
    test_lifecycle_pid
    test_lifecycle_tmux
    test_ready_wait_integration
    test_respawn_config
    test_state_file_recovery
    test_status_integration
    tests.test_integration_ralph
    tests.test_tmux_isolation
)

# With -x, also the classes of swarm.py's other test modules that only run
# swarm.py as a program (mostly --help text and argument parsing). Their
# modules import swarm.py, which here is the stand-in: importing it works,
# and these classes use nothing from it.
extended_tests=(
    test_cmd_heartbeat.TestHeartbeatSubparser
    test_cmd_init.TestInitSubparser
    test_cmd_ralph.TestRalphSubparser
    test_cmd_ralph.TestRalphHelpContent
    test_cmd_ralph.TestRalphSpawnArguments
    test_cmd_ralph.TestRalphSpawnNewArguments
    test_cmd_ralph.TestRalphSubcommandsCLI
    test_cmd_ralph.TestRalphRunSubparser
    test_cmd_ralph.TestRalphListSubparser
    test_cmd_ralph.TestRalphSpawnNoRunFlag
    test_cmd_ralph.TestRalphSpawnCheckDoneContinuousArgument
    test_cmd_ralph.TestRalphLsSubparser
    test_cmd_ralph.TestRalphCleanSubparser
    test_cmd_ralph.TestRalphCleanCLI
    test_cmd_ralph.TestRalphSpawnForegroundFlag
    test_cmd_ralph.TestMaxIterationsDefault
)

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
binary=""
keep=0
limit=3600
extended=0

usage() {
    sed -n '/^#   scripts/,/^#               default/p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

die() {
    echo "swarmpy-compat: error: $*" >&2
    exit 2
}

list=0
while getopts "b:kt:lxh" opt; do
    case "$opt" in
        b) binary="$OPTARG" ;;
        k) keep=1 ;;
        t) limit="$OPTARG" ;;
        x) extended=1 ;;
        l) list=1 ;;
        *) usage ;;
    esac
done
shift $((OPTIND - 1))
if [[ $extended -eq 1 ]]; then
    default_tests+=("${extended_tests[@]}")
fi
if [[ $list -eq 1 ]]; then
    printf '%s\n' "${default_tests[@]}"
    exit 0
fi
[[ $# -ge 1 ]] || usage
checkout="$(cd "$1" 2>/dev/null && pwd)" || die "no such directory: $1"
shift
[[ -f "$checkout/swarm.py" ]] || die "$checkout has no swarm.py: give the path of a swarm.py checkout"
tests=("$@")
[[ ${#tests[@]} -gt 0 ]] || tests=("${default_tests[@]}")

for tool in python3 tmux git; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool is required"
done

work="$(mktemp -d "${TMPDIR:-/tmp}/swarmpy-compat.XXXXXX")"
mkdir -p "$work/home" "$work/tmux" "$work/run/tests"

# On exit: stop every tmux server the tests started (all of them live under
# our TMUX_TMPDIR), then remove the work directory unless asked to keep it.
cleanup() {
    local sock
    for sock in "$work"/tmux/tmux-*/*; do
        if [[ -S "$sock" ]]; then
            tmux -S "$sock" kill-server >/dev/null 2>&1 || true
        fi
    done
    if [[ $keep -eq 1 ]]; then
        echo "swarmpy-compat: work directory kept: $work" >&2
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

if [[ -z "$binary" ]]; then
    command -v go >/dev/null 2>&1 || die "go is required to build swarm (or pass -b BINARY)"
    echo "swarmpy-compat: building swarm from $repo_root" >&2
    (cd "$repo_root" && go build -o "$work/swarm" ./cmd/swarm) || die "build failed"
    binary="$work/swarm"
fi
binary="$(cd "$(dirname "$binary")" && pwd)/$(basename "$binary")"
[[ -x "$binary" ]] || die "not an executable: $binary"

# Copy the test modules, keeping the layout they expect: top-level test_*.py
# beside swarm.py, and tests/ (a package) with test_tmux_isolation.py, which
# finds swarm.py as ../swarm.py.
copy_test() {
    local rel="$1"
    [[ -f "$checkout/$rel" ]] || { echo "swarmpy-compat: warning: $rel not in the checkout, skipped" >&2; return; }
    cp "$checkout/$rel" "$work/run/$rel"
}
copy_test tests/__init__.py
copy_test tests/test_tmux_isolation.py
for t in "${tests[@]}"; do
    # The file of a unittest name: its first dotted part, or its first two
    # when the module is in the tests package.
    first="${t%%.*}"
    if [[ "$first" == tests ]]; then
        rest="${t#tests.}"
        copy_test "tests/${rest%%.*}.py"
    else
        copy_test "$first.py"
    fi
done

# The stand-in for swarm.py: a Python file, because some tests run it as
# `python swarm.py ...` and others as `./swarm.py ...`. Importing it does
# nothing, so a test that imports swarm fails on the missing names instead
# of running the binary.
cat >"$work/run/swarm.py" <<EOF
#!/usr/bin/env python3
"""Stand-in for swarm.py: execs the swarm binary under test."""
import os
import sys

if __name__ == "__main__":
    os.execv("$binary", ["swarm"] + sys.argv[1:])
EOF
chmod 755 "$work/run/swarm.py"

# A clean, throwaway environment: swarm's state goes to \$HOME/.swarm, as
# the tests expect; tmux servers on the default socket land in our
# TMUX_TMPDIR; git can commit without the caller's config.
env_vars=(
    HOME="$work/home"
    TMUX_TMPDIR="$work/tmux"
    GIT_AUTHOR_NAME=swarmpy-compat GIT_AUTHOR_EMAIL=compat@swarm.invalid
    GIT_COMMITTER_NAME=swarmpy-compat GIT_COMMITTER_EMAIL=compat@swarm.invalid
    GIT_CONFIG_NOSYSTEM=1
    PYTHONDONTWRITEBYTECODE=1
    PYTHONUNBUFFERED=1
)
echo "swarmpy-compat: swarm.py tests from $checkout, swarm binary $binary" >&2
echo "swarmpy-compat: running ${tests[*]}" >&2

# A subreaper for the run. Process workers are daemons: once swarm exits
# they are orphans, and whoever adopts them must reap them when they die, or
# they stay zombies that kill(pid, 0) still finds ("process should be
# dead"). Where PID 1 does not reap (some containers and VMs), this process
# adopts and reaps them instead, as an init would. It forwards TERM and INT
# to the test run and exits with its status. Without prctl (not Linux) it
# just runs the tests.
cat >"$work/subreaper.py" <<'EOF'
import ctypes, os, signal, sys
try:
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
except (OSError, AttributeError):
    os.execvp(sys.argv[1], sys.argv[1:])
main = os.fork()
if main == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(sig, lambda s, _f: os.kill(main, s))
while True:
    try:
        pid, status = os.wait()
    except InterruptedError:
        continue
    if pid == main:
        code = os.waitstatus_to_exitcode(status)
        sys.exit(code if code >= 0 else 128 - code)
EOF

log="$work/unittest.log"
status=0
(
    cd "$work/run"
    exec env -u SWARM_HOME -u SWARM_DIR -u TMUX -u TMUX_PANE "${env_vars[@]}" \
        timeout --kill-after=30 "$limit" python3 "$work/subreaper.py" python3 -m unittest -v "${tests[@]}"
) 2>&1 | tee "$log" || status=$?
# With pipefail, status is unittest's (or timeout's 124) unless tee failed.

# Summary from unittest's closing lines: "Ran N tests in ..." and
# "OK" / "FAILED (failures=F, errors=E, skipped=S, ...)".
count() {
    local n
    n="$(grep -E '^(OK|FAILED)( \(|$)' "$log" | tail -1 | grep -oE "$1=[0-9]+" | cut -d= -f2 || true)"
    echo "${n:-0}"
}
ran="$(grep -oE '^Ran [0-9]+ tests?' "$log" | tail -1 | grep -oE '[0-9]+' || true)"
ran="${ran:-0}"
failures="$(count failures)"
errors="$(count errors)"
skipped="$(count skipped)"
xfail="$(count 'expected failures')"
xpass="$(count 'unexpected successes')"
passed=$((ran - failures - errors - skipped - xfail - xpass))

echo
echo "=== swarmpy-compat summary ==="
echo "ran $ran: passed $passed, failed $failures, errors $errors, skipped $skipped"
if [[ $failures -gt 0 || $errors -gt 0 ]]; then
    echo "not passing:"
    grep -E '^(FAIL|ERROR): ' "$log" | sed 's/^/  /' || true
fi
if [[ $status -eq 124 ]]; then
    echo "stopped after ${limit}s (-t)"
fi
if [[ $status -ne 0 || $failures -gt 0 || $errors -gt 0 || $ran -eq 0 ]]; then
    exit 1
fi
