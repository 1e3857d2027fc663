#!/usr/bin/env bash
# Installs Debian's clickhouse-server when it is missing and starts it on 127.0.0.1:8123 unless
# something answers there already. For tests and the bench; in production run ClickHouse as its
# own service and point CLICKHOUSE_URL at it.
set -euo pipefail

if curl -fsS --max-time 2 'http://127.0.0.1:8123/ping' >/dev/null 2>&1; then
  exit 0
fi
if [ ! -x /usr/sbin/clickhouse-server ]; then
  apt-get update
  DEBIAN_FRONTEND=noninteractive apt-get install -y clickhouse-server
fi
# The package's config listens on loopback only (127.0.0.1 and ::1), which is what we want.
start-stop-daemon --start --oknodo --background --chuid clickhouse \
  --exec /usr/sbin/clickhouse-server -- --config-file=/etc/clickhouse-server/config.xml
for _ in $(seq 1 60); do
  if curl -fsS --max-time 2 'http://127.0.0.1:8123/ping' >/dev/null 2>&1; then
    exit 0
  fi
  sleep 1
done
echo "clickhouse-server did not answer on 127.0.0.1:8123 within 60 s" >&2
tail -n 40 /var/log/clickhouse-server/clickhouse-server.err.log >&2 || true
exit 1
