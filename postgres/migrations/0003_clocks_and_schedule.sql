-- What several replicas must share to run the lifecycle: each merchant's
-- clock, and the work due at instants of those clocks (expiries, scenario
-- steps, webhook retries).

-- A merchant's clock, once it differs from a new merchant's. Instants and
-- offsets are integer nanoseconds: timestamptz keeps microseconds, and a
-- clock must read back exactly what was set.
CREATE TABLE clocks (
    merchant_id text   PRIMARY KEY,
    mode        text   NOT NULL CHECK (mode IN ('real', 'frozen')),
    -- real mode: added to the sandbox's time
    offset_ns   bigint NOT NULL DEFAULT 0,
    -- frozen mode: the instant shown, in nanoseconds since 1970 (UTC)
    frozen_ns   bigint,
    CHECK (mode = 'real' OR frozen_ns IS NOT NULL)
);

-- Work due at an instant of a merchant's clock. A replica claims an item
-- by setting claimed_until (a lease on real time) and deletes it when
-- done; an item whose lease ran out, because its replica died, can be
-- claimed again.
CREATE TABLE schedule (
    id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    merchant_id   text        NOT NULL,
    due_at        timestamptz NOT NULL,
    kind          text        NOT NULL,
    payload       jsonb       NOT NULL DEFAULT '{}',
    claimed_until timestamptz
);
CREATE INDEX schedule_due ON schedule (due_at, id);
CREATE INDEX schedule_merchant_due ON schedule (merchant_id, due_at, id);
