-- A migration PostgreSQL cannot run inside a transaction: Flyway detects CREATE INDEX CONCURRENTLY and runs it alone,
-- outside one (MigrationsIT; README "Upgrading").
CREATE INDEX CONCURRENTLY idx_it_nontx_alert_rank ON slot_lease (weight);
