#!/usr/bin/env bash
# Installs what the fault suite (test/faults) needs to put agents in network
# namespaces behind NAT: ip (iproute2) and iptables. Debian only; does
# nothing when both are on PATH, and fails saying what is missing when it
# cannot install them (not root), so that a suite never skips silently.
# Called by `make test`, `make faults`, `make ha` and .ci/run.
set -euo pipefail

need=()
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v iptables >/dev/null 2>&1 || need+=(iptables)
((${#need[@]})) || exit 0
if [ "$(id -u)" != 0 ]; then
	echo ">> the fault suite needs ${need[*]}: run this as root, or apt-get install them" >&2
	exit 1
fi
echo ">> installing Debian packages for the fault suite: ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}"
