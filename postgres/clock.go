// Per-merchant clocks, shared by the replicas.

package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The clock modes, as the lifecycle names them.
const (
	ClockReal   = "real"
	ClockFrozen = "frozen"
)

// Clock is one merchant's clock: an offset from the sandbox's time (real
// mode) or an instant that moves only when advanced (frozen mode).
type Clock struct {
	Mode   string
	Offset time.Duration // real mode
	Frozen time.Time     // frozen mode
}

func (c Clock) check() error {
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
func (c Clock) frozenNS() *int64 {
	if c.Mode != ClockFrozen {
		return nil
	}
	ns := c.Frozen.UnixNano()
	return &ns
}

func scanClock(row pgx.Row) (Clock, error) {
	var c Clock
	var offset int64
	var frozen *int64
	if err := row.Scan(&c.Mode, &offset, &frozen); err != nil {
		return Clock{}, err
	}
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
	if err := c.check(); err != nil {
		return err
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO clocks (merchant_id, mode, offset_ns, frozen_ns)
		VALUES ($1, $2, $3, $4)
		ON CONFLICT (merchant_id) DO UPDATE SET mode = $2, offset_ns = $3, frozen_ns = $4`,
		merchantID, c.Mode, int64(c.Offset), c.frozenNS())
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
	if err := initial.check(); err != nil {
		return Clock{}, err
	}
	var frozen *int64
	if ns := initial.frozenNS(); ns != nil {
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
		merchantID, initial.Mode, offset, frozen, int64(d)))
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
