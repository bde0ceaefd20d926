#!/usr/bin/env bash
# make demo: a real ralph loop in a private tmux server, driving the demo
# agent through TASKS.md, one task per iteration, until it reports COMPLETE.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
swarm="$root/bin/swarm"
work=$(mktemp -d "${TMPDIR:-/tmp}/swarm-demo.XXXXXX")
export SWARM_HOME="$work/swarm-home"
export SWARM_TMUX_SOCKET="swarm-demo-$$"
export SWARM_POLL_INTERVAL=500ms
cleanup() {
  "$swarm" kill demo >/dev/null 2>&1
  tmux -L "$SWARM_TMUX_SOCKET" kill-server >/dev/null 2>&1
  rm -rf "$work"
}
trap cleanup EXIT

cp "$root/demo/TASKS.md" "$root/demo/PROMPT.md" "$work/"
cd "$work"
echo "== demo directory: $work"
echo "== to watch the agent live, in another terminal:"
echo "   SWARM_HOME=$SWARM_HOME SWARM_TMUX_SOCKET=$SWARM_TMUX_SOCKET $swarm attach demo"
echo
"$swarm" ralph spawn --name demo --prompt-file PROMPT.md --no-worktree \
  --max-iterations 6 --inactivity-timeout 30 --restart-delay 1s \
  -- "$root/bin/demo-agent" || exit 1
echo
echo "== swarm ralph wait demo (exit code: 0 done, 1 failed, 2 blocked, 3 decide)"
"$swarm" ralph wait demo --timeout 60
code=$?
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
exit $code
