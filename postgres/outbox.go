// The webhook outbox: events and deliveries every replica shares, claimed
// when due by one replica at a time (paymock.Outbox).

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
	"github.com/paymock/paymock"
)

var _ paymock.Outbox = (*Store)(nil)

// AddEvent implements paymock.Outbox.
func (s *Store) AddEvent(ctx context.Context, o paymock.Outgoing) ([]int64, error) {
	var ids []int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var err error
		ids, err = insertOutgoing(ctx, tx, o)
		return err
	})
	if err != nil {
		return nil, check("storing event "+o.Event.ID, err)
	}
	return ids, nil
}

// UpdateWithEvent is Update that, in the same transaction, stores the
// event event makes of the updated payment with its deliveries, so that
// a transition and its event are kept together or not at all: a replica
// killed between the two can lose neither alone. It returns the
// deliveries' ids too.
func (s *Store) UpdateWithEvent(ctx context.Context, merchantID, id string, fn func(*paymock.Payment) error,
	event func(paymock.Payment) (paymock.Outgoing, error)) (paymock.Payment, paymock.Outgoing, []int64, error) {
	var (
		o   paymock.Outgoing
		ids []int64
	)
	p, err := s.update(ctx, merchantID, id, fn, func(tx pgx.Tx, p paymock.Payment) error {
		var err error
		if o, err = event(p); err != nil {
			return err
		}
		ids, err = insertOutgoing(ctx, tx, o)
		return err
	})
	return p, o, ids, err
}

