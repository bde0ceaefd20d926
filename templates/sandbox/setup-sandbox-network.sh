#!/usr/bin/env bash
# setup-sandbox-network.sh: create the Docker network sandbox.sh uses and
# limit it to an allow-list: the agent's API, GitHub over HTTPS, and DNS.
# Everything else leaving the network, and every connection from it to this
# host, is rejected. Written by `swarm init --with-sandbox`; edit freely.
#
#   sudo ./setup-sandbox-network.sh
#
# Run it again to refresh the addresses (the hosts' IPs change over time) or
# after a reboot (iptables rules are not persistent). It is idempotent: the
# rules live in chains of their own, which a rerun rebuilds. Undo with
# teardown-sandbox-network.sh.
#
# Settings (environment; give teardown the same ones):
#   SANDBOX_NETWORK=sandbox-net     Docker network name
#   SANDBOX_SUBNET=172.30.0.0/24    its IPv4 subnet (IPv6 stays off)
#   SANDBOX_ALLOW="host ..."        more host names to allow (HTTPS)
#   SANDBOX_ALLOW_CIDRS="cidr ..."  more address ranges to allow (HTTPS)
#   SANDBOX_CHAIN=SWARM-SANDBOX     the iptables chains' name (and NAME-IN)
#
# Docker, or Podman as docker (podman-docker): Docker passes forwarded
# traffic through its DOCKER-USER chain, Podman through none of its own, so
# with Podman the rules hook into FORWARD itself.

set -euo pipefail

network="${SANDBOX_NETWORK:-sandbox-net}"
subnet="${SANDBOX_SUBNET:-172.30.0.0/24}"
# Chains owned by this kit: one for traffic the host forwards from the
# sandbox to the outside, one for traffic from the sandbox to the host.
fwd_chain="${SANDBOX_CHAIN:-SWARM-SANDBOX}"
in_chain="$fwd_chain-IN"

# HTTPS hosts the agent needs: Claude's API and its telemetry and error
# reporting (Claude Code stalls when these time out), and GitHub for git.
allow_hosts=(
    api.anthropic.com
    statsig.anthropic.com
    statsig.com
    sentry.io
    github.com
    api.github.com
    codeload.github.com
)
read -ra extra_hosts <<<"${SANDBOX_ALLOW:-}"
read -ra extra_cidrs <<<"${SANDBOX_ALLOW_CIDRS:-}"
allow_hosts+=("${extra_hosts[@]}")

die() {
    echo "setup-sandbox-network.sh: error: $*" >&2
    exit 1
}

[[ $EUID -eq 0 ]] || die "run as root: sudo $0"
for tool in docker iptables getent; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' is required but not installed"
done

# The network. A fixed subnet lets the rules below name it.
if docker network inspect "$network" >/dev/null 2>&1; then
    # The subnets, from Docker's JSON (IPAM.Config[].Subnet) or Podman's
    # (subnets[].subnet).
    have="$(docker network inspect "$network" | grep -oiE '"subnet": *"[^"]*"' | sed -E 's/.*"([^"]*)"$/\1/' | tr '\n' ' ')"
    have="${have% }"
    [[ " $have " == *" $subnet "* ]] ||
        die "network '$network' exists with subnet '$have', not $subnet (set SANDBOX_SUBNET, or remove it with teardown-sandbox-network.sh)"
    echo "network $network ($subnet) already exists"
else
    docker network create --driver bridge --subnet "$subnet" "$network" >/dev/null
    echo "created network $network ($subnet)"
fi

# Addresses of the allowed hosts, IPv4 only (the network has no IPv6).
addresses=()
allowed=()
for host in "${allow_hosts[@]}"; do
    mapfile -t ips < <(getent ahostsv4 "$host" | awk '{print $1}' | sort -u)
    if [[ ${#ips[@]} -eq 0 ]]; then
        echo "setup-sandbox-network.sh: warning: cannot resolve $host, not allowed" >&2
        continue
    fi
    addresses+=("${ips[@]}")
    allowed+=("$host")
done
addresses+=("${extra_cidrs[@]}")
allowed+=("${extra_cidrs[@]}")
# Hosts often share addresses (a CDN): one rule per address is enough.
mapfile -t addresses < <(printf '%s\n' "${addresses[@]}" | sort -u | grep -v '^$' || true)
[[ ${#addresses[@]} -gt 0 ]] || die "no allowed address resolved: is DNS working?"

# (Re)build a chain: create it, or empty it when a previous run made it.
reset_chain() {
    iptables -N "$1" 2>/dev/null || iptables -F "$1"
}

# Insert a jump once: -C tells whether the exact rule is already there.
ensure_jump() {
    iptables -C "$@" 2>/dev/null || iptables -I "$@"
}

# Forwarded traffic. Docker sends it through DOCKER-USER before its own
# rules; RETURN hands an allowed packet back to Docker, REJECT refuses it
# at once (a DROP would make the agent wait for a timeout instead).
reset_chain "$fwd_chain"
iptables -A "$fwd_chain" -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN
# DNS to any server: containers normally use Docker's resolver, which does
# not pass here, but images that name their own server need this.
iptables -A "$fwd_chain" -p udp --dport 53 -j RETURN
iptables -A "$fwd_chain" -p tcp --dport 53 -j RETURN
for addr in "${addresses[@]}"; do
    iptables -A "$fwd_chain" -d "$addr" -p tcp --dport 443 -j RETURN
done
iptables -A "$fwd_chain" -j REJECT --reject-with icmp-port-unreachable
if iptables -C FORWARD -j DOCKER-USER 2>/dev/null; then
    ensure_jump DOCKER-USER -s "$subnet" -j "$fwd_chain"
else
    # No Docker daemon hooks DOCKER-USER into FORWARD (Podman): hook in
    # there, ahead of the engine's own rules.
    ensure_jump FORWARD -s "$subnet" -j "$fwd_chain"
fi

# Traffic to this host itself (its other services, listening on the
# network's gateway address) never reaches DOCKER-USER: refuse it here.
reset_chain "$in_chain"
iptables -A "$in_chain" -m conntrack --ctstate ESTABLISHED,RELATED -j RETURN
# DNS: Podman's resolver (aardvark-dns) listens on the network's gateway.
iptables -A "$in_chain" -p udp --dport 53 -j RETURN
iptables -A "$in_chain" -p tcp --dport 53 -j RETURN
iptables -A "$in_chain" -j REJECT --reject-with icmp-port-unreachable
ensure_jump INPUT -s "$subnet" -j "$in_chain"

echo "allowed from $subnet: DNS, and HTTPS to ${allowed[*]} (${#addresses[@]} addresses)"
echo "everything else from $subnet is rejected"
echo "check: docker run --rm --network $network ${SANDBOX_IMAGE:-sandbox-loop} curl -sS --max-time 5 https://example.com   (must fail)"
