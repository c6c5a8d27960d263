// Tests of when the request journal trims each merchant's journal.

package mockserver

import (
	"context"
	"fmt"
	"log/slog"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/everyn"
	"github.com/paymock/paymock/memory"
)

// trimWatch is a journal store that notes, per merchant, how many appends
// it holds beyond its last trim, and the most it ever held.
type trimWatch struct {
	paymock.JournalStore
	since, most map[string]int
}

func (w *trimWatch) AppendRequest(ctx context.Context, merchantID string, r paymock.JournalRecord) error {
	w.since[merchantID]++
	w.most[merchantID] = max(w.most[merchantID], w.since[merchantID])
	return w.JournalStore.AppendRequest(ctx, merchantID, r)
}

func (w *trimWatch) TrimRequests(ctx context.Context, merchantID string, keep int) error {
	w.since[merchantID] = 0
	return w.JournalStore.TrimRequests(ctx, merchantID, keep)
}

func TestJournal_TrimsEveryMerchantWithinTrimEveryAppends(t *testing.T) {
	const size, merchants, appends = 50, 3 * everyn.Slots, 8 // trimEvery(50) is 5
	every := trimEvery(size)
	w := &trimWatch{JournalStore: memory.NewJournal(), since: map[string]int{}, most: map[string]int{}}
	ctx, log := t.Context(), slog.New(slog.DiscardHandler)
	run := func() {
		j, err := newJournal(size, w)
		if err != nil {
			t.Fatal(err)
		}
		// Round robin, so that merchants sharing a slot take turns.
		for range appends {
			for m := range merchants {
				j.append(ctx, log, fmt.Sprintf("key_%012x", m), paymock.JournalRecord{Entry: paymock.JournalEntry{Status: 200}}, nil)
			}
		}
	}
	run()
	for id, most := range w.most {
		// The trim comes after the append that makes it due.
		if most > every {
			t.Fatalf("merchant %s had %d appends untrimmed; want at most %d", id, most, every)
		}
	}
	// A restarted replica trims what the last one left untrimmed at each
	// merchant's first append.
	clear(w.most)
	run()
	for id, most := range w.most {
		if most > every {
			t.Fatalf("after a restart, merchant %s had %d appends untrimmed; want at most %d", id, most, every)
		}
	}
}
