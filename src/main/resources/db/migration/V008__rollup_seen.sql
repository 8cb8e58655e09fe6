-- Issue 11: rollups no longer count "the rows the history insert added" (a history policy may keep only
-- changes). Each rollup row lists the (cycle_id, seq) of the results it counted, so a redelivered or
-- replayed result is counted once whatever history keeps. Rows written before this migration list none:
-- a result of theirs redelivered after the upgrade would be counted again (once, at the upgrade).
ALTER TABLE device_status_rollup_1m
  ADD COLUMN seen_cycle BIGINT[],
  ADD COLUMN seen_seq BIGINT[];
