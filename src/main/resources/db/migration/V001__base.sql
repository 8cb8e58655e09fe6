-- V001: the tables of DESIGN.md §3 and seed 000 §2.3, §3.1, §3.3, §3.6, §4.2, §6.5.
-- Applied once per schema, under a transaction-scoped advisory lock (see store/Migrations.java).

-- Slot ownership. lease_epoch only grows; only the owner of (slot, epoch) may commit a batch (D1).
CREATE TABLE slot_lease (
  slot_id          SMALLINT PRIMARY KEY,
  owner_worker_id  VARCHAR(64),
  lease_epoch      BIGINT NOT NULL DEFAULT 0,
  state            VARCHAR(16) NOT NULL DEFAULT 'FREE',
  lease_until      TIMESTAMPTZ,
  last_renewed_at  TIMESTAMPTZ,
  slot_map_version BIGINT NOT NULL DEFAULT 1,
  weight           INT NOT NULL DEFAULT 1,
  updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX idx_slot_lease_owner ON slot_lease(owner_worker_id);
CREATE INDEX idx_slot_lease_state ON slot_lease(state);

-- Every owner/epoch change, for the console and for audits.
CREATE TABLE slot_lease_history (
  id          BIGSERIAL PRIMARY KEY,
  slot_id     SMALLINT NOT NULL,
  old_owner   VARCHAR(64),
  new_owner   VARCHAR(64),
  old_epoch   BIGINT NOT NULL,
  new_epoch   BIGINT NOT NULL,
  reason      VARCHAR(64) NOT NULL,
  at          TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX idx_slot_lease_history_slot ON slot_lease_history(slot_id, at DESC);

CREATE TABLE worker_heartbeat (
  worker_id       VARCHAR(64) PRIMARY KEY,
  state           VARCHAR(16) NOT NULL,
  last_heartbeat  TIMESTAMPTZ NOT NULL,
  started_at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  metadata        JSONB,
  backlog_metrics JSONB
);

-- Scheduler leadership term (D2): each new leader increments it; leader writes are conditional on it.
CREATE TABLE scheduler_term (
  id         SMALLINT PRIMARY KEY DEFAULT 1 CHECK (id = 1),
  term       BIGINT NOT NULL DEFAULT 0,
  leader_id  VARCHAR(64),
  elected_at TIMESTAMPTZ
);
INSERT INTO scheduler_term (id, term) VALUES (1, 0);

-- Device inventory (DESIGN.md §3). priority: 1 critical (high queue), 2 normal, 3 low.
CREATE SEQUENCE resource_version_seq;
CREATE TABLE device_resource (
  device_id        VARCHAR(64) PRIMARY KEY,
  priority         SMALLINT NOT NULL DEFAULT 2 CHECK (priority BETWEEN 1 AND 3),
  probe_group      VARCHAR(64) NOT NULL DEFAULT 'default',
  check_type       VARCHAR(16) NOT NULL CHECK (check_type IN ('sim', 'tcp', 'http', 'icmp')),
  check_spec       JSONB NOT NULL DEFAULT '{}',
  interval_ms      INT NOT NULL CHECK (interval_ms >= 100),
  payload_profile  VARCHAR(32) NOT NULL DEFAULT 'default',
  enabled          BOOLEAN NOT NULL DEFAULT true,
  resource_version BIGINT NOT NULL,
  updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX idx_device_resource_group ON device_resource(probe_group, device_id);

CREATE TABLE slot_map_version (
  version      BIGINT PRIMARY KEY,
  total_slots  INT NOT NULL,
  effective_at TIMESTAMPTZ NOT NULL,
  created_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE slot_remap_pending (
  device_id   VARCHAR(64) PRIMARY KEY,
  old_slot    SMALLINT NOT NULL,
  new_slot    SMALLINT NOT NULL,
  map_version BIGINT NOT NULL
);

-- Newest result of every device. The batch upsert only moves (cycle_id, seq) forward.
CREATE TABLE device_status_current (
  device_id        VARCHAR(64) PRIMARY KEY,
  slot_id          SMALLINT NOT NULL,
  current_slot     SMALLINT NOT NULL,
  seq              BIGINT NOT NULL,
  cycle_id         BIGINT NOT NULL,
  collected_at     TIMESTAMPTZ NOT NULL,
  writer_epoch     BIGINT NOT NULL,
  message_id       VARCHAR(160) NOT NULL,
  status_payload   JSONB NOT NULL,
  derived_snapshot JSONB,
  updated_at       TIMESTAMPTZ NOT NULL DEFAULT now()
) WITH (fillfactor = 70);
CREATE INDEX idx_dsc_slot ON device_status_current(current_slot);
ALTER TABLE device_status_current SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_cost_limit = 2000);

-- Every result once: the key holds (cycle_id, seq), a redelivery is ignored (D4).
CREATE TABLE device_status_history (
  device_id      VARCHAR(64) NOT NULL,
  cycle_id       BIGINT NOT NULL,
  seq            BIGINT NOT NULL,
  slot_id        SMALLINT NOT NULL,
  collected_at   TIMESTAMPTZ NOT NULL,
  received_at    TIMESTAMPTZ NOT NULL DEFAULT now(),
  writer_epoch   BIGINT NOT NULL,
  message_id     VARCHAR(160) NOT NULL,
  status_payload JSONB NOT NULL,
  PRIMARY KEY (device_id, cycle_id, seq)
);
CREATE INDEX idx_dsh_collected ON device_status_history(collected_at);

-- Alerts: events are the source of truth; alert_current is derived from them (seed 000 §3.3).
CREATE TABLE alert_event (
  event_id            BIGSERIAL PRIMARY KEY,
  device_id           VARCHAR(64) NOT NULL,
  alert_key           VARCHAR(128) NOT NULL,
  event_type          VARCHAR(16) NOT NULL,
  severity            SMALLINT NOT NULL,
  event_time          TIMESTAMPTZ NOT NULL,
  cycle_id            BIGINT NOT NULL,
  seq                 BIGINT NOT NULL,
  payload             JSONB NOT NULL,
  ingest_writer_epoch BIGINT NOT NULL,
  UNIQUE (device_id, alert_key, cycle_id, seq)
);
CREATE INDEX idx_ae_device_key_time ON alert_event(device_id, alert_key, event_time DESC);

CREATE TABLE alert_current (
  device_id      VARCHAR(64) NOT NULL,
  alert_key      VARCHAR(128) NOT NULL,
  state          VARCHAR(16) NOT NULL,
  severity       SMALLINT NOT NULL,
  first_fired_at TIMESTAMPTZ NOT NULL,
  last_event_at  TIMESTAMPTZ NOT NULL,
  last_event_id  BIGINT NOT NULL,
  payload        JSONB NOT NULL,
  PRIMARY KEY (device_id, alert_key)
);

-- Dedup ledger (seed 000 §3.6): only messages genuinely new here may count in rollups.
CREATE TABLE message_dedup (
  message_id   VARCHAR(160) NOT NULL,
  processed_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (message_id, processed_at)
) PARTITION BY RANGE (processed_at);
CREATE TABLE message_dedup_default PARTITION OF message_dedup DEFAULT;

CREATE TABLE device_status_rollup_1m (
  minute_bucket TIMESTAMPTZ NOT NULL,
  device_id     VARCHAR(64) NOT NULL,
  sample_count  INT NOT NULL,
  state_changes INT NOT NULL,
  last_state    VARCHAR(32),
  last_payload  JSONB,
  PRIMARY KEY (minute_bucket, device_id)
) PARTITION BY RANGE (minute_bucket);
CREATE TABLE device_status_rollup_1m_default PARTITION OF device_status_rollup_1m DEFAULT;
