#!/usr/bin/env bash
# Install Debian's docker-registry package (CNCF distribution) for the registry-check tests
# (tests/policies/test_registry.py). Idempotent and non-interactive. The tests start their own
# registry on a loopback port, so the package's system service is kept from starting.
set -euo pipefail

BINARY=/usr/bin/docker-registry

if [ -x "$BINARY" ]; then
  echo "install-registry: $BINARY already installed ($("$BINARY" --version 2>/dev/null || echo unknown version))"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  SUDO="sudo"
fi

# invoke-rc.d / deb-systemd-invoke ask /usr/sbin/policy-rc.d whether to start services; exit 101
# means "no". Put one in place for the install only, unless the host already has one.
# Source: https://people.debian.org/~hmh/invokerc.d-policyrc.d-specification.txt
POLICY_RC=/usr/sbin/policy-rc.d
OWN_POLICY_RC=0
if [ ! -e "$POLICY_RC" ]; then
  printf '#!/bin/sh\nexit 101\n' | $SUDO tee "$POLICY_RC" >/dev/null
  $SUDO chmod 755 "$POLICY_RC"
  OWN_POLICY_RC=1
fi
cleanup() {
  if [ "$OWN_POLICY_RC" -eq 1 ]; then
    $SUDO rm -f "$POLICY_RC"
  fi
}
trap cleanup EXIT

export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends docker-registry

# Belt and braces: if a service manager started it anyway, stop it and keep it off.
if command -v systemctl >/dev/null 2>&1 && systemctl is-active --quiet docker-registry 2>/dev/null; then
  $SUDO systemctl stop docker-registry
  $SUDO systemctl disable docker-registry
fi

if [ ! -x "$BINARY" ]; then
  echo "install-registry: apt-get finished but $BINARY is missing; check the docker-registry package" >&2
  exit 1
fi
echo "install-registry: installed $("$BINARY" --version)"
