# swarm: build, test, benchmark, demo.
GO      ?= go
BIN     ?= bin/swarm
PREFIX  ?= $(HOME)/.local
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X main.version=$(VERSION)

.PHONY: build install test test-short bench lint fuzz demo clean

# CGO_ENABLED=0: swarm needs no C, and a static binary starts about 1 ms
# sooner than one linked against libc (no dynamic loader), which every
# command pays (docs/development.md, "Start-up").
build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/swarm

install: build
	install -d $(PREFIX)/bin
	install -m 0755 $(BIN) $(PREFIX)/bin/swarm
	@echo "installed $(PREFIX)/bin/swarm"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*|*":$(PREFIX)/bin/:"*) ;; *) \
		echo "note: $(PREFIX)/bin is not on your PATH: add it, e.g. in ~/.profile: export PATH=\"$(PREFIX)/bin:\$$PATH\"" ;; esac

# The one test command: lint (gofmt, vet, errcheck, staticcheck), a macOS
# build (README promises one), then every test with the race detector,
# against real tmux and git (each test on its own tmux socket and
# SWARM_HOME). scripts/deps.sh first installs what the tests need when it
# is missing (apt-get), or says what to install.
test:
	@scripts/deps.sh test
	@$(MAKE) --no-print-directory lint
	GOOS=darwin $(GO) build -o /dev/null ./cmd/swarm
	$(GO) test -race -count=1 -timeout 10m ./...

# The real agent CLIs (Claude Code, Codex) in tmux against the mock APIs
# (internal/mockapi): installs the pinned releases (internal/agenttest:
# ClaudeVersion, CodexVersion) with npm into
# ${XDG_CACHE_HOME:-~/.cache}/swarm-test-agents once, then runs every
# scenario in its own tmux server and HOME. Needs npm (skipped without it).
# UPDATE=1 rewrites the captured screens under internal/agenttest/testdata;
# SCREENS=1 prints every captured screen. Other packages' real-agent tests
# are gated by the same SWARM_TEST_AGENTS=1: add them to AGENT_PKGS.
# The loop scenarios mostly wait (usage-limit resets, inactivity timeouts),
# so more of them run at once than there are cores: AGENT_PARALLEL.
.PHONY: test-agents
AGENT_PKGS ?= ./internal/agenttest/
AGENT_PARALLEL ?= 4
test-agents:
	@scripts/deps.sh agents
	SWARM_TEST_AGENTS=1 SWARM_UPDATE_FIXTURES=$(UPDATE) SWARM_AGENT_SCREENS=$(SCREENS) \
		$(GO) test -race -count=1 -v -parallel $(AGENT_PARALLEL) -timeout 30m $(AGENT_PKGS)

# The same real-agent tests against the releases npm serves today (npm view
# PKG version: Claude Code and Codex), installed into a cache of their own
# (${XDG_CACHE_HOME:-~/.cache}/swarm-test-agents-latest), so the pinned
# installs stay as they are. CI runs the pins (make test-agents); this says
# whether a new release still works before the pins move. UPDATE=1 captures
# the new release's screens under internal/agenttest/testdata.
.PHONY: test-agents-latest
test-agents-latest:
	@scripts/deps.sh agents
	@set -e; \
	claude=$$(npm view @anthropic-ai/claude-code version); codex=$$(npm view @openai/codex version); \
	if [ -z "$$claude" ] || [ -z "$$codex" ]; then echo "npm view gave no latest release" >&2; exit 1; fi; \
	echo "latest on npm: Claude Code $$claude, Codex $$codex"; \
	SWARM_CLAUDE_CODE_VERSION=$$claude SWARM_CODEX_VERSION=$$codex \
	SWARM_TEST_AGENTS_CACHE=$${XDG_CACHE_HOME:-$$HOME/.cache}/swarm-test-agents-latest \
	$(MAKE) --no-print-directory test-agents

# Unit tests only (no tmux needed).
test-short:
	$(GO) test -count=1 -short ./...

# gofmt, go vet, errcheck, dropcheck and staticcheck (docs/development.md,
# "Errors"). errcheck: no error dropped unseen outside _test.go files,
# fmt.Fprint* to the user's streams excepted (scripts/errcheck-exclude.txt);
# dropcheck: a drop on purpose says why on its line (`_ = f() // why`).
# errcheck and staticcheck are pinned and run with go run: the module proxy
# gives them once, the build cache keeps them, and they stay out of go.mod
# (their dependencies never move the binary's).
ERRCHECK    ?= $(GO) run github.com/kisielk/errcheck@v1.30.0
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(ERRCHECK) -ignoretests -exclude scripts/errcheck-exclude.txt ./...
	$(GO) run ./scripts/dropcheck cmd internal demo scripts
	$(STATICCHECK) ./...

# Fuzz every parser and matcher (each Fuzz target of each package, found by
# go test -list) for FUZZTIME each. Their seed corpora already run in make test.
FUZZTIME ?= 30s
fuzz:
	@set -e; for pkg in $$($(GO) list ./...); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; \
			$(GO) test $$pkg -run '^$$' -fuzz "^$$f\$$" -fuzztime $(FUZZTIME); \
		done; \
	done

# Figures, not pass/fail: ls/status latency at 10/100/500 workers, tmux
# processes per command and per monitor poll, monitor RSS and CPU (generic
# and Claude Code profiles), idle time per iteration, ls --all-hosts over
# 4 hosts x 100 workers (real sshd on loopback; skipped without OpenSSH),
# and the time from an answer of the real Claude Code to the next
# iteration's START (scripts/bench-answer.sh; skipped without npm).
bench: build
	$(GO) run ./internal/bench -swarm $(BIN)
	@GO=$(GO) scripts/bench-answer.sh

# A real ralph loop in tmux against the demo agent: no API key; about 15 s
# once built (see README for a first build). scripts/deps.sh installs tmux
# and git when missing, before the build (go build stamps the git revision:
# it needs git in a clone).
demo:
	@scripts/deps.sh demo
	@$(MAKE) --no-print-directory build
	$(GO) build -o bin/demo-agent ./demo/agent
	./demo/run.sh

clean:
	rm -rf bin demo/work
