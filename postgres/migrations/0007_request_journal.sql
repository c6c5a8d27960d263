-- The request journal every replica shares: each merchant's recent
-- requests, and the counts of those trimmed away, so that the report
-- covers every request whichever replica served it.

-- One request. A replica inserts it before its answer leaves; seq orders a
-- merchant's requests (newest is highest) across replicas. entry is the
-- entry as GET /_sandbox/requests shows it but for its violations, which
-- are a column of their own (null for none): both are json, not jsonb, to
-- keep "\u0000" and the text as written, and PostgreSQL can take a json
-- array apart into its elements' text, but not an object holding
-- "\u0000" into its fields. The columns beside them are what the filters
-- and the counts read, and the primary key carries them too, so that
-- counting a merchant's requests or finding a page of them can read the
-- index alone, not a heap page per request (a merchant's requests are
-- spread over pages shared with every other merchant's). A replica trims
-- a merchant's journal now and then, down to its newest --journal-size
-- requests.
CREATE TABLE request_journal (
    merchant_id    text    NOT NULL,
    seq            bigint  GENERATED ALWAYS AS IDENTITY,
    status         integer NOT NULL,
    -- the operation matched; '' for a call that matched none
    operation      text    NOT NULL,
    has_violations boolean NOT NULL,
    -- a call of the service API, which the report counts
    counted        boolean NOT NULL,
    -- refused by the contract check (never when a fault shaped the answer)
    violating      boolean NOT NULL,
    -- answered by a fault the client asked for
    injected       boolean NOT NULL,
    entry          json    NOT NULL,
    violations     json,
    PRIMARY KEY (merchant_id, seq) INCLUDE (status, operation, has_violations, counted, violating, injected)
);

-- The counted requests trimmed away, grouped as the report adds them up.
CREATE TABLE request_journal_calls (
    merchant_id text    NOT NULL,
    operation   text    NOT NULL,
    status      integer NOT NULL,
    violating   boolean NOT NULL,
    injected    boolean NOT NULL,
    calls       bigint  NOT NULL,
    PRIMARY KEY (merchant_id, operation, status, violating, injected)
);

-- The violations of the violating calls trimmed away, per operation.
-- violation is one element of a request's violations, as json text; it is
-- keyed by its digest, since a message can be longer than an index entry
-- may be.
CREATE TABLE request_journal_violations (
    merchant_id text   NOT NULL,
    operation   text   NOT NULL,
    violation   text   NOT NULL,
    calls       bigint NOT NULL
);
CREATE UNIQUE INDEX request_journal_violations_key
    ON request_journal_violations (merchant_id, operation, md5(violation));
