// Which answers replace the journal entry a store call carried.

package mockserver

import (
	"reflect"
	"testing"

	"github.com/paymock/paymock"
)

func TestSameRecord_IgnoresOnlyTheDuration(t *testing.T) {
	base := func() paymock.JournalRecord {
		return paymock.JournalRecord{Counted: true, Entry: paymock.JournalEntry{ID: "req_1", At: "2026-03-14T15:09:26Z",
			Method: "GET", Path: "/api/v1/payments/pay_1", Operation: "retrievePayment", Status: 200, DurationMS: 0.2}}
	}
	for _, tc := range []struct {
		name   string
		change func(r *paymock.JournalRecord)
		same   bool
	}{
		{"the duration", func(r *paymock.JournalRecord) { r.Entry.DurationMS = 3.5 }, true},
		{"the status", func(r *paymock.JournalRecord) { r.Entry.Status = 500 }, false},
		{"the variant", func(r *paymock.JournalRecord) { r.Entry.Variant = "amount=string" }, false},
		{"a violation", func(r *paymock.JournalRecord) {
			r.Entry.Violations = []paymock.Violation{{Code: "response_contract_violation"}}
		}, false},
		{"violating", func(r *paymock.JournalRecord) { r.Violating = true }, false},
		{"counted", func(r *paymock.JournalRecord) { r.Counted = false }, false},
		{"the fault", func(r *paymock.JournalRecord) { r.Entry.InjectedFault = "flt_1" }, false},
		{"the time", func(r *paymock.JournalRecord) { r.Entry.At = "2026-03-14T15:09:27Z" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := base(), base()
			tc.change(&b)
			if got := sameRecord(a, b); got != tc.same {
				t.Errorf("sameRecord with %s changed = %v, want %v", tc.name, got, tc.same)
			}
		})
	}
}

// TestSameRecord_ComparesEveryFieldOfTheEntry: sameRecord names the
// entry's fields one by one (a reflective comparison would run on every
// request); a field added to paymock.JournalEntry must be compared too.
func TestSameRecord_ComparesEveryFieldOfTheEntry(t *testing.T) {
	typ := reflect.TypeFor[paymock.JournalEntry]()
	for i := range typ.NumField() {
		f := typ.Field(i)
		var a, b paymock.JournalRecord
		v := reflect.ValueOf(&b.Entry).Elem().Field(i)
		switch v.Kind() {
		case reflect.String:
			v.SetString("x")
		case reflect.Int:
			v.SetInt(1)
		case reflect.Float64:
			v.SetFloat(1)
		case reflect.Slice:
			v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		default:
			t.Fatalf("field %s of kind %s: teach this test to change it", f.Name, v.Kind())
		}
		if got, want := sameRecord(a, b), f.Name == "DurationMS"; got != want {
			t.Errorf("sameRecord with %s changed = %v, want %v", f.Name, got, want)
		}
	}
}