// insertOutgoing stores an event and its first round in tx.
func insertOutgoing(ctx context.Context, tx pgx.Tx, o paymock.Outgoing) ([]int64, error) {
	ev := o.Event
	if _, err := tx.Exec(ctx, `INSERT INTO webhook_events (merchant_id, id, type, payment_id, created_at, body, one_shot)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		ev.MerchantID, ev.ID, string(ev.Type), ev.Payment.ID, ev.CreatedAt, string(ev.Body), o.OneShot); err != nil {
		return nil, err
	}
	return insertDeliveries(ctx, tx, ev.MerchantID, ev.ID, 1, o.Deliveries)
}

func insertDeliveries(ctx context.Context, tx pgx.Tx, merchantID, eventID string, round int, dels []paymock.Delivery) ([]int64, error) {
	ids := make([]int64, 0, len(dels))
	for i, d := range dels {
		var chain, next any
		if d.Chain != "" {
			chain = d.Chain
		}
		if d.State == paymock.DeliveryPending {
			next = ceilMicro(d.NextAt)
		}
		fault, err := faultJSON(d.Fault)
		if err != nil {
			return nil, err
		}
		window, err := faultJSON(d.Window)
		if err != nil {
			return nil, err
		}
		var id int64
		err = tx.QueryRow(ctx, `INSERT INTO webhook_deliveries (merchant_id, event_id, round, position, endpoint_id,
				url, secret, chain, state, error, next_at, fault, window_fault)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING id`,
			merchantID, eventID, round, i, d.EndpointID, d.URL, d.Secret, chain, string(d.State), d.Error,
			next, fault, window).Scan(&id)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, nil
}

func faultJSON(f *paymock.WebhookFault) (any, error) {
	if f == nil {
		return nil, nil
	}
	b, err := json.Marshal(f)
	if err != nil {
		return nil, fmt.Errorf("encoding a webhook fault: %w", err)
	}
	return string(b), nil
}

// nextRound reads, in a transaction holding the event's lock, the
// event's next round number and the merchant's pending deliveries counted
// up to $3: the count stops there, so a merchant far past the limit costs
// no more to refuse than one at it. A partial index of the pending
// deliveries led by the merchant serves it (webhook_deliveries_chain or
// _merchant_due: TestAddRound_PendingCountReadsAtMostTheLimit). A $3 of 0
// counts nothing.
const nextRound = `SELECT
	(SELECT coalesce(max(round), 0) + 1 FROM webhook_deliveries WHERE merchant_id = $1 AND event_id = $2),
	(SELECT count(*) FROM (SELECT FROM webhook_deliveries WHERE merchant_id = $1 AND state = 'pending' LIMIT $3) p)`

// AddRound implements paymock.Outbox. The limit is checked after the
// event's lock, so rounds of one event see each other; rounds of
// different events of the merchant running at the same moment count from
// their own snapshots, so they may pass the limit by at most their number
// less one (each by its round's size). An exact cap would need every
// redelivery of the merchant to queue on one lock, for a refusal that
// only bounds growth.
func (s *Store) AddRound(ctx context.Context, merchantID, eventID string, dels []paymock.Delivery, limit int) ([]int64, error) {
	if !storable(eventID) {
		return nil, fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
	}
	var ids []int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		// Locking the event serialises rounds of it, so each gets its own
		// number.
		var one int
		err := tx.QueryRow(ctx, `SELECT 1 FROM webhook_events WHERE merchant_id = $1 AND id = $2 FOR UPDATE`,
			merchantID, eventID).Scan(&one)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var round, pending int
		if err := tx.QueryRow(ctx, nextRound, merchantID, eventID, max(limit, 0)).Scan(&round, &pending); err != nil {
			return err
		}
		if limit > 0 && pending >= limit {
			return fmt.Errorf("event %s: %d deliveries pending: %w", eventID, pending, paymock.ErrLimitReached)
		}
		ids, err = insertDeliveries(ctx, tx, merchantID, eventID, round, dels)
		return err
	})
	if errors.Is(err, paymock.ErrNotFound) || errors.Is(err, paymock.ErrLimitReached) {
		return nil, err
	}
	if err != nil {
		return nil, check("redelivering event "+eventID, err)
	}
	return ids, nil
}

// deliveryColumns are what readDelivery scans, from d (the deliveries) and
// e (their event).
const deliveryColumns = `d.id, d.merchant_id, d.event_id, e.type, e.payment_id, e.body, e.one_shot, d.round, d.position,
	d.endpoint_id, d.url, d.secret, coalesce(d.chain, ''), d.state, d.error, d.attempts, d.sends, d.next_at,
	d.claimed_until, d.fault, d.window_fault`

func readDelivery(row pgx.CollectableRow) (paymock.Delivery, error) {
	var (
		d                     paymock.Delivery
		typ, state, body      string
		attempts, fault, wfjs []byte
		next, claimed         *time.Time
	)
	err := row.Scan(&d.ID, &d.MerchantID, &d.EventID, &typ, &d.PaymentID, &body, &d.OneShot, &d.Round, &d.Position,
		&d.EndpointID, &d.URL, &d.Secret, &d.Chain, &state, &d.Error, &attempts, &d.Sends, &next, &claimed, &fault, &wfjs)
	if err != nil {
		return d, err
	}
	d.EventType, d.State, d.Body = paymock.EventType(typ), paymock.DeliveryState(state), json.RawMessage(body)
	if next != nil {
		d.NextAt = next.UTC()
	}
	if claimed != nil {
		d.ClaimedUntil = claimed.UTC()
	}
	if err := json.Unmarshal(attempts, &d.Attempts); err != nil {
		return d, fmt.Errorf("reading the attempts of delivery %d: %w", d.ID, err)
	}
	if d.Fault, err = readFault(fault); err != nil {
		return d, err
	}
	d.Window, err = readFault(wfjs)
	return d, err
}

func readFault(b []byte) (*paymock.WebhookFault, error) {
	if b == nil {
		return nil, nil
	}
	var f paymock.WebhookFault
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("reading a webhook fault: %w", err)
	}
	return &f, nil
}

// Round implements paymock.Outbox.
func (s *Store) Round(ctx context.Context, merchantID, eventID string, round int) ([]paymock.Delivery, error) {
	if !storable(eventID) {
		return nil, fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
		JOIN webhook_events e ON e.merchant_id = d.merchant_id AND e.id = d.event_id
		WHERE d.merchant_id = $1 AND d.event_id = $2 AND d.round = $3 ORDER BY d.position`, merchantID, eventID, round)
	if err != nil {
		return nil, check("reading event "+eventID, err)
	}
	dels, err := pgx.CollectRows(rows, readDelivery)
	if err != nil {
		return nil, check("reading event "+eventID, err)
	}
	if len(dels) == 0 {
		_, ok, err := s.Event(ctx, merchantID, eventID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("event %s: %w", eventID, paymock.ErrNotFound)
		}
	}
	return dels, nil
}

