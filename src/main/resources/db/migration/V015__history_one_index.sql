-- V015: history keeps one index, its key (issue 11).
--
-- device_status_history had two b-trees that both begin with device_id: the key (device_id, cycle_id, seq,
-- retention_class), which is the dedup ledger (D4), and idx_dsh_device_collected (device_id, collected_at DESC)
-- from V004. No statement of the product reads the second: a device's history (DeviceStore, the device API) is
-- read newest first by (cycle_id, seq), which the key serves. Every result still paid for it: one more entry in an
-- index whose pages are spread over all devices (at a million devices each insert lands on its own leaf page,
-- read from disk and written back by the checkpoint). Dropping the parent's index drops every partition's.
DROP INDEX idx_dsh_device_collected;
