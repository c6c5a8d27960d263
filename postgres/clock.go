// Per-merchant clocks, shared by the replicas.

package postgres

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock"
)

var _ paymock.ClockStore = (*Store)(nil)

func checkClock(c paymock.ClockState) error {
	switch c.Mode {
	case paymock.ClockReal:
		return nil
	case paymock.ClockFrozen:
		if c.Frozen.IsZero() {
			return errors.New("a frozen clock needs its instant")
		}
		return nil
	}
	return fmt.Errorf("clock mode %q: want real or frozen", c.Mode)
}

// nanos is t in nanoseconds since 1970, as the numeric frozen_ns column
// keeps it: an int64 would wrap in 2262, and a clock goes to 9999.
func nanos(t time.Time) string {
	n := big.NewInt(t.Unix())
	n.Mul(n, big.NewInt(int64(time.Second)))
	return n.Add(n, big.NewInt(int64(t.Nanosecond()))).String()
}

// instant reads back what nanos wrote.
func instant(ns string) (time.Time, error) {
	n, ok := new(big.Int).SetString(ns, 10)
	if !ok {
		return time.Time{}, fmt.Errorf("frozen_ns %q is not an integer", ns)
	}
	sec, nsec := new(big.Int).DivMod(n, big.NewInt(int64(time.Second)), new(big.Int))
	if !sec.IsInt64() {
		return time.Time{}, fmt.Errorf("frozen_ns %s is out of range", ns)
	}
	return time.Unix(sec.Int64(), nsec.Int64()).UTC(), nil
}

// frozenNS is the frozen_ns column of the clock: null for a real clock.
func frozenNS(c paymock.ClockState) *string {
	if c.Mode != paymock.ClockFrozen {
		return nil
	}
	ns := nanos(c.Frozen)
	return &ns
}

// clockColumns are what scanClock reads.
const clockColumns = `mode, offset_ns, frozen_ns::text`

func scanClock(row pgx.Row) (paymock.ClockState, error) {
	var c paymock.ClockState
	var mode string
	var offset int64
	var frozen *string
	if err := row.Scan(&mode, &offset, &frozen); err != nil {
		return c, err
	}
	c.Mode = paymock.ClockMode(mode)
	c.Offset = time.Duration(offset)
	if frozen != nil {
		t, err := instant(*frozen)
		if err != nil {
			return c, err
		}
		c.Frozen = t
	}
	return c, nil
}

// Clock implements paymock.ClockStore. Reads of one merchant's clock that
// arrive together share one query (clockreads.go).
func (s *Store) Clock(ctx context.Context, merchantID string) (paymock.ClockState, bool, error) {
	if c, ok := cached(s.changes, s.changes.clocks, merchantID); ok {
		return c.st, c.ok, nil
	}
	gen := s.changes.begin()
	st, ok, err := s.readClock(ctx, merchantID)
	if err == nil {
		put(s.changes, gen, s.changes.clocks, merchantID, cachedClock{st: st, ok: ok})
	}
	return st, ok, err
}

// queryClock is one read of the merchant's clock.
func (s *Store) queryClock(ctx context.Context, merchantID string) (paymock.ClockState, bool, error) {
	c, err := scanClock(s.pool.QueryRow(ctx,
		`SELECT `+clockColumns+` FROM clocks WHERE merchant_id = $1`, merchantID))
	if errors.Is(err, pgx.ErrNoRows) {
		return paymock.ClockState{}, false, nil
	}
	if err != nil {
		return paymock.ClockState{}, false, check("reading the clock of "+merchantID, err)
	}
	return c, true, nil
}

