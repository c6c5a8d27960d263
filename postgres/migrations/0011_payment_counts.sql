-- How many payments each merchant has, so that a list page reads its
-- total from a few rows rather than counting every payment of the
-- merchant (which grew with them: 1.5 ms a list at 2,000 payments).
--
-- A create adds 1 and a reset takes away what it deleted, each in the
-- statement that inserts or deletes the payments, so the sum of a
-- merchant's rows is its payments in any snapshot. The count is spread
-- over slots (the backend's pid modulo 16): an update locks its row until
-- its transaction commits, and one row per merchant would make creates of
-- one merchant on every connection wait for each other's commits.
CREATE TABLE payment_counts (
    merchant_id text     NOT NULL,
    slot        smallint NOT NULL,
    n           bigint   NOT NULL,
    PRIMARY KEY (merchant_id, slot)
);

INSERT INTO payment_counts (merchant_id, slot, n)
SELECT merchant_id, 0, count(*) FROM payments GROUP BY merchant_id;
