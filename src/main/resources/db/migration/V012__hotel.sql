-- V012: hotel room frames (issue 13, seed 004).

-- Device time (seed 004's WHERE EXCLUDED.ts_ms >= stored.ts_ms): the field of a profile's payloads that holds
-- the time the device put on the frame, NULL for a profile without one. Written by the workers at start from the
-- code (PayloadProfile#deviceTimeField), as the rules are.
ALTER TABLE payload_profile ADD COLUMN device_time_field VARCHAR(64);

-- merge_payload_guarded: the SQL twin of PayloadProfile#merge applied to each update in turn, for profiles with
-- a device time. An update whose numeric time_field is smaller than the accumulated payload's numeric time_field
-- is skipped whole (a tie is taken); an update or payload without a numeric time is not guarded. Otherwise each
-- update goes through merge_payload (V003). The worker sends the frames of a batch that a fold from nothing takes
-- (PayloadProfile#notOlder), so the stored row equals the in-memory fold of every frame, whatever the batches were.
--
-- old         the stored payload (SQL NULL or JSON null: none yet)
-- upds        a JSON array of updates, in the order the device's results are applied (cycle_id, seq)
-- time_field  SQL NULL: no guard, every update is merged
CREATE OR REPLACE FUNCTION merge_payload_guarded(old jsonb, upds jsonb, rules jsonb, default_rule text, time_field text)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $fn$
DECLARE
  acc jsonb := old;
  u   jsonb;
BEGIN
  IF upds IS NULL OR jsonb_typeof(upds) <> 'array' THEN
    RAISE EXCEPTION 'merge_payload_guarded: the updates must be a JSON array, got %', COALESCE(jsonb_typeof(upds), 'SQL NULL')
      USING ERRCODE = '22023';
  END IF;
  FOR u IN SELECT e.value FROM jsonb_array_elements(upds) WITH ORDINALITY AS e(value, n) ORDER BY e.n LOOP
    IF time_field IS NOT NULL AND jsonb_typeof(acc -> time_field) = 'number' AND jsonb_typeof(u -> time_field) = 'number'
       AND (u ->> time_field)::numeric < (acc ->> time_field)::numeric THEN
      CONTINUE;
    END IF;
    acc := merge_payload(acc, u, rules, default_rule);
  END LOOP;
  RETURN COALESCE(acc, '{}'::jsonb);
END
$fn$;

-- Hotel rooms (issue 13 item 4): the hotel_room profile keeps hotel_id, room_id and guid in the merged payload
-- (strings or integers as the frames send them; compared as text). The room API reads a hotel's rooms and a
-- room's devices through these; only rows of that profile are indexed.
CREATE INDEX idx_dsc_hotel_room ON device_status_current ((status_payload ->> 'hotel_id'), (status_payload ->> 'room_id'))
  WHERE payload_profile = 'hotel_room';
CREATE INDEX idx_dsc_hotel_guid ON device_status_current ((status_payload ->> 'guid')) WHERE payload_profile = 'hotel_room';
