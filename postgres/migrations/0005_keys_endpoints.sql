-- What merchants make at run time, so that every replica knows it at once:
-- API keys created at run time, the tokens that made open-mode merchants,
-- revocations, and added webhook endpoints. Configured merchants, keys and
-- endpoints are not here: they come from the configuration.

-- A key is kept as the SHA-256 digest of the whole key, never the key: a
-- bearer key is found by its digest, and a listing shows the masked form.
-- Revoked keys stay (revoked_at set) so that every replica refuses them,
-- and in open mode none comes back as a new merchant. Times of creation
-- are integer nanoseconds, read back exactly as they were written.
CREATE TABLE api_keys (
    digest      bytea  PRIMARY KEY CHECK (octet_length(digest) = 32),
    merchant_id text   NOT NULL,
    id          text   NOT NULL,
    -- created: made at run time; open: the token that made an open-mode
    -- merchant; config: a configured key, stored only once revoked
    source      text   NOT NULL CHECK (source IN ('created', 'open', 'config')),
    masked      text   NOT NULL,
    created_ns  bigint NOT NULL,
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    revoked_at  timestamptz,
    UNIQUE (merchant_id, id)
);

-- An open-mode merchant is made by one token: its id names that token's
-- merchant only, and it is found by that id (a hosted page on a replica
-- that never saw the token).
CREATE UNIQUE INDEX api_keys_open_merchant ON api_keys (merchant_id) WHERE source = 'open';

-- The revoked keys of one source, read by every replica now and then.
CREATE INDEX api_keys_revoked ON api_keys (source) WHERE revoked_at IS NOT NULL;

-- Webhook endpoints added at run time. The secret is kept whole: every
-- replica signs deliveries with it, and the merchant may reveal it.
CREATE TABLE webhook_endpoints (
    merchant_id text    NOT NULL,
    id          text    NOT NULL,
    url         text    NOT NULL,
    secret      text    NOT NULL,
    disabled    boolean NOT NULL DEFAULT false,
    created_ns  bigint  NOT NULL,
    seq         bigint  GENERATED ALWAYS AS IDENTITY,
    PRIMARY KEY (merchant_id, id)
);
