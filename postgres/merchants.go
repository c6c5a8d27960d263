// Run-time API keys, open-mode merchants and added webhook endpoints,
// shared by the replicas (paymock.MerchantStore, the merchant registry's
// records).

package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/paymock/paymock"
)

var _ paymock.MerchantStore = (*Store)(nil)

// Advisory lock classes (the first key of pg_advisory_xact_lock's
// two-key form) that serialise one merchant's adds, so that two replicas
// adding the last key or endpoint allowed cannot both succeed.
const (
	keysLockClass      int32 = 0x706b6579 // "pkey"
	endpointsLockClass int32 = 0x70657070 // "pepp"
)

// nsTime is a time kept as integer nanoseconds, in UTC.
func nsTime(ns int64) time.Time { return time.Unix(0, ns).UTC() }

func digestOf(b []byte) ([32]byte, error) {
	var d [32]byte
	if len(b) != len(d) {
		return d, fmt.Errorf("a stored key digest is %d bytes, want %d", len(b), len(d))
	}
	copy(d[:], b)
	return d, nil
}

const keyColumns = `digest, merchant_id, id, source, masked, created_ns, revoked_at IS NOT NULL`

func scanKey(row pgx.Row) (paymock.StoredKey, error) {
	var k paymock.StoredKey
	var digest []byte
	var source string
	var created int64
	if err := row.Scan(&digest, &k.MerchantID, &k.ID, &source, &k.Masked, &created, &k.Revoked); err != nil {
		return k, err
	}
	d, err := digestOf(digest)
	if err != nil {
		return k, err
	}
	k.Digest, k.Source, k.Created = d, paymock.KeySource(source), nsTime(created)
	return k, nil
}

// Key implements paymock.KeyStore.
func (s *Store) Key(ctx context.Context, digest [32]byte) (paymock.StoredKey, bool, error) {
	if k, ok := cached(s.changes, s.changes.keys, digest); ok {
		return k, true, nil
	}
	gen := s.changes.begin()
	k, err := scanKey(s.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys WHERE digest = $1`, digest[:]))
	if errors.Is(err, pgx.ErrNoRows) {
		return paymock.StoredKey{}, false, nil
	}
	if err != nil {
		return paymock.StoredKey{}, false, check("reading an api key", err)
	}
	// Only keys found are kept: an unknown one is looked up each time.
	put(s.changes, gen, s.changes.keys, digest, k)
	return k, true, nil
}

// OpenKey implements paymock.KeyStore.
func (s *Store) OpenKey(ctx context.Context, merchantID string) (paymock.StoredKey, bool, error) {
	if !storable(merchantID) {
		return paymock.StoredKey{}, false, nil
	}
	k, err := scanKey(s.pool.QueryRow(ctx, `SELECT `+keyColumns+` FROM api_keys
		WHERE merchant_id = $1 AND source = 'open'`, merchantID))
	if errors.Is(err, pgx.ErrNoRows) {
		return paymock.StoredKey{}, false, nil
	}
	if err != nil {
		return paymock.StoredKey{}, false, check("reading the merchant "+merchantID, err)
	}
	return k, true, nil
}

func checkSource(src paymock.KeySource) error {
	switch src {
	case paymock.KeyCreated, paymock.KeyOpen, paymock.KeyFromConfig:
		return nil
	}
	return fmt.Errorf("key source %q: want created, open or config", src)
}

// duplicate reports a unique violation: what ErrDuplicate means.
func duplicate(err error) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == "23505"
}

// AddKey implements paymock.KeyStore. With a limit, the merchant's adds
// are serialised by an advisory lock held to the end of the transaction,
// so that the count and the insert cannot interleave with another
// replica's.
func (s *Store) AddKey(ctx context.Context, k paymock.StoredKey, limit int) error {
	if err := checkSource(k.Source); err != nil {
		return err
	}
	if !storable(k.MerchantID) || !storable(k.ID) || !storable(k.Masked) {
		return fmt.Errorf("add api key: ids and masked form must be UTF-8 text without NUL")
	}
	var revokedAt *time.Time
	if k.Revoked {
		now := time.Now()
		revokedAt = &now
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if limit >= 0 {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, keysLockClass, k.MerchantID); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM api_keys
				WHERE merchant_id = $1 AND source = $2 AND revoked_at IS NULL`, k.MerchantID, string(k.Source)).Scan(&n); err != nil {
				return err
			}
			if n >= limit {
				return paymock.ErrLimitReached
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO api_keys (digest, merchant_id, id, source, masked, created_ns, revoked_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			k.Digest[:], k.MerchantID, k.ID, string(k.Source), k.Masked, k.Created.UnixNano(), revokedAt)
		return err
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, paymock.ErrLimitReached):
		return fmt.Errorf("add api key for %s: %w", k.MerchantID, err)
	case duplicate(err):
		return fmt.Errorf("add api key %s for %s: %w", k.ID, k.MerchantID, paymock.ErrDuplicate)
	}
	return check("adding an api key for "+k.MerchantID, err)
}

// Keys implements paymock.KeyStore.
func (s *Store) Keys(ctx context.Context, merchantID string) ([]paymock.StoredKey, error) {
	if !storable(merchantID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+keyColumns+` FROM api_keys
		WHERE merchant_id = $1 AND revoked_at IS NULL
		ORDER BY source = 'open' DESC, seq`, merchantID)
	if err != nil {
		return nil, check("listing the api keys of "+merchantID, err)
	}
	keys, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (paymock.StoredKey, error) { return scanKey(row) })
	if err != nil {
		return nil, check("listing the api keys of "+merchantID, err)
	}
	return keys, nil
}

