#!/usr/bin/env bash
# test/image-fetch-netns.test.ts runs the server in a private network namespace (ip netns; needs root). Installs
# iproute2 when `ip` is missing and this machine can (root or sudo, apt); otherwise says what to do. Runs before
# `npm test` (the pretest script).
set -euo pipefail
if command -v ip >/dev/null 2>&1; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-iproute2: the ip command (iproute2) is needed by test/image-fetch-netns.test.ts; install it" >&2
  exit 1
fi
as_root=()
if [ "$(id -u)" != 0 ]; then as_root=(sudo -n); fi
echo "ensure-iproute2: installing iproute2 (test/image-fetch-netns.test.ts needs it)" >&2
"${as_root[@]}" apt-get install -y --no-install-recommends iproute2 >/dev/null \
  || { "${as_root[@]}" apt-get update >/dev/null && "${as_root[@]}" apt-get install -y --no-install-recommends iproute2 >/dev/null; }
