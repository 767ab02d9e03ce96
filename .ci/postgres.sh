#!/usr/bin/env bash
# The PostgreSQL server binaries the workspace tests start a throwaway server with
# (tests/pg.py: initdb + pg_ctl on a free loopback port, in a temporary directory).
# Installs Debian's postgresql package when missing and running as root; otherwise says
# how, and the PostgreSQL tests skip with that reason (they fail under CI=true).
set -euo pipefail
if command -v initdb >/dev/null 2>&1 || compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
else
  echo "postgresql missing: run 'sudo apt-get install postgresql' for the PostgreSQL workspace tests"
fi
