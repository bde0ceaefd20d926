#!/usr/bin/env bash
# sandbox.sh: run a coding agent (Claude Code by default) inside a Docker
# container that sees only this project, on a network that reaches only an
# allow-list of hosts. Written by `swarm init --with-sandbox`; edit freely.
#
#   ./sandbox.sh [agent args...]
#   swarm ralph spawn --name dev --prompt-file PROMPT.md --max-iterations 50 \
#       -- ./sandbox.sh --dangerously-skip-permissions
#
# Run it from the directory the agent works in (swarm starts workers there,
# worktree or not). One-time setup:
#   sudo ./setup-sandbox-network.sh     # network with the allow-list
#   (the image is built on first use from Dockerfile.sandbox)
#
# Settings (environment):
#   SANDBOX_IMAGE=sandbox-loop     image name
#   SANDBOX_NETWORK=sandbox-net    Docker network (see setup-sandbox-network.sh)
#   SANDBOX_AGENT=claude           command run in the container
#   MEMORY_LIMIT=8g CPU_LIMIT=4 PIDS_LIMIT=512   resource caps
#   ANTHROPIC_API_KEY or CLAUDE_CODE_OAUTH_TOKEN  agent login (else taken
#                                  from ~/.claude/.credentials.json)
#   GH_TOKEN                       git over HTTPS (else `gh auth token`)

set -euo pipefail

image="${SANDBOX_IMAGE:-sandbox-loop}"
network="${SANDBOX_NETWORK:-sandbox-net}"
agent="${SANDBOX_AGENT:-claude}"
memory="${MEMORY_LIMIT:-8g}"
cpus="${CPU_LIMIT:-4}"
pids="${PIDS_LIMIT:-512}"

# The kit's own directory: Dockerfile.sandbox lives beside this script,
# wherever the agent's working directory is.
kit_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work_dir="$(pwd -P)"

die() {
    echo "sandbox.sh: error: $*" >&2
    exit 1
}

warn() {
    echo "sandbox.sh: warning: $*" >&2
}

command -v docker >/dev/null 2>&1 || die "docker is not installed or not on PATH"

# Build the image on first use, with the caller's uid/gid so files the agent
# writes into the project belong to the caller, not to root.
if ! docker image inspect "$image" >/dev/null 2>&1; then
    [[ -f "$kit_dir/Dockerfile.sandbox" ]] || die "image '$image' not found and no $kit_dir/Dockerfile.sandbox to build it"
    echo "sandbox.sh: building image '$image' (first run)" >&2
    docker build \
        --build-arg "USER_ID=$(id -u)" \
        --build-arg "GROUP_ID=$(id -g)" \
        -t "$image" -f "$kit_dir/Dockerfile.sandbox" "$kit_dir" >&2
fi

# Fail closed: without the locked-down network the container would have the
# default bridge, that is, the whole internet.
docker network inspect "$network" >/dev/null 2>&1 ||
    die "network '$network' does not exist; run: sudo $kit_dir/setup-sandbox-network.sh"

mounts=()
ro() { mounts+=(-v "$1:$1:ro"); }
rw() { mounts+=(-v "$1:$1"); }
# The project is mounted at its own path, so the absolute paths in a git
# worktree's .git file (and in the agent's per-project history) still work.
rw "$work_dir"

# git on the host (swarm's, yours) reads the repository's git metadata: its
# config can name programs (core.fsmonitor, hooks, filter drivers) and its
# pointers (a worktree's .git file, commondir) can name another git
# directory. So the agent gets write access only to what a commit needs:
# objects, refs and reflogs, and its worktree's own HEAD, index and rebase
# state; everything else it sees read-only.
hostgit() { git -c core.fsmonitor= -c core.hooksPath=/dev/null -C "$work_dir" "$@"; }

# config.worktree is read when extensions.worktreeConfig is on, which
# you may turn on later (git sparse-checkout does): one is made (empty) if
# missing, so that the agent cannot make it.
worktree_config() {
    local f="$1/config.worktree"
    [[ -e "$f" ]] || : >"$f"
    ro "$f"
}

# Replace refs (refs/replace/<commit>) make git show another commit in
# place of the one named, in every worktree (swarm's git turns them off,
# yours does not); notes are shown by git log. A commit needs neither:
# they are read-only, made first so that the agent cannot make them.
git_refs_ro() {
    local d
    for d in replace notes; do
        mkdir -p "$common/refs/$d"
        ro "$common/refs/$d"
    done
}

if top="$(hostgit rev-parse --show-toplevel 2>/dev/null)" &&
    gitdir="$(hostgit rev-parse --absolute-git-dir 2>/dev/null)" &&
    common="$(hostgit rev-parse --git-common-dir 2>/dev/null)"; then
    common="$(cd "$work_dir" && cd "$common" && pwd -P)"
    gitdir="$(cd "$gitdir" && pwd -P)"
    if [[ "$gitdir" != "$common" ]]; then
        # A linked worktree (swarm's --worktree): its metadata lives in
        # the main repository's .git, outside the project.
        ro "$common"
        mkdir -p "$common/logs" # a commit writes the branch's reflog there
        for d in objects refs logs; do rw "$common/$d"; done
        git_refs_ro
        rw "$gitdir"
        for f in commondir gitdir; do
            if [[ -e "$gitdir/$f" ]]; then ro "$gitdir/$f"; fi
        done
        worktree_config "$gitdir"
        ro "$top/.git"
    else
        # The main checkout: a commit writes HEAD and the index at the
        # top of .git, so .git stays writable (and is a mount point, which
        # cannot be renamed or replaced); what git runs or follows is
        # read-only. The directories are made first so that the agent
        # cannot make them.
        rw "$common"
        for d in hooks info worktrees modules; do
            mkdir -p "$common/$d"
            ro "$common/$d"
        done
        ro "$common/config"
        git_refs_ro
        worktree_config "$common"
        # A .git file (git init --separate-git-dir) names the git directory.
        if [[ -f "$top/.git" ]]; then ro "$top/.git"; fi
    fi
