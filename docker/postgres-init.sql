-- Temporal's role and its two databases beside the service's own (first start of the volume only);
-- the temporal-schema job (docker/temporal-schema.sh) makes and migrates their tables.
CREATE ROLE temporal WITH LOGIN PASSWORD 'temporal';
CREATE DATABASE temporal OWNER temporal;
CREATE DATABASE temporal_visibility OWNER temporal;
