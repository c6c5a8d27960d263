// The request journal's locks: one merchant's book held leaves every
// other merchant's journal free, and a forgotten book is never written.

package memory

import (
	"context"
	"math"
	"testing"
	"unsafe"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/journaltest"
)

func TestJournal_OneMerchantsHeldBookLeavesOthersFree(t *testing.T) {
	j := NewJournal()
	ctx := t.Context()
	for _, m := range []string{"busy", "calm"} {
		if err := j.AppendRequest(ctx, m, journaltest.Record("req_1", "createPayment", 201)); err != nil {
			t.Fatal(err)
		}
	}
	ops := map[string]func(context.Context) error{
		"AppendRequest": func(ctx context.Context) error {
			return j.AppendRequest(ctx, "calm", journaltest.Record("req_2", "createPayment", 400))
		},
		"AppendRequest of a new merchant": func(ctx context.Context) error {
			return j.AppendRequest(ctx, "new", journaltest.Record("req_1", "listPayments", 200))
		},
		"ReplaceRequest": func(ctx context.Context) error {
			was := journaltest.Record("req_3", "createPayment", 201)
			if err := j.AppendRequest(ctx, "calm", was); err != nil {
				return err
			}
			return j.ReplaceRequest(ctx, "calm", was, journaltest.Record("req_3", "createPayment", 500))
		},
		"ListRequests": func(ctx context.Context) error {
			_, _, err := j.ListRequests(ctx, "calm", paymock.JournalQuery{Keep: 100, Status: 400, Limit: 10})
			return err
		},
		"CountRequests": func(ctx context.Context) error {
			_, err := j.CountRequests(ctx, "calm")
			return err
		},
		"TrimRequests": func(ctx context.Context) error { return j.TrimRequests(ctx, "calm", 1) },
		"ForgetRequests": func(ctx context.Context) error {
			return j.ForgetRequests(ctx, "new")
		},
	}
	held := j.book("busy", false)
	defer held.mu.Unlock()
	othersGoOn(t, ctx, ops)
}

func TestJournal_AnAppendWaitingOnAForgottenBookLandsInTheNewOne(t *testing.T) {
	j := NewJournal()
	ctx := t.Context()
	if err := j.AppendRequest(ctx, "acme", journaltest.Record("req_1", "createPayment", 201)); err != nil {
		t.Fatal(err)
	}
	// What ForgetRequests does, with the append waiting in between: the
	// append finds the book, waits for its lock, and gets it once the
	// book is out of the journal. (Were it slower, it finds no book and
	// makes one.)
	old := j.book("acme", false)
	done := make(chan error, 1)
	go func() { done <- j.AppendRequest(ctx, "acme", journaltest.Record("req_2", "createPayment", 201)) }()
	j.mu.Lock()
	delete(j.merchants, "acme")
	j.mu.Unlock()
	old.kill()
	old.mu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ids, _ := journaltest.IDs(t, j, "acme", paymock.JournalQuery{Keep: 10, Limit: 10})
	if len(ids) != 1 || ids[0] != "req_2" {
		t.Errorf("after the forget, acme lists %v; want the append made after it alone", ids)
	}
	if old.entries() != 1 {
		t.Errorf("the forgotten book holds %d entries; want its one from before", old.entries())
	}
}

// A merchant that made one request holds one book: at 48 bytes it stays
// in the allocator's 48-byte class (an idle open-mode merchant's whole
// cost is bounded near 512 bytes; the next class is 64).
func TestMerchantLog_FitsInFortyEightBytes(t *testing.T) {
	if n := unsafe.Sizeof(merchantLog{}); n > 48 {
		t.Errorf("merchantLog is %d bytes, want at most 48", n)
	}
}

func TestCountRecord_ACountStopsAtItsMostRatherThanWrapping(t *testing.T) {
	ml := &merchantLog{bound: -1}
	r := journaltest.Record("req_1", "createPayment", 201)
	r.Counted = true
	ml.countRecord(1, r, 1)
	ml.firstCall.calls = math.MaxInt32
	ml.countRecord(1, r, 1)
	if got := ml.firstCall.calls; got != math.MaxInt32 {
		t.Errorf("a count at its most went to %d", got)
	}
}
