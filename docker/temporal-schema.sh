#!/bin/sh
# Temporal's schema on PostgreSQL (docker-compose.yml's temporal-schema job, temporalio/admin-tools):
# stamps each database at version 0.0 the first time, then applies every migration newer than the
# version it holds, up to this image's server version. Safe on every start: on a stamped database
# `setup-schema -v 0.0` changes nothing (resetting needs --overwrite, never given here), and
# `update-schema` applies nothing when it is current. Raising the image tags of admin-tools and the
# server together is the upgrade: this job migrates before the new server starts.
# The databases themselves are made by docker/postgres-init.sql (SQL_PASSWORD is the tool's password).
set -eu
host="${TEMPORAL_DB_HOST:-postgres}"
schemas=/etc/temporal/schema/postgresql/v12

until nc -z "$host" 5432; do
  echo "waiting for PostgreSQL at $host:5432"
  sleep 1
done

migrate() {
  temporal-sql-tool --plugin postgres12 --ep "$host" -p 5432 -u temporal --db "$1" setup-schema -v 0.0
  temporal-sql-tool --plugin postgres12 --ep "$host" -p 5432 -u temporal --db "$1" update-schema -d "$2"
}
migrate temporal "$schemas/temporal/versioned"
migrate temporal_visibility "$schemas/visibility/versioned"
echo "Temporal schema is current"