// dueOrder sorts due deliveries as they are sent: by due instant, then in
// the order made, except that a reorder window sends what it holds newest
// first.
const dueOrder = `d.next_at, CASE WHEN d.window_fault IS NULL THEN d.id ELSE -d.id END`

// headOfChain keeps, of the pending deliveries of one chain, the first.
const headOfChain = `NOT EXISTS (SELECT 1 FROM webhook_deliveries b
	WHERE b.merchant_id = d.merchant_id AND b.chain = d.chain AND b.state = 'pending' AND b.id < d.id)`

// Claim implements paymock.Outbox: FOR UPDATE SKIP LOCKED, so that
// senders claiming at once never get the same delivery, and a lease, so
// that one a dead replica held is claimed again once it lapses.
func (s *Store) Claim(ctx context.Context, c paymock.Claim) ([]paymock.Delivery, error) {
	if c.Lease <= 0 || c.Limit <= 0 || c.MerchantID == "" {
		return nil, fmt.Errorf("claim: a merchant, a positive lease (%s) and a positive limit (%d) are needed", c.Lease, c.Limit)
	}
	// Due instants are stored rounded up to PostgreSQL's microseconds
	// (ceilMicro); an instant they are compared with is rounded up too,
	// or a clock with nanoseconds would never reach what it scheduled.
	args := []any{c.Now, c.Limit, c.MerchantID, ceilMicro(c.Until)}
	which := `TRUE`
	if c.IDs != nil {
		which = `d.id = ANY($5)`
		args = append(args, c.IDs)
	}
	var ids []int64
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT d.id, d.url, d.window_fault IS NOT NULL AND d.sends = 0 FROM webhook_deliveries d
			WHERE d.merchant_id = $3 AND d.state = 'pending' AND (d.claimed_until IS NULL OR d.claimed_until <= $1)
				AND d.next_at <= $4 AND `+which+` AND `+headOfChain+`
				AND NOT (d.window_fault IS NOT NULL AND d.sends = 0 AND `+windowBusy+`)
			ORDER BY `+dueOrder+`
			LIMIT $2
			FOR UPDATE OF d SKIP LOCKED`, args...)
		if err != nil {
			return err
		}
		// Of a window's unsent deliveries to one endpoint, the first
		// only: the next is claimed once it has been sent.
		windows := map[string]bool{}
		for rows.Next() {
			var (
				id       int64
				url      string
				windowed bool
			)
			if err := rows.Scan(&id, &url, &windowed); err != nil {
				rows.Close()
				return err
			}
			if windowed {
				if windows[url] {
					continue
				}
				windows[url] = true
			}
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(ids) == 0 {
			return nil
		}
		_, err = tx.Exec(ctx, `UPDATE webhook_deliveries SET claimed_until = $2 WHERE id = ANY($1)`, ids,
			ceilMicro(c.Now.Add(c.Lease)))
		return err
	})
	if err != nil {
		return nil, check("claiming due deliveries", err)
	}
	if len(ids) == 0 {
		return nil, nil
	}
	return s.deliveries(ctx, `d.id = ANY($1)`, ids)
}

// windowBusy holds back an unsent delivery of a reorder window while
// another to the same endpoint is claimed, so that the window sends one
// after the other.
const windowBusy = `EXISTS (SELECT 1 FROM webhook_deliveries w
	WHERE w.merchant_id = d.merchant_id AND w.url = d.url AND w.state = 'pending' AND w.sends = 0
		AND w.window_fault IS NOT NULL AND w.claimed_until > $1)`

// DueMerchants implements paymock.Outbox: real clocks only, since a frozen
// one moves when advanced, and its advance claims what fell due.
func (s *Store) DueMerchants(ctx context.Context, now time.Time, base time.Duration, limit int) ([]string, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("due merchants: limit %d must be positive", limit)
	}
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT d.merchant_id FROM webhook_deliveries d
		LEFT JOIN clocks c ON c.merchant_id = d.merchant_id
		WHERE d.state = 'pending' AND coalesce(c.mode, 'real') = 'real'
			AND d.next_at <= $1::timestamptz + (coalesce(c.offset_ns, $2::bigint) / 1000) * interval '1 microsecond'
		ORDER BY d.merchant_id LIMIT $3`, now, int64(base), limit)
	if err != nil {
		return nil, check("listing merchants with due deliveries", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, check("listing merchants with due deliveries", err)
	}
	return ids, nil
}

