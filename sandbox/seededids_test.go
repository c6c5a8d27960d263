// Seeded ids per merchant (issue 21): with --seed a merchant's ids are
// reproducible for it whatever other merchants do, no other merchant can
// compute them, and replicas or restarts on one database never repeat one.

package sandbox

import (
	"fmt"
	"slices"
	"testing"

	"github.com/paymock/paymock/internal/pgtest"
)

const (
	seededA = "sk_test_seeded_merchant_a"
	seededB = "sk_test_seeded_merchant_b"
)

// creates makes n payments for key, each for a new customer (buyer<first>,
// buyer<first+1>, ...), and returns their ids and their customers' ids.
func creates(env *testEnv, key string, first, n int) []string {
	var ids []string
	for i := range n {
		id := env.create(key, func(b map[string]any) {
			b["customer"].(map[string]any)["email"] = fmt.Sprintf("buyer%d@example.com", first+i)
		})
		p := env.get(key, id)
		ids = append(ids, id, p["customer"].(map[string]any)["id"].(string))
	}
	return ids
}

func TestSeededIDs_AMerchantsIDsAreItsOwnWhateverOthersDo(t *testing.T) {
	alone := creates(newEnv(t, withSeed(7)), seededA, 0, 3)

	env := newEnv(t, withSeed(7))
	var mixed, others []string
	for i := range 3 {
		others = append(others, creates(env, seededB, 2*i, 2)...)
		mixed = append(mixed, creates(env, seededA, i, 1)...)
	}
	if !slices.Equal(alone, mixed) {
		t.Errorf("b's creates changed a's ids:\nalone %v\nmixed %v", alone, mixed)
	}
	for _, id := range others {
		if slices.Contains(alone, id) {
			t.Errorf("b was given a's id %s", id)
		}
	}
	// b's first payment is what a would get at the same place in its
	// sequence were ids the seed's alone: it is not a's.
	if others[0] == alone[0] {
		t.Errorf("a and b drew the same first id %s", alone[0])
	}
}

func TestSeededIDs_ReplicasAndRestartsOnOneDatabaseNeverRepeatAnID(t *testing.T) {
	url := pgtest.URL(t)
	envs := replicaEnvsOn(t, url, 2, withSeed(7))
	seen := make(map[string]bool)
	note := func(ids []string) {
		for _, id := range ids {
			if seen[id] {
				t.Fatalf("id %s drawn twice", id)
			}
			seen[id] = true
		}
	}
	note(creates(envs[0], seededA, 0, 2))
	note(creates(envs[1], seededA, 2, 2))
	// A replica started again with the same seed, on the same database.
	note(creates(replicaEnvsOn(t, url, 1, withSeed(7))[0], seededA, 4, 2))
}
