-- A role for the Temporal server beside the service's own; auto-setup creates its databases.
CREATE ROLE temporal WITH LOGIN PASSWORD 'temporal' CREATEDB;
