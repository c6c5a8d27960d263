-- Events and their deliveries, kept where every replica sees them: the
-- webhook journal, and the outbox from which any replica claims the
-- deliveries due.

-- An event as signed and sent. body is text: the exact bytes signed.
CREATE TABLE webhook_events (
    merchant_id text        NOT NULL,
    id          text        NOT NULL,
    -- publish order, for newest-first listing
    seq         bigint      GENERATED ALWAYS AS IDENTITY,
    type        text        NOT NULL,
    payment_id  text        NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    body        text        NOT NULL,
    one_shot    boolean     NOT NULL DEFAULT false,
    PRIMARY KEY (merchant_id, id)
);
CREATE INDEX webhook_events_newest_first ON webhook_events (merchant_id, seq DESC);

-- One delivery of an event to one endpoint, in one round. A pending one is
-- due at next_at (the merchant's clock); a replica claims it by setting
-- claimed_until (a lease on real time) and records the outcome, which ends
-- the claim. Of the pending deliveries sharing a chain (one payment to one
-- endpoint) only the first is ever claimed, so they arrive in order.
CREATE TABLE webhook_deliveries (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    merchant_id   text        NOT NULL,
    event_id      text        NOT NULL,
    round         int         NOT NULL,
    position      int         NOT NULL,
    endpoint_id   text        NOT NULL DEFAULT '',
    url           text        NOT NULL,
    secret        text        NOT NULL DEFAULT '',
    chain         text,
    state         text        NOT NULL CHECK (state IN ('pending', 'delivered', 'failed', 'interrupted')),
    error         text        NOT NULL DEFAULT '',
    attempts      jsonb       NOT NULL DEFAULT '[]',
    sends         int         NOT NULL DEFAULT 0,
    next_at       timestamptz,
    claimed_until timestamptz,
    -- the fault that shapes the first send, and the reorder window's
    fault         jsonb,
    window_fault  jsonb,
    FOREIGN KEY (merchant_id, event_id) REFERENCES webhook_events ON DELETE CASCADE,
    CHECK (state <> 'pending' OR next_at IS NOT NULL)
);
CREATE INDEX webhook_deliveries_of_event ON webhook_deliveries (merchant_id, event_id, round, position);
CREATE INDEX webhook_deliveries_of_endpoint ON webhook_deliveries (merchant_id, endpoint_id, id);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_at, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_merchant_due ON webhook_deliveries (merchant_id, next_at, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_chain ON webhook_deliveries (merchant_id, chain, id) WHERE state = 'pending';
