// Each merchant's fault rules and their counts, shared by the replicas:
// the paymock.FaultRules of a PostgreSQL Backend.

package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/paymock/paymock"
)

var _ paymock.FaultRules = (*Store)(nil)

// faultLockClass is the first key of the advisory locks that serialise
// adding rules for one merchant (the second is a hash of its id): "flt" in
// ASCII. The two-key lock space is apart from the migrations' one-key lock.
const faultLockClass int32 = 0x666c74

// live is the condition of a row that still fires: not removed, and not
// spent. An API rule is never removed, only deleted.
const live = `NOT f.removed AND (f.remaining IS NULL OR f.remaining > 0)`

// AddRule implements paymock.FaultRules. Adds for one merchant take an
// advisory lock in turn, so that replicas adding at once cannot pass the
// limit together; spent rules are dropped then, which bounds the rows a
// merchant holds.
func (s *Store) AddRule(ctx context.Context, merchantID string, r paymock.FaultRule, limit int) error {
	doc, err := encodeRule(r)
	if err != nil {
		return err
	}
	var remaining *int
	if r.Times != nil {
		n := *r.Times
		remaining = &n
	}
	err = s.changedIn(ctx, merchantID, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, faultLockClass, merchantID); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM fault_rules WHERE merchant_id = $1 AND NOT from_file AND remaining = 0`,
			merchantID); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM fault_rules WHERE merchant_id = $1 AND NOT from_file`,
			merchantID).Scan(&n); err != nil {
			return err
		}
		if n >= limit {
			return paymock.ErrTooManyFaultRules
		}
		tag, err := tx.Exec(ctx, `INSERT INTO fault_rules (merchant_id, id, from_file, target, selector, rule, remaining)
			VALUES ($1, $2, false, $3, $4, $5, $6) ON CONFLICT (merchant_id, id) DO NOTHING`,
			merchantID, r.ID, string(r.Target), r.Selector(), doc, remaining)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return paymock.ErrDuplicateFaultRule
		}
		return nil
	})
	if errors.Is(err, paymock.ErrTooManyFaultRules) || errors.Is(err, paymock.ErrDuplicateFaultRule) {
		return err
	}
	if err != nil {
		return check("adding fault rule "+r.ID, err)
	}
	return nil
}

// ruleColumns are what Rules and Candidates read, in scanRules' order.
const ruleColumns = `f.id, f.seq, f.from_file, f.target, f.rule, f.removed, f.hits, f.remaining`

// Rules implements paymock.FaultRules.
func (s *Store) Rules(ctx context.Context, merchantID string) ([]paymock.StoredFaultRule, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+ruleColumns+` FROM fault_rules f
		WHERE f.merchant_id = $1 AND (f.from_file OR f.remaining IS NULL OR f.remaining > 0)`, merchantID)
	return scanRules(rows, err, "listing the fault rules of "+merchantID)
}

