// Per-merchant clocks, shared by the replicas.

package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock/lifecycle"
)

// The clock modes, as the lifecycle names them.
const (
	ClockReal   = lifecycle.ClockReal
	ClockFrozen = lifecycle.ClockFrozen
)

// Clock is one merchant's clock: an offset from real time (real mode) or
// an instant that moves only when advanced (frozen mode). It is the
// lifecycle's type, so that *Store is a lifecycle.ClockStore.
type Clock = lifecycle.ClockState

var _ lifecycle.ClockStore = (*Store)(nil)

func checkClock(c Clock) error {
	switch c.Mode {
	case ClockReal:
		return nil
	case ClockFrozen:
		if c.Frozen.IsZero() {
			return errors.New("a frozen clock needs its instant")
		}
		return nil
	}
	return fmt.Errorf("clock mode %q: want real or frozen", c.Mode)
}

// frozenNS is the frozen_ns column of the clock: null for a real clock.
func frozenNS(c Clock) *int64 {
	if c.Mode != ClockFrozen {
		return nil
	}
	ns := c.Frozen.UnixNano()
	return &ns
}

func scanClock(row pgx.Row) (Clock, error) {
	var c Clock
	var mode string
	var offset int64
	var frozen *int64
	if err := row.Scan(&mode, &offset, &frozen); err != nil {
		return Clock{}, err
	}
	c.Mode = lifecycle.ClockMode(mode)
	c.Offset = time.Duration(offset)
	if frozen != nil {
		c.Frozen = time.Unix(0, *frozen).UTC()
	}
	return c, nil
}

// Clock returns the merchant's stored clock; false when none is stored,
// and the merchant's clock is a new merchant's.
func (s *Store) Clock(ctx context.Context, merchantID string) (Clock, bool, error) {
	c, err := scanClock(s.pool.QueryRow(ctx,
		`SELECT mode, offset_ns, frozen_ns FROM clocks WHERE merchant_id = $1`, merchantID))
	if errors.Is(err, pgx.ErrNoRows) {
		return Clock{}, false, nil
	}
	if err != nil {
		return Clock{}, false, check("reading the clock of "+merchantID, err)
	}
	return c, true, nil
}

// SetClock stores the merchant's clock, replacing any.
func (s *Store) SetClock(ctx context.Context, merchantID string, c Clock) error {
	if err := checkClock(c); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO clocks (merchant_id, mode, offset_ns, frozen_ns)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (merchant_id) DO UPDATE SET mode = $2, offset_ns = $3, frozen_ns = $4`,
		merchantID, string(c.Mode), int64(c.Offset), frozenNS(c))
	if err != nil {
		return check("setting the clock of "+merchantID, err)
	}
	return nil
}

// AdvanceClock moves the merchant's clock forward by d in one statement,
// so that advances from several replicas add up, and returns the clock
// afterwards. initial is the clock of a merchant with none stored yet.
func (s *Store) AdvanceClock(ctx context.Context, merchantID string, d time.Duration, initial Clock) (Clock, error) {
	if d < 0 {
		return Clock{}, fmt.Errorf("advance by %s: the clock only moves forward", d)
	}
	if err := checkClock(initial); err != nil {
		return Clock{}, err
	}
	var frozen *int64
	if ns := frozenNS(initial); ns != nil {
		v := *ns + int64(d)
		frozen = &v
	}
	offset := int64(initial.Offset)
	if initial.Mode == ClockReal {
		offset += int64(d)
	}
	c, err := scanClock(s.pool.QueryRow(ctx, `INSERT INTO clocks AS c (merchant_id, mode, offset_ns, frozen_ns)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (merchant_id) DO UPDATE SET
			offset_ns = CASE WHEN c.mode = 'real' THEN c.offset_ns + $5 ELSE c.offset_ns END,
			frozen_ns = c.frozen_ns + $5
		RETURNING mode, offset_ns, frozen_ns`,
		merchantID, string(initial.Mode), offset, frozen, int64(d)))
	if err != nil {
		return Clock{}, check("advancing the clock of "+merchantID, err)
	}
	return c, nil
}

// ResetClock forgets the merchant's clock: it is a new merchant's again.
func (s *Store) ResetClock(ctx context.Context, merchantID string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM clocks WHERE merchant_id = $1`, merchantID); err != nil {
		return check("resetting the clock of "+merchantID, err)
	}
	return nil
}

// RaiseClock moves the merchant's clock forward so that it shows at least
// t, in one statement, and returns the clock afterwards: a frozen clock's
// instant becomes at least t, a real clock's offset at least t - realNow.
// initial is the clock of a merchant with none stored yet (raised too).
func (s *Store) RaiseClock(ctx context.Context, merchantID string, t, realNow time.Time, initial Clock) (Clock, error) {
	if err := checkClock(initial); err != nil {
		return Clock{}, err
	}
	offset := int64(t.Sub(realNow))
	first := initial
	switch {
	case first.Mode == ClockFrozen && t.After(first.Frozen):
		first.Frozen = t
	case first.Mode == ClockReal && time.Duration(offset) > first.Offset:
		first.Offset = time.Duration(offset)
	}
	c, err := scanClock(s.pool.QueryRow(ctx, `INSERT INTO clocks AS c (merchant_id, mode, offset_ns, frozen_ns)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (merchant_id) DO UPDATE SET
			offset_ns = CASE WHEN c.mode = 'real' THEN greatest(c.offset_ns, $5) ELSE c.offset_ns END,
			frozen_ns = CASE WHEN c.mode = 'frozen' THEN greatest(c.frozen_ns, $6) ELSE c.frozen_ns END
		RETURNING mode, offset_ns, frozen_ns`,
		merchantID, string(first.Mode), int64(first.Offset), frozenNS(first), offset, t.UnixNano()))
	if err != nil {
		return Clock{}, check("advancing the clock of "+merchantID, err)
	}
	return c, nil
}
