#!/usr/bin/env bash
# Installs the Debian packages that some tests drive, when their command is missing and this machine can (root or
# sudo, apt); otherwise says what to do. Runs before `npm test` (the pretest script).
#
#   bash scripts/ensure-packages.sh <command>=<package>:<the test that needs it> ...
#
# Chromium may also be given by CHROMIUM_PATH instead of the chromium command; PostgreSQL's initdb by PG_BIN.
set -euo pipefail
as_root=()
if [ "$(id -u)" != 0 ]; then as_root=(sudo -n); fi
for spec in "$@"; do
  command=${spec%%=*}
  rest=${spec#*=}
  package=${rest%%:*}
  needed_by=${rest#*:}
  if command -v "$command" >/dev/null 2>&1; then continue; fi
  if [ "$command" = chromium ] && [ -n "${CHROMIUM_PATH:-}" ]; then continue; fi
  # Debian keeps the PostgreSQL server's programs off the PATH (dev/postgres.ts looks there, or in $PG_BIN).
  # and PgBouncer in /usr/sbin, off a user's PATH (dev/pgbouncer.ts looks there too).
  if [ "$command" = pgbouncer ] && [ -x /usr/sbin/pgbouncer ]; then continue; fi
  if [ "$command" = initdb ] && { [ -n "${PG_BIN:-}" ] || compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null; }; then continue; fi
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure-packages: $command (Debian's $package) is needed by $needed_by; install it" >&2
    exit 1
  fi
  echo "ensure-packages: installing Debian's $package ($needed_by needs it)" >&2
  "${as_root[@]}" apt-get install -y --no-install-recommends "$package" >/dev/null \
    || { "${as_root[@]}" apt-get update >/dev/null && "${as_root[@]}" apt-get install -y --no-install-recommends "$package" >/dev/null; }
done
