// Package postgres keeps paymock's state in PostgreSQL (through pgx), so
// that several paymock replicas share it and a restart loses nothing.
// *Store implements paymock.Store and passes the same conformance suite as
// the in-memory store.
//
// # Storage
//
// A payment is a row keyed by (merchant_id, id), with a creation sequence
// for newest-first listing, its status and expiry as typed columns (what
// is queried), and the whole payment as a json document. The document is
// json rather than jsonb because nothing queries inside it and json keeps
// the text as written: a merchant's metadata comes back byte for byte and
// "\u0000" in a description is accepted, where jsonb would reorder keys
// and refuse it. A merchant's count of payments, which a list page
// shows, is kept in payment_counts by the statements that insert and
// delete payments (spread over 16 rows per merchant, so that creates on
// several connections do not wait on one row's lock), so a list reads
// a few rows rather than counting the merchant's payments. Customers are
// a table keyed by merchant and lower-cased email. Update locks the row (SELECT ... FOR UPDATE), applies the
// caller's function in Go and writes the result in the same transaction,
// so concurrent updates on any replica serialise and a failing function
// changes nothing. Every statement takes request values as parameters;
// no SQL is built from them.
//
// # Clocks and due payments
//
// For the lifecycle to run across replicas, the store keeps each
// merchant's clock (Clock, AdvanceClock, RaiseClock, ResetClock: an
// offset from real time in bigint nanoseconds, or a frozen instant in
// numeric nanoseconds, which reach 9999 where a bigint wraps in 2262) and
// implements paymock.ClockStore, so every replica shows a merchant the
// same time and advances from several replicas add up. Reads of one
// merchant's clock that arrive together share one query. Advances of one
// merchant take turns across replicas under an advisory lock
// (paymock.AdvanceLocker).
//
// It implements paymock.DueStore too: each payment row carries when it
// next changes by itself (due_at: its expiry, or the first step of its
// scenario when SetDue recorded an earlier one) and into what, indexed
// over pending payments. Nothing about due work lives only in a process:
// an advance of a frozen clock on any replica lists the merchant's due
// payments (Due) and fires them in time order; on real clocks every
// replica sweeps all merchants' due payments (DueAll) every second.
// Exactly once comes from Update: it locks the row, and a final payment
// refuses another transition, so two replicas firing one payment make one
// event. After a restart, or when the replica that created a payment was
// killed, the sweep alone makes pending payments expire on time: nothing
// needs re-scheduling.
//
// # Webhooks
//
// The store is a paymock.Outbox: events (webhook_events) and their
// deliveries (webhook_deliveries, one row per event, endpoint and round,
// with every attempt as a jsonb array) are kept here, so every replica's
// GET /_sandbox/events is the same journal. A pending delivery is due at
// next_at on its merchant's clock. A replica claims due deliveries with
// FOR UPDATE SKIP LOCKED, setting claimed_until (a lease), and records
// each send with the claim it made, which ends it: two replicas never
// send one scheduled attempt, and a claim of a replica that died lapses
// so another sends it. Of one chain (one payment to one endpoint) only
// the first pending delivery is claimed, so they arrive in order.
// UpdateWithEvent writes a transition and its event with its deliveries
// in one transaction: a replica killed between the two leaves neither.
//
// # Keys, endpoints and merchants
//
// *Store implements paymock.MerchantStore, where the registry (package
// merchants) keeps what merchants make at run time, so that any replica serves it at once.
// API keys created at run time, and in open mode the token that made each
// merchant, are rows of api_keys keyed by the SHA-256 digest of the key:
// the key itself is never stored, only its masked form for listings. A
// bearer key that is not a configured one is looked up by its digest on
// every request, with no cache, so a key revoked on one replica is refused
// by every replica from its next request. A revoked key keeps its row
// (revoked_at), since in open mode a revoked token must not come back as a
// new merchant; past 1,000 revoked created keys of one merchant the oldest
// are dropped. Webhook endpoints added at run time are rows of
// webhook_endpoints, secret included (deliveries are signed with it), read
// at each event, so one added, disabled or deleted on any replica counts
// for the next event whichever replica fires it; should the database not
// answer then, the endpoints read at the merchant's last event on that
// replica stand in. The per-merchant limits (100 created keys, 20 added
// endpoints) hold across replicas: one merchant's adds are serialised by a
// transaction-scoped advisory lock.
//
// Configured merchants, their keys and endpoints and the --webhook-url
// defaults stay in memory: they come from the configuration, the same on
// every replica, and their ids are derived from their place in it so that
// every replica shows the same ones. Authenticating a configured key never
// touches the database. Revoking one stores its digest as a revoked row;
// each replica reads those in the background at most once a second, so the
// others refuse the key within about a second (a replica started later,
// from its first request), and it stays revoked until the database is
// reset.
//
// An open-mode merchant is its token's row (source 'open'), so a replica
// that never saw the token finds the merchant by its id (a hosted checkout
// page, a due payment). Each replica holds the merchants it serves in
// memory, up to its cap: a token new to the database past the cap is
// refused, while a merchant the database knows is always served. Forgetting
// an idle merchant (merchants.Registry.Forget) drops only that replica's
// copy: ReleaseMerchant keeps the rows for the other replicas, as its
// payments and clock stay.
//
// # Fault rules
//
// *Store implements paymock.FaultRules, so that the replicas share every
// merchant's fault rules in fault_rules: a row per rule added through the
// control API (the rule as json; hits, remaining and draws as columns),
// and a row per merchant and rule from --faults FILE once that merchant's
// counts of it change (the rule itself comes from the file every replica
// loads). A hit is one statement that takes from remaining only while it
// is above 0 (for a file rule, an upsert from its full times), so hits
// from any replicas queue on the row and times N fires exactly N times; a
// probability draw counts on the row the same way, and its answer is a
// hash of the seed, the rule and that count. Matching a call is one query
// on the (merchant_id, target, selector) index, which finds nothing for a
// merchant without rules. One merchant's adds take a transaction-scoped
// advisory lock in turn, so replicas cannot pass the limit together, and
// drop its spent rules, which bounds the rows a merchant holds.
//
// # Request journal
//
// The store is a paymock.JournalStore, so the request journal and the
// report's counters are every replica's. A replica inserts each request
// into request_journal before its answer leaves, so that a report asked of
// any replica right after counts it: the entry as json, its violations as
// a json array of their own (PostgreSQL takes an array apart even when a
// message holds "\u0000"), and the columns the filters and the counts
// read, which the primary key carries too, so that counting and paging
// read the index rather than a heap page per request. An append takes no
// lock another waits for: seq is an identity, not a per-merchant counter.
// A create, retrieve or list offers its entry to its store call
// (paymock.JournalCarry), and the statement that does its work inserts it
// too (carry.go): one round trip a request. Other appends that arrive
// together share one INSERT. Each replica trims a merchant's journal at its first append of the
// merchant, then every tenth of the journal's size (at most every 1,000
// appends): one statement deletes the requests older than the newest
// --journal-size and adds them to request_journal_calls and
// request_journal_violations, so a request is counted once, as a row or
// in the counts, however many replicas trim at once. Of an operation's
// violations, the first paymock.MaxDistinctViolations distinct ones have a
// row each and the rest share one, so what a client sends cannot add rows
// there without end. Lists read the newest
// --journal-size only. Nothing deletes a merchant's journal: a reset keeps
// it, as on one server, and a replica forgetting an idle merchant forgets
// only its own count of appends, since other replicas may still serve the
// merchant; what stays is bounded by --journal-size per merchant.
//
// # Migrations
//
// The schema is in migrations/NNNN_name.sql, embedded in the binary. Open
// applies the ones a database lacks, each in its own transaction, recorded
// in schema_migrations, while holding a PostgreSQL advisory lock: replicas
// starting together wait for each other instead of racing. A database
// migrated by a newer paymock is refused rather than used with a schema
// this one does not know.
//
// # Connections
//
// Config.MaxConns defaults to two connections per core the replica may
// use, from 4 to 10 (DefaultPoolSize). A request holds a connection for
// one or two short statements (a transaction of three for an update), so
// a few connections keep a replica busy: throughput on the database side
// peaks near twice its cores, and backends past that contend for the
// same index pages and the WAL, each statement costing more CPU (on 2
// cores busy with other work too, 4 connections served about a third
// more requests than 10, and as many on a quieter machine). Ten
// at most lets three replicas, the migrations and an operator's psql fit
// in PostgreSQL's default max_connections of 100. For a database on more
// cores than the replica, set pool_max_conns=N in the --store URL.
//
// # What a replica keeps
//
// A merchant's keys, fault rules, clock and customer ids are read on
// every create, retrieve or list and change rarely, so each Store keeps
// what it read (changes.go) and a request makes two round trips: its
// statement and its journal entry. Every change of them sends
// pg_notify('paymock_changes', ...) in its own transaction; each Store
// listens on a connection of its own and drops a merchant's copy on
// hearing of a change, and the Store that made it answers once it has
// heard its own notification. Nothing is kept while the listening
// connection is down, and Sync waits until every change committed before
// it was called has been heard. Appends to the request journal that
// arrive together share one INSERT. docs/postgres.md says why
// notifications rather than a version in the request's statement.
//
// # Failures
//
// A database that cannot be reached when Open runs is an error naming the
// host. One that goes away while serving makes calls fail with an error
// wrapping ErrUnavailable (the HTTP side answers 503); the pool reconnects
// by itself once the database is back. Connecting gives up after
// Config.ConnectTimeout rather than hanging a request.
package postgres
