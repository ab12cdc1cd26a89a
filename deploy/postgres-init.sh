#!/bin/sh
# First start of the compose PostgreSQL: the two roles of docs/security.md
# ("Database roles"): the owner migrates and grants, the runtime role serves.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres \
  -v owner_pw="$CAREGRAPH_OWNER_PASSWORD" -v runtime_pw="$CAREGRAPH_RUNTIME_PASSWORD" <<'SQL'
CREATE ROLE caregraph_owner LOGIN PASSWORD :'owner_pw';
CREATE ROLE caregraph_runtime LOGIN PASSWORD :'runtime_pw' NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE;
CREATE DATABASE caregraph OWNER caregraph_owner;
SQL
