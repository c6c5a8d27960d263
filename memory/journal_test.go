// The conformance suite of the request journal, what forgetting a merchant
// drops, and the cost of an append, on the memory backend.

package memory_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/journaltest"
	"github.com/paymock/paymock/memory"
)

func TestJournal_Conformance(t *testing.T) {
	journaltest.Run(t, func(*testing.T) paymock.JournalStore { return memory.NewJournal() })
}

func TestJournal_ForgetDropsTheMerchantsJournalAndCounts(t *testing.T) {
	j := memory.NewJournal()
	rec := paymock.JournalRecord{Entry: paymock.JournalEntry{ID: "req_1", Operation: "createPayment", Status: 201}, Counted: true}
	if err := j.AppendRequest(t.Context(), "acme", rec); err != nil {
		t.Fatal(err)
	}
	if err := j.ForgetRequests(t.Context(), "acme"); err != nil {
		t.Fatal(err)
	}
	items, total, err := j.ListRequests(t.Context(), "acme", paymock.JournalQuery{Keep: 10, Limit: 10})
	if err != nil || len(items) != 0 || total != 0 {
		t.Errorf("after forgetting: %v (%d), %v", items, total, err)
	}
	if c, err := j.CountRequests(t.Context(), "acme"); err != nil || len(c.Calls) != 0 {
		t.Errorf("after forgetting counts %+v, %v", c, err)
	}
}

// BenchmarkJournal_Append is the cost the journal adds to each request on
// the memory backend: one entry into a full ring and the counts.
func BenchmarkJournal_Append(b *testing.B) {
	const size = 10000
	j := memory.NewJournal()
	ctx := context.Background()
	rec := paymock.JournalRecord{Entry: paymock.JournalEntry{ID: "req_0123456789abcdef", At: "2026-03-14T15:09:26Z", Method: "POST",
		Path: "/api/v1/payments", Operation: "createPayment", Status: 201, DurationMS: 0.125, Variant: "default"}, Counted: true}
	for range size {
		_ = j.AppendRequest(ctx, "m", rec)
	}
	_ = j.TrimRequests(ctx, "m", size)
	b.ReportAllocs()
	for b.Loop() {
		_ = j.AppendRequest(ctx, "m", rec)
	}
}

// BenchmarkJournal_FilteredList is a filter over a full journal of refused
// creates that matches none: what a merchant's own requests wait for,
// since the scan holds its book.
func BenchmarkJournal_FilteredList(b *testing.B) {
	const size = 10000
	j := memory.NewJournal()
	ctx := context.Background()
	rec := paymock.JournalRecord{Entry: paymock.JournalEntry{ID: "req_0123456789abcdef", At: "2026-03-14T15:09:26Z", Method: "POST",
		Path: "/api/v1/payments", Operation: "createPayment", Status: 400, DurationMS: 0.125}, Counted: true, Violating: true}
	for k := range 51 {
		rec.Entry.Violations = append(rec.Entry.Violations, paymock.Violation{Param: fmt.Sprintf("%d_%0150d", k, 0),
			Code: "parameter_unknown", Message: fmt.Sprintf("%d_%0150d is not a known field", k, 0)})
	}
	for range size {
		_ = j.AppendRequest(ctx, "m", rec)
	}
	_ = j.TrimRequests(ctx, "m", size)
	b.ReportAllocs()
	for b.Loop() {
		_, _, _ = j.ListRequests(ctx, "m", paymock.JournalQuery{Keep: size, Status: 201, Limit: 1})
	}
}