// AdvanceClock implements paymock.ClockStore in one statement, so that
// advances from several replicas add up. An offset past a bigint is an
// error of the database, never a wrap.
func (s *Store) AdvanceClock(ctx context.Context, merchantID string, d time.Duration, initial paymock.ClockState) (paymock.ClockState, error) {
	if d < 0 {
		return paymock.ClockState{}, fmt.Errorf("advance by %s: the clock only moves forward", d)
	}
	if err := checkClock(initial); err != nil {
		return paymock.ClockState{}, err
	}
	first := initial
	if first.Mode == paymock.ClockFrozen {
		first.Frozen = first.Frozen.Add(d)
	} else if first.Offset > maxDuration-d {
		return paymock.ClockState{}, fmt.Errorf("advancing the clock of %s by %s: its offset would overflow", merchantID, d)
	} else {
		first.Offset += d
	}
	var c paymock.ClockState
	err := s.changed(ctx, merchantID, func(b *pgx.Batch) {
		b.Queue(`INSERT INTO clocks AS c (merchant_id, mode, offset_ns, frozen_ns)
		VALUES ($1, $2, $3, $4::numeric)
		ON CONFLICT (merchant_id) DO UPDATE SET
			offset_ns = CASE WHEN c.mode = 'real' THEN c.offset_ns + $5 ELSE c.offset_ns END,
			frozen_ns = c.frozen_ns + $5
		RETURNING `+clockColumns,
			merchantID, string(first.Mode), int64(first.Offset), frozenNS(first), int64(d)).QueryRow(func(row pgx.Row) (err error) {
			c, err = scanClock(row)
			return err
		})
	})
	if err != nil {
		return paymock.ClockState{}, check("advancing the clock of "+merchantID, err)
	}
	return c, nil
}

// maxDuration is the longest time.Duration.
const maxDuration = time.Duration(1<<63 - 1)

// ResetClock implements paymock.ClockStore.
func (s *Store) ResetClock(ctx context.Context, merchantID string) error {
	if err := s.changed(ctx, merchantID, func(b *pgx.Batch) {
		b.Queue(`DELETE FROM clocks WHERE merchant_id = $1`, merchantID)
	}); err != nil {
		return check("resetting the clock of "+merchantID, err)
	}
	// A merchant reset costs nothing more here; one read at this moment
	// makes a new entry.
	s.clockReads.Delete(merchantID)
	return nil
}

// RaiseClock implements paymock.ClockStore in one statement: a frozen
// clock's instant becomes at least t, a real clock's offset at least
// t - realNow.
func (s *Store) RaiseClock(ctx context.Context, merchantID string, t, realNow time.Time, initial paymock.ClockState) (paymock.ClockState, error) {
	if err := checkClock(initial); err != nil {
		return paymock.ClockState{}, err
	}
	// Sub saturates rather than wraps: a real clock is refused such an
	// offset, and one stored real despite a frozen initial (sandboxes
	// sharing a store share their mode) keeps its own (null).
	offset := t.Sub(realNow)
	var realOffset *int64
	if offset == maxDuration {
		if initial.Mode == paymock.ClockReal {
			return paymock.ClockState{}, fmt.Errorf("advancing the clock of %s to %s: its offset would overflow", merchantID, t)
		}
	} else {
		realOffset = (*int64)(&offset)
	}
	first := initial
	switch {
	case first.Mode == paymock.ClockFrozen && t.After(first.Frozen):
		first.Frozen = t
	case first.Mode == paymock.ClockReal && offset > first.Offset:
		first.Offset = offset
	}
	var c paymock.ClockState
	err := s.changed(ctx, merchantID, func(b *pgx.Batch) {
		b.Queue(`INSERT INTO clocks AS c (merchant_id, mode, offset_ns, frozen_ns)
		VALUES ($1, $2, $3, $4::numeric)
		ON CONFLICT (merchant_id) DO UPDATE SET
			offset_ns = CASE WHEN c.mode = 'real' THEN greatest(c.offset_ns, $5::bigint) ELSE c.offset_ns END,
			frozen_ns = CASE WHEN c.mode = 'frozen' THEN greatest(c.frozen_ns, $6::numeric) ELSE c.frozen_ns END
		RETURNING `+clockColumns,
			merchantID, string(first.Mode), int64(first.Offset), frozenNS(first), realOffset, nanos(t)).QueryRow(func(row pgx.Row) (err error) {
			c, err = scanClock(row)
			return err
		})
	})
	if err != nil {
		return paymock.ClockState{}, check("advancing the clock of "+merchantID, err)
	}
	return c, nil
}