// RevokeKey implements paymock.KeyStore. The revocation and the pruning
// of old revoked keys are one transaction.
func (s *Store) RevokeKey(ctx context.Context, merchantID, keyID string, keep int) (bool, error) {
	if !storable(merchantID) || !storable(keyID) {
		return false, nil
	}
	found := false
	err := s.changedIn(ctx, merchantID, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE api_keys SET revoked_at = now()
			WHERE merchant_id = $1 AND id = $2 AND revoked_at IS NULL`, merchantID, keyID)
		if err != nil || tag.RowsAffected() == 0 {
			return err
		}
		found = true
		_, err = tx.Exec(ctx, `DELETE FROM api_keys WHERE digest IN (
			SELECT digest FROM api_keys
			WHERE merchant_id = $1 AND source = 'created' AND revoked_at IS NOT NULL
			ORDER BY revoked_at DESC, seq DESC OFFSET $2)`, merchantID, int64(max(keep, 0)))
		return err
	})
	if err != nil {
		return false, check("revoking api key "+keyID, err)
	}
	return found, nil
}

// RevokedDigests implements paymock.KeyStore.
func (s *Store) RevokedDigests(ctx context.Context, source paymock.KeySource) ([][32]byte, error) {
	rows, err := s.pool.Query(ctx, `SELECT digest FROM api_keys WHERE source = $1 AND revoked_at IS NOT NULL`, string(source))
	if err != nil {
		return nil, check("listing revoked api keys", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) ([32]byte, error) {
		var b []byte
		if err := row.Scan(&b); err != nil {
			return [32]byte{}, err
		}
		return digestOf(b)
	})
	if err != nil {
		return nil, check("listing revoked api keys", err)
	}
	return out, nil
}

const endpointColumns = `merchant_id, id, url, secret, disabled, created_ns`

func scanEndpoint(row pgx.Row) (paymock.StoredEndpoint, error) {
	var e paymock.StoredEndpoint
	var created int64
	if err := row.Scan(&e.MerchantID, &e.ID, &e.URL, &e.Secret, &e.Disabled, &created); err != nil {
		return e, err
	}
	e.Created = nsTime(created)
	return e, nil
}

// AddEndpoint implements paymock.EndpointStore, serialising one merchant's
// adds as AddKey does.
func (s *Store) AddEndpoint(ctx context.Context, e paymock.StoredEndpoint, limit int) error {
	if !storable(e.MerchantID) || !storable(e.ID) || !storable(e.URL) || !storable(e.Secret) {
		return fmt.Errorf("add webhook endpoint: its fields must be UTF-8 text without NUL")
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if limit >= 0 {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, endpointsLockClass, e.MerchantID); err != nil {
				return err
			}
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM webhook_endpoints WHERE merchant_id = $1`, e.MerchantID).Scan(&n); err != nil {
				return err
			}
			if n >= limit {
				return paymock.ErrLimitReached
			}
		}
		_, err := tx.Exec(ctx, `INSERT INTO webhook_endpoints (merchant_id, id, url, secret, disabled, created_ns)
			VALUES ($1, $2, $3, $4, $5, $6)`, e.MerchantID, e.ID, e.URL, e.Secret, e.Disabled, e.Created.UnixNano())
		return err
	})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, paymock.ErrLimitReached):
		return fmt.Errorf("add webhook endpoint for %s: %w", e.MerchantID, err)
	case duplicate(err):
		return fmt.Errorf("add webhook endpoint %s for %s: %w", e.ID, e.MerchantID, paymock.ErrDuplicate)
	}
	return check("adding a webhook endpoint for "+e.MerchantID, err)
}

// Endpoints implements paymock.EndpointStore.
func (s *Store) Endpoints(ctx context.Context, merchantID string) ([]paymock.StoredEndpoint, error) {
	if !storable(merchantID) {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT `+endpointColumns+` FROM webhook_endpoints
		WHERE merchant_id = $1 ORDER BY seq`, merchantID)
	if err != nil {
		return nil, check("listing the webhook endpoints of "+merchantID, err)
	}
	eps, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (paymock.StoredEndpoint, error) { return scanEndpoint(row) })
	if err != nil {
		return nil, check("listing the webhook endpoints of "+merchantID, err)
	}
	return eps, nil
}

// SetEndpointDisabled implements paymock.EndpointStore.
func (s *Store) SetEndpointDisabled(ctx context.Context, merchantID, id string, disabled bool) (paymock.StoredEndpoint, bool, error) {
	if !storable(merchantID) || !storable(id) {
		return paymock.StoredEndpoint{}, false, nil
	}
	e, err := scanEndpoint(s.pool.QueryRow(ctx, `UPDATE webhook_endpoints SET disabled = $3
		WHERE merchant_id = $1 AND id = $2 RETURNING `+endpointColumns, merchantID, id, disabled))
	if errors.Is(err, pgx.ErrNoRows) {
		return paymock.StoredEndpoint{}, false, nil
	}
	if err != nil {
		return paymock.StoredEndpoint{}, false, check("changing webhook endpoint "+id, err)
	}
	return e, true, nil
}

// DeleteEndpoint implements paymock.EndpointStore.
func (s *Store) DeleteEndpoint(ctx context.Context, merchantID, id string) (bool, error) {
	if !storable(merchantID) || !storable(id) {
		return false, nil
	}
	tag, err := s.pool.Exec(ctx, `DELETE FROM webhook_endpoints WHERE merchant_id = $1 AND id = $2`, merchantID, id)
	if err != nil {
		return false, check("deleting webhook endpoint "+id, err)
	}
	return tag.RowsAffected() > 0, nil
}

// ReleaseMerchant implements paymock.MerchantStore. It keeps everything:
// the replica that forgot an idle merchant is one of several, and another
// may be serving it; its token coming back is the same merchant again.
func (s *Store) ReleaseMerchant(context.Context, string) error { return nil }
