-- Each merchant's fault rules and their counts, shared by the replicas:
-- a rule added on one fires on any, and its times, hits and probability
-- draws are counted once for all.
--
-- A row is either an API rule (from_file false: rule holds the whole rule
-- as added) or one merchant's counts of a rule from --faults FILE (from_file
-- true: every replica loads the rule itself from the same file, and rule
-- is null). A file rule with no row for a merchant is fresh: no hits, its
-- full times, no draws.
CREATE TABLE fault_rules (
    merchant_id text    NOT NULL,
    id          text    NOT NULL,
    -- API rules are tried newest first
    seq         bigint  GENERATED ALWAYS AS IDENTITY,
    from_file   boolean NOT NULL,
    target      text    NOT NULL CHECK (target IN ('api', 'webhooks')),
    -- the operation, or the event type, the rule is for; '*' for any
    selector    text    NOT NULL,
    rule        json    CHECK (from_file OR rule IS NOT NULL),
    -- a file rule the merchant deleted, or cleared, until a reset
    removed     boolean NOT NULL DEFAULT false,
    hits        bigint  NOT NULL DEFAULT 0,
    -- how many more times the rule fires; null for a rule without times.
    -- A hit takes one only while it is above 0, so of concurrent hits on
    -- any replicas exactly times succeed.
    remaining   integer CHECK (remaining >= 0),
    -- the probability draws made so far: the n-th draw's answer is a hash
    -- of the run's seed, the merchant, the rule and n
    draws       bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (merchant_id, id)
);

-- What one call or delivery may match: the merchant's rules of one target
-- for its operation (or event type) and for any.
CREATE INDEX fault_rules_candidates ON fault_rules (merchant_id, target, selector);
