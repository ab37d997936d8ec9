#!/usr/bin/env bash
# Start PostgreSQL and Redis if they are down, and install pgvector into PostgreSQL when it is
# missing. Debian 12 ships no pgvector package, so it is built from Debian's own source package
# against postgresql-server-dev-<major>; the mirror comes from the machine's own apt sources.
set -euo pipefail

pg_major=$(ls /etc/postgresql | sort -n | tail -n 1)

if ! pg_isready -h 127.0.0.1 -q; then
  echo "starting PostgreSQL $pg_major"
  pg_ctlcluster --skip-systemctl-redirect "$pg_major" main start
  for _ in $(seq 30); do pg_isready -h 127.0.0.1 -q && break; sleep 1; done
fi

if ! redis-cli -h 127.0.0.1 ping >/dev/null 2>&1; then
  echo "starting Redis"
  mkdir -p /var/lib/redis /var/log/redis
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir /var/lib/redis --logfile /var/log/redis/ci.log
  for _ in $(seq 30); do redis-cli -h 127.0.0.1 ping >/dev/null 2>&1 && break; sleep 1; done
fi

has_vector() {
  psql -h 127.0.0.1 -U postgres -d postgres -tAc \
    "SELECT 1 FROM pg_available_extensions WHERE name='vector'" | grep -q 1
}

if ! has_vector; then
  echo "building pgvector for PostgreSQL $pg_major from Debian's source package"
  uri=""
  if ls /etc/apt/sources.list.d/*.sources >/dev/null 2>&1; then
    uri=$(awk '/^URIs:/{print $2; exit}' /etc/apt/sources.list.d/*.sources)
  fi
  if [ -z "$uri" ] && [ -f /etc/apt/sources.list ]; then
    uri=$(awk '/^deb /{print $2; exit}' /etc/apt/sources.list)
  fi
  d=$(mktemp -d)
  mkdir -p "$d/lists/partial"
  printf 'Types: deb-src\nURIs: %s\nSuites: trixie\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
    "$uri" > "$d/src.sources"
  o="-oDir::Etc::SourceList=/dev/null -oDir::Etc::SourceParts=$d -oDir::State::Lists=$d/lists"
  # shellcheck disable=SC2086
  apt-get $o update -qq
  # shellcheck disable=SC2086
  (cd "$d" && apt-get $o source --download-only pgvector >/dev/null)
  if ! dpkg -s "postgresql-server-dev-$pg_major" >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "postgresql-server-dev-$pg_major" >/dev/null
  fi
  tar xzf "$d"/pgvector_*.orig.tar.gz -C "$d"
  make -s -C "$d"/pgvector-*/ PG_CONFIG="/usr/lib/postgresql/$pg_major/bin/pg_config" OPTFLAGS="" \
    >/dev/null
  make -s -C "$d"/pgvector-*/ PG_CONFIG="/usr/lib/postgresql/$pg_major/bin/pg_config" OPTFLAGS="" \
    install >/dev/null
  rm -rf "$d"
  has_vector || { echo "pgvector is still not available" >&2; exit 1; }
fi
echo "services: PostgreSQL $pg_major (pgvector available), Redis up"
