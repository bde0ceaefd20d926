#!/usr/bin/env bash
# teardown-sandbox-network.sh: undo setup-sandbox-network.sh: remove its
# iptables chains and the Docker network. Written by
# `swarm init --with-sandbox`; edit freely.
#
#   sudo ./teardown-sandbox-network.sh
#
# Idempotent: what is already gone is skipped. Takes the same
# SANDBOX_NETWORK and SANDBOX_CHAIN as the setup script.

set -euo pipefail

network="${SANDBOX_NETWORK:-sandbox-net}"
fwd_chain="${SANDBOX_CHAIN:-SWARM-SANDBOX}"
in_chain="$fwd_chain-IN"

die() {
    echo "teardown-sandbox-network.sh: error: $*" >&2
    exit 1
}

[[ $EUID -eq 0 ]] || die "run as root: sudo $0"
for tool in docker iptables; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is required but not installed"
done

# Delete every rule in $1 that jumps to $2, whatever its source subnet, so a
# changed SANDBOX_SUBNET leaves nothing behind.
remove_jumps() {
    local rule
    local -a args
    while read -r rule; do
        read -ra args <<<"${rule/#-A /-D }"
        iptables "${args[@]}"
    done < <(iptables -S "$1" 2>/dev/null | grep -E -- "-j $2( |\$)" || true)
}

# A chain can be deleted only once nothing jumps to it and it is empty.
remove_chain() {
    if iptables -L "$1" -n >/dev/null 2>&1; then
        iptables -F "$1"
        iptables -X "$1"
        echo "removed iptables chain $1"
    fi
}

remove_jumps DOCKER-USER "$fwd_chain"
remove_jumps FORWARD "$fwd_chain" # with Podman
remove_jumps INPUT "$in_chain"
remove_chain "$fwd_chain"
remove_chain "$in_chain"

if docker network inspect "$network" >/dev/null 2>&1; then
    # docker refuses while containers are attached: say which.
    if ! docker network rm "$network" >/dev/null; then
        die "cannot remove network $network: stop its containers first (docker ps --filter network=$network)"
    fi
    echo "removed network $network"
else
    echo "network $network does not exist"
fi
