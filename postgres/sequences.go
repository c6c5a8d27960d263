// Each merchant's id sequence, one row per merchant.

package postgres

import "context"

// Next implements paymock.Sequences: one statement, atomic across
// replicas, so no two of them are handed the same number.
func (s *Store) Next(ctx context.Context, merchantID string) (uint64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `INSERT INTO id_sequences (merchant_id, next) VALUES ($1, 1)
		ON CONFLICT (merchant_id) DO UPDATE SET next = id_sequences.next + 1
		RETURNING next - 1`, merchantID).Scan(&n)
	if err != nil {
		return 0, check("numbering an id of "+merchantID, err)
	}
	return uint64(n), nil
}