// Candidates implements paymock.FaultRules. A merchant's live rows are
// read once and kept until a replica changes them (changes.go), so that a
// request of a merchant without rules, the usual case, costs no round
// trip; each call decodes its own copies of those that match.
func (s *Store) Candidates(ctx context.Context, merchantID string, target paymock.FaultTarget, selector string) ([]paymock.StoredFaultRule, error) {
	all, ok := cached(s.changes, s.changes.rules, merchantID)
	if !ok {
		gen := s.changes.begin()
		rows, err := s.pool.Query(ctx, `SELECT `+ruleColumns+`, f.selector FROM fault_rules f
			WHERE f.merchant_id = $1 AND (f.from_file OR f.remaining IS NULL OR f.remaining > 0)`, merchantID)
		if all, err = scanRuleRows(rows, err, true); err != nil {
			return nil, check("matching the fault rules of "+merchantID, err)
		}
		put(s.changes, gen, s.changes.rules, merchantID, all)
	}
	var out []paymock.StoredFaultRule
	for _, r := range all {
		// A selector PostgreSQL could not store is no rule's: only the
		// rules for any match it, as they do here.
		if r.target != string(target) || (r.selector != selector && r.selector != paymock.FaultWildcard) {
			continue
		}
		st, err := r.decode()
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// ruleRow is one row of fault_rules as read, before decoding.
type ruleRow struct {
	id, target, selector string
	seq                  int64
	file, removed        bool
	doc                  []byte
	hits                 int
	remaining            *int
}

// decode is the row as a paymock.StoredFaultRule of its own.
func (r ruleRow) decode() (paymock.StoredFaultRule, error) {
	st := paymock.StoredFaultRule{Seq: r.seq, File: r.file, Removed: r.removed}
	if !st.File {
		if err := json.Unmarshal(r.doc, &st.Rule); err != nil {
			return st, fmt.Errorf("postgres: fault rule %s: %w", r.id, err)
		}
		st.Rule = st.Rule.Normalize()
	}
	var remaining *int
	if r.remaining != nil {
		remaining = new(*r.remaining)
	}
	st.Rule.ID, st.Rule.Target, st.Rule.Hits, st.Rule.Remaining = r.id, paymock.FaultTarget(r.target), r.hits, remaining
	return st, nil
}

// scanRuleRows reads rows of ruleColumns, followed by the selector when
// withSelector.
func scanRuleRows(rows pgx.Rows, err error, withSelector bool) ([]ruleRow, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []ruleRow
	for rows.Next() {
		var r ruleRow
		dest := []any{&r.id, &r.seq, &r.file, &r.target, &r.doc, &r.removed, &r.hits, &r.remaining}
		if withSelector {
			dest = append(dest, &r.selector)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func scanRules(rows pgx.Rows, err error, what string) ([]paymock.StoredFaultRule, error) {
	all, err := scanRuleRows(rows, err, false)
	if err != nil {
		return nil, check(what, err)
	}
	var out []paymock.StoredFaultRule
	for _, r := range all {
		st, err := r.decode()
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// fileCounts are the values of a file rule's first row for a merchant:
// its counts when fresh, with what the row is matched by.
func fileCounts(r paymock.FaultRule) (target, selector string, remaining *int) {
	if r.Times != nil {
		n := *r.Times
		remaining = &n
	}
	return string(r.Target), r.Selector(), remaining
}

// DrawRule implements paymock.FaultRules.
func (s *Store) DrawRule(ctx context.Context, merchantID string, r paymock.FaultRule, file bool) (int64, bool, error) {
	var n int64
	var err error
	if file {
		// The first draw makes the file rule's row, which Candidates
		// reads: announced as a change.
		target, selector, remaining := fileCounts(r)
		err = s.changed(ctx, merchantID, func(b *pgx.Batch) {
			b.Queue(`INSERT INTO fault_rules AS f (merchant_id, id, from_file, target, selector, remaining, draws)
			VALUES ($1, $2, true, $3, $4, $5, 1)
			ON CONFLICT (merchant_id, id) DO UPDATE SET draws = f.draws + 1 WHERE f.from_file AND `+live+`
			RETURNING f.draws`, merchantID, r.ID, target, selector, remaining).QueryRow(func(row pgx.Row) error {
				return row.Scan(&n)
			})
		})
	} else {
		// Candidates does not read draws: no change to announce.
		err = s.pool.QueryRow(ctx, `UPDATE fault_rules f SET draws = f.draws + 1
			WHERE f.merchant_id = $1 AND f.id = $2 AND NOT f.from_file AND `+live+`
			RETURNING f.draws`, merchantID, r.ID).Scan(&n)
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, check("drawing for fault rule "+r.ID, err)
	}
	return n, true, nil
}

// HitRule implements paymock.FaultRules. The row is locked by the one
// statement that checks and takes from remaining, so concurrent hits on
// any replicas queue on it and each sees the count the one before left.
func (s *Store) HitRule(ctx context.Context, merchantID string, r paymock.FaultRule, file bool) (paymock.StoredFaultRule, bool, error) {
	var sql string
	var args []any
	if file {
		target, selector, remaining := fileCounts(r)
		if remaining != nil {
			*remaining-- // this hit
		}
		sql, args = `INSERT INTO fault_rules AS f (merchant_id, id, from_file, target, selector, hits, remaining)
			VALUES ($1, $2, true, $3, $4, 1, $5)
			ON CONFLICT (merchant_id, id) DO UPDATE SET hits = f.hits + 1, remaining = f.remaining - 1
			WHERE f.from_file AND `+live+`
			RETURNING f.seq, f.hits, f.remaining`, []any{merchantID, r.ID, target, selector, remaining}
	} else {
		sql, args = `UPDATE fault_rules f SET hits = f.hits + 1, remaining = f.remaining - 1
			WHERE f.merchant_id = $1 AND f.id = $2 AND NOT f.from_file AND `+live+`
			RETURNING f.seq, f.hits, f.remaining`, []any{merchantID, r.ID}
	}
	st := paymock.StoredFaultRule{Rule: r, File: file}
	var hits int
	var remaining *int
	err := s.changed(ctx, merchantID, func(b *pgx.Batch) {
		b.Queue(sql, args...).QueryRow(func(row pgx.Row) error { return row.Scan(&st.Seq, &hits, &remaining) })
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return paymock.StoredFaultRule{}, false, nil
	}
	if err != nil {
		return paymock.StoredFaultRule{}, false, check("counting a hit of fault rule "+r.ID, err)
	}
	st.Rule.Hits, st.Rule.Remaining = hits, remaining
	return st, true, nil
}

// RemoveRule implements paymock.FaultRules.
func (s *Store) RemoveRule(ctx context.Context, merchantID string, r paymock.FaultRule, file bool) (bool, error) {
	if !storable(r.ID) {
		return false, nil // a path id no rule can have
	}
	var err error
	var n int64
	if file {
		target, selector, remaining := fileCounts(r)
		err = s.changed(ctx, merchantID, func(b *pgx.Batch) {
			b.Queue(`INSERT INTO fault_rules AS f (merchant_id, id, from_file, target, selector, remaining, removed)
			VALUES ($1, $2, true, $3, $4, $5, true)
			ON CONFLICT (merchant_id, id) DO UPDATE SET removed = true WHERE f.from_file AND `+live,
				merchantID, r.ID, target, selector, remaining).Exec(func(tag pgconn.CommandTag) error {
				n = tag.RowsAffected()
				return nil
			})
		})
	} else {
		err = s.changed(ctx, merchantID, func(b *pgx.Batch) {
			b.Queue(`DELETE FROM fault_rules f
			WHERE f.merchant_id = $1 AND f.id = $2 AND NOT f.from_file AND `+live, merchantID, r.ID).Exec(func(tag pgconn.CommandTag) error {
				n = tag.RowsAffected()
				return nil
			})
		})
	}
	if err != nil {
		return false, check("removing fault rule "+r.ID, err)
	}
	return n > 0, nil
}

// ClearRules implements paymock.FaultRules, in one statement: a hit on
// another replica sees every rule gone or none.
func (s *Store) ClearRules(ctx context.Context, merchantID string, file []paymock.FaultRule) error {
	ids := make([]string, 0, len(file))
	targets := make([]string, 0, len(file))
	selectors := make([]string, 0, len(file))
	for _, r := range file {
		ids, targets, selectors = append(ids, r.ID), append(targets, string(r.Target)), append(selectors, r.Selector())
	}
	err := s.changed(ctx, merchantID, func(b *pgx.Batch) {
		b.Queue(`WITH api AS (DELETE FROM fault_rules WHERE merchant_id = $1 AND NOT from_file)
		INSERT INTO fault_rules AS f (merchant_id, id, from_file, target, selector, removed)
		SELECT $1, u.id, true, u.target, u.selector, true FROM unnest($2::text[], $3::text[], $4::text[]) AS u (id, target, selector)
		ON CONFLICT (merchant_id, id) DO UPDATE SET removed = true WHERE f.from_file`,
			merchantID, ids, targets, selectors)
	})
	if err != nil {
		return check("clearing the fault rules of "+merchantID, err)
	}
	return nil
}

// ResetRules implements paymock.FaultRules.
func (s *Store) ResetRules(ctx context.Context, merchantID string) error {
	if err := s.changed(ctx, merchantID, func(b *pgx.Batch) {
		b.Queue(`DELETE FROM fault_rules WHERE merchant_id = $1`, merchantID)
	}); err != nil {
		return check("resetting the fault rules of "+merchantID, err)
	}
	return nil
}

// ForgetRules implements paymock.FaultRules: the rules are every
// replica's, and another may still serve the merchant, so a replica that
// forgets an idle merchant leaves them, as it leaves its payments.
func (s *Store) ForgetRules(ctx context.Context, merchantID string) error { return nil }

// encodeRule is the rule column of an API rule: the rule as added, its
// counts being columns of their own.
func encodeRule(r paymock.FaultRule) ([]byte, error) {
	r.Hits, r.Remaining = 0, nil
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("postgres: encoding fault rule %s: %w", r.ID, err)
	}
	return b, nil
}
