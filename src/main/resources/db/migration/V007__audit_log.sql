-- V007: the audit log (issue 10): every API mutation and console login, who did it, from where, and how it ended.
CREATE TABLE audit_log (
  id      BIGSERIAL PRIMARY KEY,
  at      TIMESTAMPTZ NOT NULL DEFAULT now(),
  who     VARCHAR(128) NOT NULL,
  role    VARCHAR(16) NOT NULL,
  action  VARCHAR(160) NOT NULL,
  target  VARCHAR(512),
  remote  VARCHAR(64),
  status  INT NOT NULL,
  outcome VARCHAR(16) NOT NULL CHECK (outcome IN ('ok', 'refused', 'failed'))
);
