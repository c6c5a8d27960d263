// Due payments: when each pending payment changes by itself, for the
// lifecycle's sweeps on every replica.

package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock"
)

var _ paymock.DueStore = (*Store)(nil)

// SetDue implements paymock.DueStore. at is kept to the microsecond,
// rounded up, so that the step never comes due before its instant.
func (s *Store) SetDue(ctx context.Context, merchantID, id string, at time.Time, to paymock.Status) error {
	switch to {
	case paymock.StatusCompleted, paymock.StatusFailed, paymock.StatusExpired:
	default:
		return fmt.Errorf("set due %s: %q is not a final status", id, to)
	}
	if !storable(id) {
		return nil // no payment has it
	}
	_, err := s.pool.Exec(ctx, `UPDATE payments SET step_at = $3, step_status = $4
		WHERE merchant_id = $1 AND id = $2 AND status = 'pending'`,
		merchantID, id, ceilMicro(at), string(to))
	if err != nil {
		return check("setting when payment "+id+" is due", err)
	}
	return nil
}

// Due implements paymock.DueStore: an index range of the merchant's
// pending payments.
func (s *Store) Due(ctx context.Context, merchantID string, until time.Time, limit int) ([]paymock.DuePayment, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("due: limit %d must be positive", limit)
	}
	rows, err := s.pool.Query(ctx, `SELECT merchant_id, id, due_at, coalesce(step_status, 'expired')
		FROM payments
		WHERE merchant_id = $1 AND status = 'pending' AND due_at <= $2
		ORDER BY due_at, seq
		LIMIT $3`, merchantID, until, limit)
	return collectDue(rows, err)
}

// DueAll implements paymock.DueStore. The scan of pending payments by
// due instant stops at the latest any real clock shows (now plus the
// largest offset), so a sweep reads the payments that may be due, not
// every pending one; each is then checked against its own merchant's
// clock.
func (s *Store) DueAll(ctx context.Context, now time.Time, base time.Duration, limit int) ([]paymock.DuePayment, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("due: limit %d must be positive", limit)
	}
	rows, err := s.pool.Query(ctx, `SELECT p.merchant_id, p.id, p.due_at, coalesce(p.step_status, 'expired')
		FROM payments p
		LEFT JOIN clocks c ON c.merchant_id = p.merchant_id
		WHERE p.status = 'pending'
			AND p.due_at <= (SELECT $1::timestamptz + (greatest($2::bigint,
					coalesce(max(offset_ns) FILTER (WHERE mode = 'real'), $2::bigint)) / 1000) * interval '1 microsecond'
				FROM clocks)
			AND coalesce(c.mode, 'real') = 'real'
			AND p.due_at <= $1::timestamptz + (coalesce(c.offset_ns, $2::bigint) / 1000) * interval '1 microsecond'
		ORDER BY p.due_at, p.seq
		LIMIT $3`, now, int64(base), limit)
	return collectDue(rows, err)
}

// ceilMicro rounds t up to PostgreSQL's microseconds, so that work stored
// never comes due before the instant it was scheduled for.
func ceilMicro(t time.Time) time.Time {
	if r := t.Truncate(time.Microsecond); !r.Equal(t) {
		return r.Add(time.Microsecond)
	}
	return t
}

func collectDue(rows pgx.Rows, err error) ([]paymock.DuePayment, error) {
	if err != nil {
		return nil, check("listing due payments", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (paymock.DuePayment, error) {
		var d paymock.DuePayment
		var to string
		err := row.Scan(&d.MerchantID, &d.ID, &d.At, &to)
		d.At, d.To = d.At.UTC(), paymock.Status(to)
		return d, err
	})
	if err != nil {
		return nil, check("listing due payments", err)
	}
	return out, nil
}