// DueDeliveries implements paymock.Outbox.
func (s *Store) DueDeliveries(ctx context.Context, merchantID string, until time.Time, limit int) ([]paymock.Delivery, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("due deliveries: limit %d must be positive", limit)
	}
	rows, err := s.pool.Query(ctx, `SELECT d.id FROM webhook_deliveries d
		WHERE d.merchant_id = $1 AND d.state = 'pending' AND d.next_at <= $2 AND `+headOfChain+`
		ORDER BY `+dueOrder+` LIMIT $3`, merchantID, ceilMicro(until), limit)
	if err != nil {
		return nil, check("listing due deliveries", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, check("listing due deliveries", err)
	}
	return s.deliveries(ctx, `d.id = ANY($1)`, ids)
}

// deliveries reads the deliveries where says, in due order.
func (s *Store) deliveries(ctx context.Context, where string, args ...any) ([]paymock.Delivery, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
		JOIN webhook_events e ON e.merchant_id = d.merchant_id AND e.id = d.event_id
		WHERE `+where, args...)
	if err != nil {
		return nil, check("reading deliveries", err)
	}
	dels, err := pgx.CollectRows(rows, readDelivery)
	if err != nil {
		return nil, check("reading deliveries", err)
	}
	key := func(d paymock.Delivery) int64 {
		if d.Window != nil {
			return -d.ID
		}
		return d.ID
	}
	slices.SortFunc(dels, func(a, b paymock.Delivery) int {
		if c := a.NextAt.Compare(b.NextAt); c != 0 {
			return c
		}
		return cmp.Compare(key(a), key(b))
	})
	return dels, nil
}

// Attempted implements paymock.Outbox. Only the claim that made the
// attempt records it: one that lapsed and was taken again is the other
// replica's to record.
func (s *Store) Attempted(ctx context.Context, del paymock.Delivery, u paymock.Outcome) error {
	attempts, err := json.Marshal(u.Attempts)
	if err != nil {
		return fmt.Errorf("encoding attempts: %w", err)
	}
	if u.Attempts == nil {
		attempts = []byte("[]")
	}
	var next any
	if u.State == paymock.DeliveryPending {
		next = ceilMicro(u.NextAt)
	}
	_, err = s.pool.Exec(ctx, `UPDATE webhook_deliveries
		SET attempts = attempts || $3::jsonb, sends = $4, state = $5, error = $6, next_at = $7, claimed_until = NULL
		WHERE id = $1 AND claimed_until = $2`,
		del.ID, del.ClaimedUntil, string(attempts), u.Sends, string(u.State), u.Error, next)
	if err != nil {
		return check("recording a webhook attempt", err)
	}
	return nil
}

// Release implements paymock.Outbox.
func (s *Store) Release(ctx context.Context, del paymock.Delivery) error {
	_, err := s.pool.Exec(ctx, `UPDATE webhook_deliveries SET claimed_until = NULL WHERE id = $1 AND claimed_until = $2`,
		del.ID, del.ClaimedUntil)
	if err != nil {
		return check("releasing a webhook claim", err)
	}
	return nil
}

// Window implements paymock.Outbox: the window is the latest pending
// delivery to that endpoint held by a reorder window still open.
func (s *Store) Window(ctx context.Context, merchantID, endpointURL string, now time.Time) (time.Time, *paymock.WebhookFault, error) {
	var (
		closes time.Time
		fault  []byte
	)
	err := s.pool.QueryRow(ctx, `SELECT next_at, window_fault FROM webhook_deliveries
		WHERE merchant_id = $1 AND url = $2 AND state = 'pending' AND sends = 0
			AND window_fault IS NOT NULL AND next_at > $3
		ORDER BY next_at DESC LIMIT 1`, merchantID, endpointURL, now).Scan(&closes, &fault)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, nil, nil
	}
	if err != nil {
		return time.Time{}, nil, check("reading reorder windows", err)
	}
	f, err := readFault(fault)
	return closes.UTC(), f, err
}

// Events implements paymock.Outbox.
func (s *Store) Events(ctx context.Context, merchantID string, offset, limit int) ([]paymock.EventRecord, int, error) {
	var total int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_events WHERE merchant_id = $1`, merchantID).
		Scan(&total); err != nil {
		return nil, 0, check("counting events", err)
	}
	lim := any(nil)
	if limit > 0 {
		lim = limit
	}
	recs, err := s.eventRecords(ctx, `SELECT id, type, payment_id, created_at, body FROM webhook_events
		WHERE merchant_id = $1 ORDER BY seq DESC OFFSET $2 LIMIT $3`, merchantID, offset, lim)
	return recs, total, err
}

