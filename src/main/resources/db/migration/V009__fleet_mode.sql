-- V009: the fleet mode (issue 12 item 3, D10). One row, written only by the leader (fenced by its term), read by
-- every scheduler for the probe API: the authority; Redis only carries it faster. Every change is kept in the history.
CREATE TABLE fleet_mode (
  id     SMALLINT PRIMARY KEY CHECK (id = 1),
  mode   VARCHAR(32) NOT NULL CHECK (mode IN ('NORMAL', 'BACKPRESSURE_HIGH', 'BACKPRESSURE_CRITICAL')),
  reason TEXT NOT NULL,
  since  TIMESTAMPTZ NOT NULL DEFAULT now(),
  term   BIGINT NOT NULL DEFAULT 0
);
INSERT INTO fleet_mode (id, mode, reason) VALUES (1, 'NORMAL', 'installed');

CREATE TABLE fleet_mode_history (
  id       BIGSERIAL PRIMARY KEY,
  at       TIMESTAMPTZ NOT NULL DEFAULT now(),
  old_mode VARCHAR(32) NOT NULL,
  new_mode VARCHAR(32) NOT NULL,
  reason   TEXT NOT NULL,
  term     BIGINT NOT NULL
);
