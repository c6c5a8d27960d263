-- Payments and customers, as paymock.Store keeps them.
--
-- A payment is one json document (not jsonb: its text comes back exactly
-- as written, a merchant's metadata keeps its key order, and a "\u0000" in
-- a description is accepted; nothing queries inside it). The columns that
-- are queried are typed beside it.
CREATE TABLE payments (
    merchant_id text        NOT NULL,
    id          text        NOT NULL,
    -- creation order, for newest-first listing; never changed by updates
    seq         bigint      GENERATED ALWAYS AS IDENTITY,
    status      text        NOT NULL,
    expires_at  timestamptz NOT NULL,
    payment     json        NOT NULL,
    PRIMARY KEY (merchant_id, id)
);

-- A merchant's customers by email, lower-cased: one id per email.
CREATE TABLE customers (
    merchant_id text NOT NULL,
    email       text NOT NULL,
    id          text NOT NULL,
    PRIMARY KEY (merchant_id, email)
);
