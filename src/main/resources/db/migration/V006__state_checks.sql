-- V006: the state columns hold only the states of the control plane's state machines (issue 9).
-- Each list is the names of dev.inspection.control.SlotState / WorkerState, in declaration order;
-- control.StateCheckMigrationTest fails the build when an enum gains a state that is not listed here, so a new
-- state comes with a new migration. History columns may be NULL (a worker's first registration).

ALTER TABLE slot_lease
  ADD CONSTRAINT slot_lease_state_check
    CHECK (state IN ('FREE', 'ACTIVE', 'MOVING', 'DRAINING_OLD', 'LOADING_NEW', 'ORPHANED'));

ALTER TABLE slot_lease_history
  ADD CONSTRAINT slot_lease_history_old_state_check
    CHECK (old_state IN ('FREE', 'ACTIVE', 'MOVING', 'DRAINING_OLD', 'LOADING_NEW', 'ORPHANED')),
  ADD CONSTRAINT slot_lease_history_new_state_check
    CHECK (new_state IN ('FREE', 'ACTIVE', 'MOVING', 'DRAINING_OLD', 'LOADING_NEW', 'ORPHANED'));

ALTER TABLE worker_heartbeat
  ADD CONSTRAINT worker_heartbeat_state_check
    CHECK (state IN ('REGISTERED', 'WARMING', 'ACTIVE', 'DRAINING', 'OFFLINE', 'SUSPECTED', 'DEAD', 'QUARANTINE'));

ALTER TABLE worker_state_history
  ADD CONSTRAINT worker_state_history_old_state_check
    CHECK (old_state IN ('REGISTERED', 'WARMING', 'ACTIVE', 'DRAINING', 'OFFLINE', 'SUSPECTED', 'DEAD', 'QUARANTINE')),
  ADD CONSTRAINT worker_state_history_new_state_check
    CHECK (new_state IN ('REGISTERED', 'WARMING', 'ACTIVE', 'DRAINING', 'OFFLINE', 'SUSPECTED', 'DEAD', 'QUARANTINE'));
