// Package faults decides which requests and webhook deliveries fail on
// purpose: fault rules, their validation, the Paymock-Fault header, rule
// files, and per-merchant rule books that match, count down and draw.
//
// It knows nothing of HTTP or of the webhook sender: the request chain asks
// MatchAPI (or ParseHeader) and applies the effect of the rule it gets; the
// sender asks MatchWebhook for each delivery.
//
// # Rules as the control API shows them
//
// POST /_sandbox/faults answers, and GET /_sandbox/faults lists, rules in
// the shape of Rule after Normalize, with the read-only fields filled:
//
//	{"id": "flt_...", "source": "api", "target": "api",
//	 "operation": "createPayment", "status": 503, "when": "before",
//	 "times": 2, "remaining": 1, "hits": 1, "probability": 1}
//
//	{"id": "flt_...", "source": "faults.yaml:7", "target": "webhooks",
//	 "event_type": "payment.completed", "reorder": true, "window_ms": 1000,
//	 "probability": 0.5, "hits": 0}
//
// Effect fields that are not set are left out; "times" and "remaining" are
// left out for a rule that lasts until removed; "hits" and "probability"
// are always there. "source" is "api", "header", or "file:line" for rules
// from --faults FILE.
//
// # Which rule wins
//
// A request or delivery is shaped by one rule at most. The header comes
// first (the request chain checks it before calling MatchAPI). Then rules
// are tried in this order, and the first whose probability draw succeeds
// fires:
//
//  1. rules set through the control API before rules from the file;
//  2. within each, rules naming the operation (or event type) before
//     rules for any ("*" or no event_type);
//  3. then API rules newest first, file rules in file order.
//
// A rule with probability below 1 that loses its draw is skipped, and the
// next one is tried; a rule with probability 0 is not drawn for. The n-th
// draw of a rule is a hash of the run's seed, the merchant, the rule's id
// and n, with n counted where the rule is kept: the same seed, rules and
// calls give the same hits on memory or PostgreSQL, on one replica or
// several, and one merchant's calls never move another's draws.
//
// # File rules and merchants
//
// Rules from the file apply to every merchant, each merchant with its own
// countdown of their times and hits. A merchant can delete a file rule, or
// clear all its rules, for itself only; a sandbox reset (Set.Reset) brings
// the file rules back with fresh counts and restarts the merchant's draws.
//
// # Where rules are kept
//
// A Set holds the algorithm; the rules, their counts and draws are kept by
// the backend's paymock.FaultRules (Config.Store): package memory in the
// process, package postgres where every replica sees them, so a rule
// added on one replica fires on the next matching call on any, and times
// N fires N times in all. A call costs the store's look-up of candidate
// rules (in memory, for a merchant with no rule for the call, one
// lock-free map look-up and no allocation; on PostgreSQL one query), and
// one more step for each draw and for the hit.
//
// File rules stay in each replica's memory, every replica loading the same
// file; their ids are made from their places in the file and their fields,
// the same on every replica and backend, and each merchant's counts of
// them are in the store. Every method takes a context and reports a store
// that cannot be reached (an error wrapping paymock.ErrUnavailable).
package faults