// Event implements paymock.Outbox.
func (s *Store) Event(ctx context.Context, merchantID, eventID string) (paymock.EventRecord, bool, error) {
	if !storable(eventID) {
		return paymock.EventRecord{}, false, nil
	}
	recs, err := s.eventRecords(ctx, `SELECT id, type, payment_id, created_at, body FROM webhook_events
		WHERE merchant_id = $1 AND id = $2`, merchantID, eventID)
	if err != nil || len(recs) == 0 {
		return paymock.EventRecord{}, false, err
	}
	return recs[0], true, nil
}

// eventRecords reads the events query selects (its $1 is the merchant),
// with their deliveries.
func (s *Store) eventRecords(ctx context.Context, query string, args ...any) ([]paymock.EventRecord, error) {
	rows, err := s.pool.Query(ctx, query, args...)
	if err != nil {
		return nil, check("reading events", err)
	}
	recs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (paymock.EventRecord, error) {
		var (
			r         paymock.EventRecord
			typ, body string
			created   time.Time
		)
		err := row.Scan(&r.ID, &typ, &r.PaymentID, &created, &body)
		r.Type, r.CreatedAt, r.Payload = paymock.EventType(typ), paymock.FormatTime(created.UTC()), json.RawMessage(body)
		r.Deliveries = []paymock.DeliveryRecord{}
		return r, err
	})
	if err != nil {
		return nil, check("reading events", err)
	}
	if len(recs) == 0 {
		return recs, nil
	}
	ids := make([]string, len(recs))
	at := make(map[string]int, len(recs))
	for i, r := range recs {
		ids[i], at[r.ID] = r.ID, i
	}
	dels, err := s.deliveries(ctx, `d.merchant_id = $1 AND d.event_id = ANY($2)`, args[0], ids)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(dels, func(a, b paymock.Delivery) int {
		if c := cmp.Compare(a.Round, b.Round); c != 0 {
			return c
		}
		return cmp.Compare(a.Position, b.Position)
	})
	for _, d := range dels {
		i := at[d.EventID]
		recs[i].Deliveries = append(recs[i].Deliveries, d.Record())
	}
	return recs, nil
}

