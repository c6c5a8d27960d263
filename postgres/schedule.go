// The schedule: work due at instants of merchants' clocks, claimed by one
// replica at a time under a lease.

package postgres

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
)

// Item is one piece of scheduled work.
type Item struct {
	// ID is assigned by Schedule.
	ID         int64
	MerchantID string
	// DueAt is an instant of the merchant's clock.
	DueAt time.Time
	// Kind says what to do ("expiry", "scenario_step", "webhook_retry"...);
	// Payload is its JSON argument, an object (empty means {}).
	Kind    string
	Payload json.RawMessage
	// ClaimedUntil is when the lease of the replica that claimed it ends;
	// zero for an item not claimed.
	ClaimedUntil time.Time
}

// ceilMicro rounds t up to PostgreSQL's microseconds, so that work stored
// never comes due before the instant it was scheduled for.
func ceilMicro(t time.Time) time.Time {
	if r := t.Truncate(time.Microsecond); !r.Equal(t) {
		return r.Add(time.Microsecond)
	}
	return t
}

// Schedule stores an item and returns its id. DueAt is kept to the
// microsecond, rounded up.
func (s *Store) Schedule(ctx context.Context, it Item) (int64, error) {
	switch {
	case it.MerchantID == "":
		return 0, errors.New("schedule: an item needs its merchant")
	case it.Kind == "":
		return 0, errors.New("schedule: an item needs its kind")
	case it.DueAt.IsZero():
		return 0, errors.New("schedule: an item needs its due instant")
	}
	payload := string(it.Payload)
	if payload == "" {
		payload = "{}"
	}
	if !json.Valid([]byte(payload)) {
		return 0, fmt.Errorf("schedule %s: the payload is not JSON", it.Kind)
	}
	var id int64
	err := s.pool.QueryRow(ctx, `INSERT INTO schedule (merchant_id, due_at, kind, payload)
		VALUES ($1, $2, $3, $4) RETURNING id`,
		it.MerchantID, ceilMicro(it.DueAt), it.Kind, payload).Scan(&id)
	if err != nil {
		return 0, check("scheduling "+it.Kind, err)
	}
	return id, nil
}

// ClaimDue claims up to limit items due on the clocks of real-mode
// merchants, earliest first, for lease from now, and returns them. now is
// the real time, from which stored clocks' offsets count: a merchant
// whose stored clock runs ahead by an offset has its items come due that
// much sooner; a merchant whose clock
// is frozen has none claimed here (an advance fires them, through
// ClaimMerchantDue). Leases are measured on now too, so replicas' clocks
// must agree to well within a lease. Items another replica holds are
// skipped rather than waited for (FOR UPDATE SKIP LOCKED); an item whose
// lease has run out is claimed again.
func (s *Store) ClaimDue(ctx context.Context, now time.Time, lease time.Duration, limit int) ([]Item, error) {
	return s.claim(ctx, `SELECT s.id FROM schedule s
			LEFT JOIN clocks c ON c.merchant_id = s.merchant_id
			WHERE (s.claimed_until IS NULL OR s.claimed_until <= $1)
				AND coalesce(c.mode, 'real') = 'real'
				AND s.due_at <= $1 + (coalesce(c.offset_ns, 0) / 1000) * interval '1 microsecond'
			ORDER BY s.due_at, s.id
			LIMIT $3
			FOR UPDATE OF s SKIP LOCKED`, now, lease, limit)
}

// ClaimMerchantDue claims up to limit of one merchant's items due by
// until on its clock, earliest first, for lease from now (real time).
// Advancing a frozen clock uses it to fire what fell due, whichever
// replica scheduled it.
func (s *Store) ClaimMerchantDue(ctx context.Context, merchantID string, until, now time.Time, lease time.Duration, limit int) ([]Item, error) {
	return s.claim(ctx, `SELECT s.id FROM schedule s
			WHERE s.merchant_id = $4 AND s.due_at <= $5
				AND (s.claimed_until IS NULL OR s.claimed_until <= $1)
			ORDER BY s.due_at, s.id
			LIMIT $3
			FOR UPDATE OF s SKIP LOCKED`, now, lease, limit, merchantID, until)
}

// claim sets the lease of the items that due selects (its parameters: $1
// now, $3 limit, then extra) and returns them in due order.
func (s *Store) claim(ctx context.Context, due string, now time.Time, lease time.Duration, limit int, extra ...any) ([]Item, error) {
	if lease <= 0 || limit <= 0 {
		return nil, fmt.Errorf("claim: lease %s and limit %d must be positive", lease, limit)
	}
	args := append([]any{now, now.Add(lease), limit}, extra...)
	rows, err := s.pool.Query(ctx, `WITH due AS (`+due+`)
		UPDATE schedule SET claimed_until = $2 FROM due WHERE schedule.id = due.id
		RETURNING schedule.id, merchant_id, due_at, kind, payload, claimed_until`, args...)
	if err != nil {
		return nil, check("claiming due work", err)
	}
	items, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Item, error) {
		var it Item
		var payload []byte
		err := row.Scan(&it.ID, &it.MerchantID, &it.DueAt, &it.Kind, &payload, &it.ClaimedUntil)
		it.Payload = payload
		it.DueAt, it.ClaimedUntil = it.DueAt.UTC(), it.ClaimedUntil.UTC()
		return it, err
	})
	if err != nil {
		return nil, check("claiming due work", err)
	}
	// UPDATE ... RETURNING does not keep the order of the rows it updates.
	slices.SortFunc(items, func(a, b Item) int {
		if c := a.DueAt.Compare(b.DueAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	return items, nil
}

// Done removes a finished item. An item already gone (its merchant was
// reset) is not an error.
func (s *Store) Done(ctx context.Context, id int64) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM schedule WHERE id = $1`, id); err != nil {
		return check("finishing scheduled work", err)
	}
	return nil
}

// ResetSchedule drops every item of one merchant.
func (s *Store) ResetSchedule(ctx context.Context, merchantID string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM schedule WHERE merchant_id = $1`, merchantID); err != nil {
		return check("resetting the schedule of "+merchantID, err)
	}
	return nil
}
