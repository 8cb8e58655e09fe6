-- V011: the slot map as the truth (D11, issue 14 item 3) and per-group plan versions (INV-2).
-- slot_map_version (V001) gets its grace window and the steps of a switch; version 1 is seeded at the first
-- start of an installation from slots.total (store/SlotMapStart.java), never by this file.
ALTER TABLE slot_map_version ADD COLUMN window_until TIMESTAMPTZ;   -- results of the previous version accepted until then
ALTER TABLE slot_map_version ADD COLUMN term BIGINT;                -- the leader term that scheduled it (D2)
ALTER TABLE slot_map_version ADD COLUMN switched_at TIMESTAMPTZ;    -- the leader moved current_slot of the remapped devices
ALTER TABLE slot_map_version ADD COLUMN retired_at TIMESTAMPTZ;     -- the previous version's queues drained and deleted
CREATE INDEX idx_slot_remap_pending_version ON slot_remap_pending(map_version);

-- The version of a probe group's inspection plan (devices, intervals, check specs): bumped by every import
-- and PATCH that touches the group, carried in envelopes as plan_version. A group without a row is at 1.
CREATE TABLE probe_plan (
  probe_group  VARCHAR(64) PRIMARY KEY,
  plan_version BIGINT NOT NULL,
  updated_at   TIMESTAMPTZ NOT NULL DEFAULT now()
);