// EndpointDeliveries implements paymock.Outbox: newest event first, and
// within an event the latest round first.
func (s *Store) EndpointDeliveries(ctx context.Context, merchantID, endpointID string, offset, limit int) ([]paymock.EndpointDeliveryRecord, int, error) {
	var total int
	if err := s.pool.QueryRow(ctx, `SELECT count(*) FROM webhook_deliveries WHERE merchant_id = $1 AND endpoint_id = $2`,
		merchantID, endpointID).Scan(&total); err != nil {
		return nil, 0, check("counting deliveries", err)
	}
	lim := any(nil)
	if limit > 0 {
		lim = limit
	}
	rows, err := s.pool.Query(ctx, `SELECT d.id FROM webhook_deliveries d
		JOIN webhook_events e ON e.merchant_id = d.merchant_id AND e.id = d.event_id
		WHERE d.merchant_id = $1 AND d.endpoint_id = $2
		ORDER BY e.seq DESC, d.round DESC OFFSET $3 LIMIT $4`, merchantID, endpointID, offset, lim)
	if err != nil {
		return nil, 0, check("listing deliveries", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, 0, check("listing deliveries", err)
	}
	dels, err := s.deliveries(ctx, `d.id = ANY($1)`, ids)
	if err != nil {
		return nil, 0, err
	}
	place := make(map[int64]int, len(ids))
	for i, id := range ids {
		place[id] = i
	}
	out := make([]paymock.EndpointDeliveryRecord, len(dels))
	for _, d := range dels {
		out[place[d.ID]] = paymock.EndpointDeliveryRecord{EventID: d.EventID, EventType: d.EventType,
			PaymentID: d.PaymentID, DeliveryRecord: d.Record()}
	}
	return out, total, nil
}

// Claimed implements paymock.Outbox.
func (s *Store) Claimed(ctx context.Context, merchantID string, now time.Time) (bool, error) {
	var claimed bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_deliveries
		WHERE merchant_id = $1 AND state = 'pending' AND claimed_until > $2)`, merchantID, now).Scan(&claimed)
	if err != nil {
		return false, check("looking for sends under way", err)
	}
	return claimed, nil
}

// Pending implements paymock.Outbox.
func (s *Store) Pending(ctx context.Context, merchantID string) (bool, error) {
	var pending bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM webhook_deliveries
		WHERE merchant_id = $1 AND state = 'pending')`, merchantID).Scan(&pending)
	if err != nil {
		return true, check("looking for pending deliveries", err)
	}
	return pending, nil
}

// ResetEvents implements paymock.Outbox; the deliveries go with their
// events.
func (s *Store) ResetEvents(ctx context.Context, merchantID string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM webhook_events WHERE merchant_id = $1`, merchantID); err != nil {
		return check("resetting the events of "+merchantID, err)
	}
	return nil
}

// TrimEvents implements paymock.Outbox: what is older than the newest
// events it keeps goes, with its deliveries, unless one is still pending.
func (s *Store) TrimEvents(ctx context.Context, merchantID string, keep paymock.KeepEvents) error {
	if keep.Events <= 0 || keep.Deliveries <= 0 {
		return fmt.Errorf("trim events: keep %d events and %d deliveries: both must be positive", keep.Events, keep.Deliveries)
	}
	// The events are locked first, skipping one a redelivery holds: its
	// new round is pending, though this statement could not see it yet.
	_, err := s.pool.Exec(ctx, `DELETE FROM webhook_events
		WHERE merchant_id = $1 AND id IN (SELECT e.id FROM webhook_events e
			WHERE e.merchant_id = $1 AND e.seq < (`+oldestKept+`)
				AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d
					WHERE d.merchant_id = e.merchant_id AND d.event_id = e.id AND d.state = 'pending')
			FOR UPDATE SKIP LOCKED)`, merchantID, keep.Events, keep.Deliveries)
	if err != nil {
		return check("trimming the events of "+merchantID, err)
	}
	return nil
}

// oldestKept is the seq of the oldest event a trim keeps: of the
// merchant's newest $2 events, newest first, those whose deliveries and
// the newer ones' number at most $3, and the newest whatever its own. It
// reads the newest $2 events and counts their deliveries on the index of
// an event's deliveries, so a trim costs the journal's bound, not what
// the merchant ever stored; NULL when the merchant has no event.
const oldestKept = `SELECT min(seq) FROM (
	SELECT n.seq, row_number() OVER newest AS place, sum(n.deliveries) OVER newest AS held
	FROM (SELECT k.seq, (SELECT count(*) FROM webhook_deliveries d WHERE d.merchant_id = k.merchant_id AND d.event_id = k.id) AS deliveries
		FROM webhook_events k WHERE k.merchant_id = $1 ORDER BY k.seq DESC LIMIT $2) n
	WINDOW newest AS (ORDER BY n.seq DESC)) w
	WHERE place = 1 OR held <= $3`
