-- First start of the volume only (the superuser's one task): the roles and databases.
-- Vouch: `vouch_owner` owns the database and its tables (the `migrate` job runs as it); `vouch` is
-- the role the API and workers run as, granted by each migration what it may do (store/service-role.ts):
-- read and write the product's rows, only append to the record. Neither is a superuser.
CREATE ROLE vouch_owner WITH LOGIN PASSWORD 'vouch_owner';
CREATE ROLE vouch WITH LOGIN PASSWORD 'vouch';
CREATE DATABASE vouch OWNER vouch_owner;
-- Temporal's role and its two databases; the temporal-schema job (docker/temporal-schema.sh) makes
-- and migrates their tables.
CREATE ROLE temporal WITH LOGIN PASSWORD 'temporal';
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
