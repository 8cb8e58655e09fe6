-- V005: what operators act on (issue 5): dead letters kept for replay, and alert acknowledgements.

-- Every message the dead-letter queue received, with its reason; replayed or discarded from the API.
CREATE TABLE dead_letter (
  id          BIGSERIAL PRIMARY KEY,
  reason      VARCHAR(64) NOT NULL,
  detail      TEXT,
  queue       VARCHAR(255),
  routing_key VARCHAR(255),
  body        BYTEA NOT NULL,
  headers     JSONB NOT NULL DEFAULT '{}',
  at          TIMESTAMPTZ NOT NULL DEFAULT now(),
  state       VARCHAR(16) NOT NULL DEFAULT 'PENDING' CHECK (state IN ('PENDING', 'REPLAYED', 'DISCARDED')),
  handled_at  TIMESTAMPTZ,
  handled_by  VARCHAR(64)
);
CREATE INDEX idx_dead_letter_state ON dead_letter (state, id);

-- An acknowledgement is an operator's note about an alert, kept apart: alert_current stays derived from
-- alert events only (seed 000 §3.3). It applies to the alert's active period that began at first_fired_at.
CREATE TABLE alert_ack (
  device_id      VARCHAR(64) NOT NULL,
  alert_key      VARCHAR(128) NOT NULL,
  first_fired_at TIMESTAMPTZ NOT NULL,
  acked_at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  acked_by       VARCHAR(64) NOT NULL,
  note           TEXT,
  PRIMARY KEY (device_id, alert_key, first_fired_at)
);
