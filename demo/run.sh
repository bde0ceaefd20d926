#!/usr/bin/env bash
# make demo: a real ralph loop in a private tmux server, driving the demo
# agent through TASKS.md, one task per iteration, until it reports COMPLETE.
# Its files (state root, TASKS.md) stay in demo/work/ afterwards, so the
# commands it prints at the end work as printed; the next run replaces them.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
swarm="$root/bin/swarm"
work="$root/demo/work"
export SWARM_HOME="$work/swarm-home"
export SWARM_TMUX_SOCKET="swarm-demo-$$"
export SWARM_POLL_INTERVAL=500ms
ended=
# shellcheck disable=SC2317 # run by the EXIT trap
cleanup() {
  # Ctrl-C or a wait that timed out: stop the loop. The private tmux
  # server goes either way (an ended loop has closed its window).
  [ -n "$ended" ] || "$swarm" kill demo >/dev/null 2>&1
  tmux -L "$SWARM_TMUX_SOCKET" kill-server >/dev/null 2>&1
  # tmux 3.3 leaves the socket file behind.
  rm -f "${TMUX_TMPDIR:-/tmp}/tmux-$(id -u)/$SWARM_TMUX_SOCKET"
}
trap cleanup EXIT

# say COMMAND...: print a swarm command with the state root it needs, so
# that it works as printed in any shell (the worker's record names its
# tmux socket: no other variable is needed).
say() {
  printf '   SWARM_HOME=%q %q' "$SWARM_HOME" "$swarm"
  printf ' %q' "$@"
  printf '\n'
}

rm -rf "$work"
mkdir -p "$work" || exit 1
cp "$root/demo/TASKS.md" "$root/demo/PROMPT.md" "$work/" || exit 1
cd "$work" || exit 1
echo "== demo directory: $work"
echo "== to watch the agent live, in another terminal (detach: Ctrl-b d):"
say attach demo
echo
# Only spawn's first line: the commands it suggests next lack SWARM_HOME.
out=$("$swarm" ralph spawn --name demo --prompt-file PROMPT.md --no-worktree \
  --max-iterations 6 --inactivity-timeout 30 --restart-delay 1s \
  -- "$root/bin/demo-agent") || { echo "$out"; exit 1; }
echo "${out%%$'\n'*}"
echo
echo "== swarm ralph wait demo (exit code: 0 done, 1 failed, 2 blocked, 3 decide, 4 cap not complete)"
"$swarm" ralph wait demo --timeout 60
code=$?
# 124: wait timed out; 130: Ctrl-C stopped wait, not the loop.
case "$code" in 124 | 130) ;; *) ended=1 ;; esac
echo "== exit code $code"
echo
echo "== swarm ralph logs demo"
"$swarm" ralph logs demo
echo
echo "== swarm ralph status demo"
"$swarm" ralph status demo
echo
echo "== TASKS.md after the loop"
cat TASKS.md
echo
echo "== the loop's files stay in $work; look at it again with:"
say ralph status demo
say ralph logs demo
say ralph logs demo --iteration 3
exit "$code"
