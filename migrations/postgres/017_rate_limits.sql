-- Token buckets of the rate limits that must hold across replicas (the public endpoints', payment
-- links' and webhook test and retry): on PostgreSQL they live here, shared by every replica. A
-- SQLite store has one server, which keeps them in memory; the table is here for the schemas to
-- stay alike.
CREATE TABLE rate_limits (
  key      TEXT PRIMARY KEY,                          -- what is limited: "read:<payment id>", ...
  tokens   DOUBLE PRECISION NOT NULL,                 -- left after the last request
  allowed  BIGINT NOT NULL,                           -- whether the last request was let through
  at       BIGINT NOT NULL                            -- when the last request came, ms
);
