#!/usr/bin/env bash
# The explorer test (test/explorer.test.ts) drives Debian's headless Chromium. Installs it when it is missing and this
# machine can (root or sudo, apt); otherwise says what to do. Runs before `npm test` (the pretest script).
set -euo pipefail
if command -v chromium >/dev/null 2>&1 || [ -n "${CHROMIUM_PATH:-}" ]; then exit 0; fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-chromium: Chromium is needed by test/explorer.test.ts; install it, or set CHROMIUM_PATH" >&2
  exit 1
fi
as_root=()
if [ "$(id -u)" != 0 ]; then as_root=(sudo -n); fi
echo "ensure-chromium: installing Debian's chromium (test/explorer.test.ts needs it)" >&2
"${as_root[@]}" apt-get install -y --no-install-recommends chromium >/dev/null \
  || { "${as_root[@]}" apt-get update >/dev/null && "${as_root[@]}" apt-get install -y --no-install-recommends chromium >/dev/null; }
