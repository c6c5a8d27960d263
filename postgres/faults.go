// Each merchant's fault rules and their counts, shared by the replicas:
// the paymock.FaultRules of a PostgreSQL Backend.

package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
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
	err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
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

// Candidates implements paymock.FaultRules: one look-up of the candidates
// index, which finds nothing at all for a merchant without rules.
func (s *Store) Candidates(ctx context.Context, merchantID string, target paymock.FaultTarget, selector string) ([]paymock.StoredFaultRule, error) {
	if !storable(selector) {
		selector = paymock.FaultWildcard // no rule is for it: only the rules for any can match
	}
	rows, err := s.pool.Query(ctx, `SELECT `+ruleColumns+` FROM fault_rules f
		WHERE f.merchant_id = $1 AND f.target = $2 AND f.selector IN ($3, '*')
		AND (f.from_file OR f.remaining IS NULL OR f.remaining > 0)`, merchantID, string(target), selector)
	return scanRules(rows, err, "matching the fault rules of "+merchantID)
}

func scanRules(rows pgx.Rows, err error, what string) ([]paymock.StoredFaultRule, error) {
	if err != nil {
		return nil, check(what, err)
	}
	defer rows.Close()
	var out []paymock.StoredFaultRule
	for rows.Next() {
		var st paymock.StoredFaultRule
		var id, target string
		var doc []byte
		var hits int
		var remaining *int
		if err := rows.Scan(&id, &st.Seq, &st.File, &target, &doc, &st.Removed, &hits, &remaining); err != nil {
			return nil, check(what, err)
		}
		if !st.File {
			if err := json.Unmarshal(doc, &st.Rule); err != nil {
				return nil, fmt.Errorf("postgres: fault rule %s: %w", id, err)
			}
			st.Rule = st.Rule.Normalize()
		}
		st.Rule.ID, st.Rule.Target, st.Rule.Hits, st.Rule.Remaining = id, paymock.FaultTarget(target), hits, remaining
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, check(what, err)
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
	var row pgx.Row
	if file {
		target, selector, remaining := fileCounts(r)
		row = s.pool.QueryRow(ctx, `INSERT INTO fault_rules AS f (merchant_id, id, from_file, target, selector, remaining, draws)
			VALUES ($1, $2, true, $3, $4, $5, 1)
			ON CONFLICT (merchant_id, id) DO UPDATE SET draws = f.draws + 1 WHERE f.from_file AND `+live+`
			RETURNING f.draws`, merchantID, r.ID, target, selector, remaining)
	} else {
		row = s.pool.QueryRow(ctx, `UPDATE fault_rules f SET draws = f.draws + 1
			WHERE f.merchant_id = $1 AND f.id = $2 AND NOT f.from_file AND `+live+`
			RETURNING f.draws`, merchantID, r.ID)
	}
	var n int64
	err := row.Scan(&n)
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
	var row pgx.Row
	if file {
		target, selector, remaining := fileCounts(r)
		if remaining != nil {
			*remaining-- // this hit
		}
		row = s.pool.QueryRow(ctx, `INSERT INTO fault_rules AS f (merchant_id, id, from_file, target, selector, hits, remaining)
			VALUES ($1, $2, true, $3, $4, 1, $5)
			ON CONFLICT (merchant_id, id) DO UPDATE SET hits = f.hits + 1, remaining = f.remaining - 1
			WHERE f.from_file AND `+live+`
			RETURNING f.seq, f.hits, f.remaining`, merchantID, r.ID, target, selector, remaining)
	} else {
		row = s.pool.QueryRow(ctx, `UPDATE fault_rules f SET hits = f.hits + 1, remaining = f.remaining - 1
			WHERE f.merchant_id = $1 AND f.id = $2 AND NOT f.from_file AND `+live+`
			RETURNING f.seq, f.hits, f.remaining`, merchantID, r.ID)
	}
	st := paymock.StoredFaultRule{Rule: r, File: file}
	var hits int
	var remaining *int
	err := row.Scan(&st.Seq, &hits, &remaining)
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
		tag, e := s.pool.Exec(ctx, `INSERT INTO fault_rules AS f (merchant_id, id, from_file, target, selector, remaining, removed)
			VALUES ($1, $2, true, $3, $4, $5, true)
			ON CONFLICT (merchant_id, id) DO UPDATE SET removed = true WHERE f.from_file AND `+live,
			merchantID, r.ID, target, selector, remaining)
		n, err = tag.RowsAffected(), e
	} else {
		tag, e := s.pool.Exec(ctx, `DELETE FROM fault_rules f
			WHERE f.merchant_id = $1 AND f.id = $2 AND NOT f.from_file AND `+live, merchantID, r.ID)
		n, err = tag.RowsAffected(), e
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
	_, err := s.pool.Exec(ctx, `WITH api AS (DELETE FROM fault_rules WHERE merchant_id = $1 AND NOT from_file)
		INSERT INTO fault_rules AS f (merchant_id, id, from_file, target, selector, removed)
		SELECT $1, u.id, true, u.target, u.selector, true FROM unnest($2::text[], $3::text[], $4::text[]) AS u (id, target, selector)
		ON CONFLICT (merchant_id, id) DO UPDATE SET removed = true WHERE f.from_file`,
		merchantID, ids, targets, selectors)
	if err != nil {
		return check("clearing the fault rules of "+merchantID, err)
	}
	return nil
}

// ResetRules implements paymock.FaultRules.
func (s *Store) ResetRules(ctx context.Context, merchantID string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM fault_rules WHERE merchant_id = $1`, merchantID); err != nil {
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
