// Unit tests of the request journal.

package mockserver

import (
	"fmt"
	"testing"
)

func TestJournal_IsBounded(t *testing.T) {
	j := newJournal(5)
	for i := range 12 {
		j.record("m", JournalEntry{ID: fmt.Sprint(i), Operation: "op", Status: 200}, false, true)
	}
	items, total := j.list("m", requestFilter{}, 0, 100)
	if total != 5 || len(items) != 5 || items[0].ID != "11" || items[4].ID != "7" {
		t.Errorf("ring holds %d (%d): %v", len(items), total, items)
	}
	if len(j.merchants["m"].ring) != 5 {
		t.Errorf("ring grew to %d", len(j.merchants["m"].ring))
	}
	// The counters still cover all twelve.
	if snap := j.snapshot("m"); snap.calls != 12 || snap.ops["op"].statuses[200] != 12 {
		t.Errorf("counters %+v", snap)
	}
}