fi

# Agent settings (read-only) and this project's session history, only when
# they exist: docker would otherwise create them on the host as root-owned
# directories. Other projects' histories stay out of the container.
container_home=/home/agent
settings="$HOME/.claude/settings.json"
if [[ -e "$settings" ]]; then
    mounts+=(-v "$(readlink -f "$settings"):$container_home/.claude/settings.json:ro")
fi
# Claude Code keeps a project's history in ~/.claude/projects/<its path
# with every character but A-Z, a-z and 0-9 turned into "-">.
project_slug() {
    local LC_ALL=C
    printf '%s' "${1//[^A-Za-z0-9]/-}"
}
if [[ -d "$HOME/.claude/projects" ]]; then
    history="$HOME/.claude/projects/$(project_slug "$work_dir")"
    (umask 077 && mkdir -p "$history")
    mounts+=(-v "$history:$container_home/.claude/projects/$(basename "$history")")
fi

# Git over HTTPS with a token; no SSH keys enter the container.
if [[ -z "${GH_TOKEN:-}" ]] && command -v gh >/dev/null 2>&1; then
    GH_TOKEN="$(gh auth token 2>/dev/null || true)"
fi
[[ -n "${GH_TOKEN:-}" ]] || warn "no GH_TOKEN: git push from the container will fail (run 'gh auth login' or export GH_TOKEN)"

# Agent login: an API key, else an OAuth token, else the one Claude Code
# stored on this machine. OAuth tokens expire after some hours; this script
# runs once per loop iteration, so each iteration picks up a fresh one.
if [[ -z "${ANTHROPIC_API_KEY:-}" && -z "${CLAUDE_CODE_OAUTH_TOKEN:-}" ]]; then
    creds="$HOME/.claude/.credentials.json"
    if [[ -f "$creds" ]] && command -v jq >/dev/null 2>&1; then
        CLAUDE_CODE_OAUTH_TOKEN="$(jq -r '.claudeAiOauth.accessToken // empty' "$creds" 2>/dev/null || true)"
    elif [[ -f "$creds" ]] && command -v python3 >/dev/null 2>&1; then
        CLAUDE_CODE_OAUTH_TOKEN="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get("claudeAiOauth", {}).get("accessToken", ""))' "$creds" 2>/dev/null || true)"
    fi
    [[ -n "${CLAUDE_CODE_OAUTH_TOKEN:-}" ]] || warn "no ANTHROPIC_API_KEY or Claude login found: the agent will ask to log in"
fi
# Secrets go to docker by name (-e NAME), never as NAME=value on its command
# line, where any user could read them in the process list. Empty ones are
# left out: an empty API key is not the same as none.
# git in a worktree cannot write the repository's top-level files (gc.pid,
# packed-refs): no automatic gc or maintenance in the container.
env_args=(-e DISABLE_AUTOUPDATER=1
    -e GIT_CONFIG_COUNT=2 -e GIT_CONFIG_KEY_0=gc.auto -e GIT_CONFIG_VALUE_0=0
    -e GIT_CONFIG_KEY_1=maintenance.auto -e GIT_CONFIG_VALUE_1=false)
for name in GH_TOKEN ANTHROPIC_API_KEY CLAUDE_CODE_OAUTH_TOKEN; do
    if [[ -n "${!name:-}" ]]; then
        export "${name?}"
        env_args+=(-e "$name")
    fi
done

# The repository's git config is read-only in the container: commits there
# carry your identity from the host's git config.
for key in name email; do
    if value="$(hostgit config "user.$key" 2>/dev/null)" && [[ -n "$value" ]]; then
        upper="$(tr '[:lower:]' '[:upper:]' <<<"$key")"
        env_args+=(-e "GIT_AUTHOR_$upper=$value" -e "GIT_COMMITTER_$upper=$value")
    fi
done

# A terminal when there is one (swarm's tmux windows); plain stdin otherwise,
# so a prompt can be piped in (swarm ralph --prompt-mode stdin).
tty=(-i)
if [[ -t 0 && -t 1 ]]; then
    tty=(-it)
fi

# --init forwards signals to the agent, so `swarm kill` stops it at once.
exec docker run --rm --init "${tty[@]}" \
    --label swarm.sandbox=1 \
    --network "$network" \
    --memory "$memory" --memory-swap "$memory" \
    --cpus "$cpus" --pids-limit "$pids" \
    --cap-drop ALL --security-opt no-new-privileges \
    "${mounts[@]}" \
    -w "$work_dir" \
    "${env_args[@]}" \
    "$image" "$agent" "$@"
