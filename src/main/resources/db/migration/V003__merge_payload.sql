-- V003: merge_payload, the SQL twin of dev.inspection.state.PayloadProfile#merge (DESIGN.md D5).
-- The upsert of device_status_current calls it with the device's profile (PayloadProfile#rulesJson and the
-- default rule's name), so a batch folded in memory and the row in the database follow the same rules.
--
-- old           the stored payload; SQL NULL or JSON null means none yet (treated as {}); else must be an object
-- upd           the update, a JSON object (SQL NULL or a non-object is an error, as a null update is in Java)
-- rules         {"field": "rule", ...}; SQL NULL means no per-field rules
-- default_rule  the rule of every field not in rules
-- Rule names: replace, merge, coalesce, max, case-insensitive; an unknown name is an error (22023).
--
-- Fields of old that upd does not carry are kept. For a field upd carries (new = its value, old = the stored
-- value, SQL NULL when absent):
--   replace   new, a JSON null included
--   merge     both objects: old || new (one level deep, new's keys win, a JSON null value included);
--             otherwise new. Arrays and scalars are NOT concatenated as || would do: new replaces old.
--   coalesce  new is JSON null: the field is left as it is (absent stays absent); otherwise new
--   max       both numbers: the numerically greater, new on a tie; otherwise new (old absent, JSON null or
--             not a number, or new not a number)
CREATE OR REPLACE FUNCTION merge_payload(old jsonb, upd jsonb, rules jsonb, default_rule text)
RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
AS $fn$
DECLARE
  base jsonb := COALESCE(NULLIF(old, 'null'::jsonb), '{}'::jsonb);
  bad  text;
BEGIN
  IF upd IS NULL OR jsonb_typeof(upd) <> 'object' THEN
    RAISE EXCEPTION 'merge_payload: the update must be a JSON object, got %', COALESCE(jsonb_typeof(upd), 'SQL NULL')
      USING ERRCODE = '22023';
  END IF;
  IF jsonb_typeof(base) <> 'object' THEN
    RAISE EXCEPTION 'merge_payload: the stored payload must be a JSON object or null, got %', jsonb_typeof(base)
      USING ERRCODE = '22023';
  END IF;
  IF rules IS NOT NULL AND jsonb_typeof(rules) <> 'object' THEN
    RAISE EXCEPTION 'merge_payload: rules must be a JSON object, got %', jsonb_typeof(rules) USING ERRCODE = '22023';
  END IF;
  SELECT string_agg(COALESCE(x.label, 'null'), ', ') INTO bad
  FROM (SELECT 'default ' || quote_nullable(default_rule) AS label, default_rule AS name
        UNION ALL
        SELECT quote_ident(r.key) || ' ' || r.value::text, CASE WHEN jsonb_typeof(r.value) = 'string' THEN r.value #>> '{}' END
        FROM jsonb_each(COALESCE(rules, '{}'::jsonb)) AS r) AS x
  WHERE x.name IS NULL OR lower(x.name) NOT IN ('replace', 'merge', 'coalesce', 'max');
  IF bad IS NOT NULL THEN
    RAISE EXCEPTION 'merge_payload: unknown merge rule(s): %; known rules: replace, merge, coalesce, max', bad
      USING ERRCODE = '22023';
  END IF;

  RETURN base || COALESCE((
    SELECT jsonb_object_agg(u.key, v.val)
    FROM jsonb_each(upd) AS u(key, value)
    CROSS JOIN LATERAL (SELECT lower(COALESCE(rules ->> u.key, default_rule)) AS rule, base -> u.key AS prev) AS r
    CROSS JOIN LATERAL (SELECT CASE r.rule
        WHEN 'replace' THEN u.value
        WHEN 'merge' THEN
          CASE WHEN jsonb_typeof(r.prev) = 'object' AND jsonb_typeof(u.value) = 'object' THEN r.prev || u.value ELSE u.value END
        WHEN 'coalesce' THEN NULLIF(u.value, 'null'::jsonb)  -- SQL NULL: leave the field alone
        WHEN 'max' THEN
          CASE WHEN jsonb_typeof(r.prev) = 'number' AND jsonb_typeof(u.value) = 'number' AND r.prev::numeric > u.value::numeric
               THEN r.prev ELSE u.value END
      END AS val) AS v
    WHERE v.val IS NOT NULL), '{}'::jsonb);
END
$fn$;
