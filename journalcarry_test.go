// The context that offers a store call its request's journal entry.

package paymock_test

import (
	"context"
	"testing"

	"github.com/paymock/paymock"
)

type testCarry struct{ carried bool }

func (c *testCarry) JournalRecord() (string, paymock.JournalRecord) {
	return "acme", paymock.JournalRecord{}
}
func (c *testCarry) Carried() { c.carried = true }

type parentKey struct{}

func TestWithJournalCarry_OffersItsEntryAndKeepsItsParentsValues(t *testing.T) {
	parent := context.WithValue(t.Context(), parentKey{}, "kept")
	carry := &testCarry{}
	ctx := paymock.WithJournalCarry(parent, carry)
	if got := paymock.JournalCarryOf(ctx); got != carry {
		t.Errorf("JournalCarryOf = %v, want the offered entry", got)
	}
	if got := ctx.Value(parentKey{}); got != "kept" {
		t.Errorf("the parent's value = %v", got)
	}
	if got := paymock.JournalCarryOf(parent); got != nil {
		t.Errorf("a context offering nothing: %v", got)
	}
	// A context made from it offers the entry too, as a store's own
	// timeouts are.
	child, cancel := context.WithCancel(ctx)
	defer cancel()
	if got := paymock.JournalCarryOf(child); got != carry {
		t.Errorf("from a child context: %v", got)
	}
}
