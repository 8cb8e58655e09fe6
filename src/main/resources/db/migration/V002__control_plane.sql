-- V002: the control plane (issue 3; seed 000 §2.2, §4.1–§4.4; DESIGN.md D1, D2, D6).

-- A slot being moved names its next owner while the old one drains (MOVING → DRAINING_OLD); state_since
-- lets the leader time a move out. leader_term records which leader made the last owner/epoch change.
ALTER TABLE slot_lease
  ADD COLUMN target_owner VARCHAR(64),
  ADD COLUMN state_since  TIMESTAMPTZ NOT NULL DEFAULT now(),
  ADD COLUMN leader_term  BIGINT NOT NULL DEFAULT 0;

ALTER TABLE slot_lease_history
  ADD COLUMN old_state VARCHAR(16),
  ADD COLUMN new_state VARCHAR(16),
  ADD COLUMN term      BIGINT;

-- Worker lifecycle (seed 000 §2.2): when the state was entered, and every transition for audits.
ALTER TABLE worker_heartbeat
  ADD COLUMN state_since TIMESTAMPTZ NOT NULL DEFAULT now();

CREATE TABLE worker_state_history (
  id        BIGSERIAL PRIMARY KEY,
  worker_id VARCHAR(64) NOT NULL,
  old_state VARCHAR(16),
  new_state VARCHAR(16) NOT NULL,
  reason    VARCHAR(128) NOT NULL,
  term      BIGINT,
  at        TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX idx_worker_state_history ON worker_state_history(worker_id, at DESC);

-- Where followers and clients find the leader's API.
ALTER TABLE scheduler_term
  ADD COLUMN leader_url VARCHAR(256);

-- A new owner loads a slot's derived state page by page in device order (INV-10).
DROP INDEX idx_dsc_slot;
CREATE INDEX idx_dsc_slot_device ON device_status_current(current_slot, device_id);
