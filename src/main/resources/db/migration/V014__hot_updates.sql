-- V014: device_status_current updated in place again (HOT), with the hotel lookups of V012 kept (issues 11 and 14).
--
-- V012 indexed expressions over status_payload (hotel_id, room_id, guid). PostgreSQL (15) decides whether an UPDATE may
-- stay on its page without touching any index (a heap-only tuple, HOT) by the columns its indexes read, whole: with an
-- index reading status_payload, every result whose payload differs from the one before was a non-HOT update, for every
-- device of every profile, so each such write added an entry to all five indexes of the table, and the old ones stayed
-- until vacuum. Measured in plain SQL (4,000 rows, fillfactor 70, each updated three times with a new payload): 3,947
-- of 12,000 updates HOT without the expression index or with the stored columns below, 0 with it. In the failover drill
-- a taken-over slot's snapshot page (an index scan by current_slot) then ran 0.3-0.6 s in PostgreSQL.
--
-- The hotel keys are now stored generated columns, NULL for every device not of the hotel_room profile, and the
-- partial indexes read those: their value changes only when a room's keys change, so the row updates stay HOT. The
-- room API (HotelView) reads the columns. Adding them rewrites the table under an ACCESS EXCLUSIVE lock (as V013):
-- batches writing device_status_current wait for it.
DROP INDEX idx_dsc_hotel_room;
DROP INDEX idx_dsc_hotel_guid;
ALTER TABLE device_status_current
  ADD COLUMN hotel_id TEXT GENERATED ALWAYS AS (CASE WHEN payload_profile = 'hotel_room' THEN status_payload ->> 'hotel_id' END) STORED,
  ADD COLUMN room_id TEXT GENERATED ALWAYS AS (CASE WHEN payload_profile = 'hotel_room' THEN status_payload ->> 'room_id' END) STORED,
  ADD COLUMN hotel_guid TEXT GENERATED ALWAYS AS (CASE WHEN payload_profile = 'hotel_room' THEN status_payload ->> 'guid' END) STORED;
CREATE INDEX idx_dsc_hotel_room ON device_status_current (hotel_id, room_id) WHERE hotel_id IS NOT NULL;
CREATE INDEX idx_dsc_hotel_guid ON device_status_current (hotel_guid) WHERE hotel_guid IS NOT NULL;
