#!/usr/bin/env bash
# scripts/deps.sh GROUP...: make sure the programs a make target needs are
# installed, and install the missing ones. The one list of what swarm's
# targets need: make demo, make test and CI (.ci/run) all call it.
#
#   demo    make demo: tmux, git
#   test    make test: tmux, git, make, gcc (go test -race needs cgo), and
#           python3, shellcheck, ssh and sshd (OpenSSH: the remote hosts'
#           tests start their own sshd), and podman, runc, catatonit,
#           mmdebstrap and iptables (the sandbox kit's test runs it in a
#           real container, on its locked-down network), without which a
#           few tests are skipped (the sandbox kit's fails instead as
#           root, where they can be installed)
#   agents  make test-agents: node and npm (Claude Code is installed with
#           npm; its tests are skipped without them)
#
# Missing programs are installed with apt-get when it is there, as root or
# with sudo when sudo needs no password. Otherwise (no apt-get, a sudo that
# would ask, SWARM_NO_INSTALL=1) it names the packages to install and exits
# 1, or only notes the optional ones and exits 0.
set -euo pipefail

usage() {
  echo "usage: scripts/deps.sh demo|test|agents ..." >&2
  exit 2
}

# programs GROUP: what the group needs; a trailing ? marks a program whose
# tests are skipped without it.
programs() {
  case "$1" in
    demo) echo "tmux git" ;;
    test) echo "tmux git make gcc shellcheck? python3? ssh? sshd? podman? runc? catatonit? mmdebstrap? iptables?" ;;
    agents) echo "node? npm?" ;;
    *) usage ;;
  esac
}

# target GROUP: the make target, for messages.
target() {
  case "$1" in
    agents) echo "make test-agents" ;;
    *) echo "make $1" ;;
  esac
}

# packages PROGRAM: the Debian packages that provide it.
packages() {
  case "$1" in
    gcc) echo "gcc libc6-dev" ;;
    node) echo "nodejs" ;;
    ssh) echo "openssh-client" ;;
    sshd) echo "openssh-server" ;;
    *) echo "$1" ;;
  esac
}

# have PROGRAM: it is installed. sshd is in /usr/sbin, which is not on
# every user's PATH (SWARM_SBIN_DIRS: where else to look).
have() {
  command -v "$1" >/dev/null 2>&1 && return 0
  local d
  for d in ${SWARM_SBIN_DIRS-/usr/sbin /usr/local/sbin /sbin}; do
    [ -x "$d/$1" ] && return 0
  done
  return 1
}

# join WORD...: the words separated by ", ".
join() {
  local out="" w
  for w in "$@"; do out+="${out:+, }$w"; done
  echo "$out"
}

# apt ARGS...: apt-get, through sudo when not root; never asks questions
# (python3 pulls in tzdata, which would ask for a time zone).
apt() {
  if [ "$installer" = sudo ]; then
    sudo -n DEBIAN_FRONTEND=noninteractive apt-get "$@"
  else
    DEBIAN_FRONTEND=noninteractive apt-get "$@"
  fi
}

[ $# -gt 0 ] || usage
required=() # missing programs the targets cannot do without
optional=() # missing programs whose tests are skipped
pkgs=()     # the packages of both, each once
targets=()
for group in "$@"; do
  list=$(programs "$group")
  targets+=("$(target "$group")")
  for p in $list; do
    opt=
    case "$p" in *\?) opt=1 p=${p%\?} ;; esac
    have "$p" && continue
    case " ${required[*]-} ${optional[*]-} " in *" $p "*) continue ;; esac
    if [ -n "$opt" ]; then optional+=("$p"); else required+=("$p"); fi
    for k in $(packages "$p"); do
      case " ${pkgs[*]-} " in *" $k "*) ;; *) pkgs+=("$k") ;; esac
    done
  done
done
[ ${#pkgs[@]} -gt 0 ] || exit 0
# shellcheck disable=SC2206 # the words of the lists, split on purpose
all=(${required[*]-} ${optional[*]-})

# How to install: apt-get as root, or through a sudo that does not ask.
installer=
if [ -z "${SWARM_NO_INSTALL:-}" ] && command -v apt-get >/dev/null 2>&1; then
  if [ "$(id -u 2>/dev/null)" = 0 ]; then
    installer=root
  elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
    installer=sudo
  fi
fi

if [ -n "$installer" ]; then
  echo "deps: installing ${pkgs[*]} with apt-get (${targets[*]} needs $(join "${all[@]}"))"
  apt update -qq
  apt install -y -qq "${pkgs[@]}"
  for p in ${required[@]+"${required[@]}"}; do
    have "$p" || { echo "deps: error: $p is still not on PATH after apt-get install ${pkgs[*]}" >&2; exit 1; }
  done
  exit 0
fi

if command -v apt-get >/dev/null 2>&1; then
  how="apt-get install ${pkgs[*]}"
  [ "$(id -u 2>/dev/null)" = 0 ] || how="sudo $how"
else
  how="install them with your system's package manager (Debian/Ubuntu packages: ${pkgs[*]})"
fi
if [ ${#required[@]} -gt 0 ]; then
  echo "deps: error: ${targets[*]} needs $(join "${required[@]}"), not installed" >&2
  echo "hint: $how" >&2
  exit 1
fi
echo "deps: note: $(join "${optional[@]}") not installed: the tests that need $(join "${optional[@]}") are skipped (to run them: $how)" >&2
