#!/usr/bin/env bash
# The make bench figure of agent telemetry: with the pinned real Claude
# Code against the Go mock API, at default settings, the time from the
# mock's last byte of an answer to the next iteration's START
# (TestLoopStopEventEndsTheTurn measures it; target at most 1.5 s).
# Installs the pinned CLI as make test-agents does; skipped without npm.
set -euo pipefail
GO=${GO:-go}
if ! command -v npm >/dev/null 2>&1; then
	echo "answer to next START (real Claude Code): skipped, npm not found (make test-agents installs it)"
	exit 0
fi
out=$(SWARM_TEST_AGENTS=1 "$GO" test -count=1 -v -timeout 10m -run '^TestLoopStopEventEndsTheTurn$' ./internal/agenttest/ 2>&1) || {
	echo "$out"
	echo "answer to next START (real Claude Code): the test failed" >&2
	exit 1
}
line=$(grep -o 'result: .*' <<<"$out" || true)
if [ -z "$line" ]; then
	echo "$out"
	echo "answer to next START (real Claude Code): no figure (test skipped?)" >&2
	exit 1
fi
echo "answer to next START (real Claude Code, target <= 1.5s): ${line#result: }"
