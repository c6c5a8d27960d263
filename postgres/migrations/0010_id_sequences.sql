-- Each merchant's seeded-id counter: the n of its n-th id. Kept for good,
-- so that replicas seeded alike and restarts never draw an id twice.
CREATE TABLE id_sequences (
    merchant_id text PRIMARY KEY,
    next bigint NOT NULL
);
