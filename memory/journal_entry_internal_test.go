// The journal entry's fast reading of its time, against time.Parse.

package memory

import (
	"testing"
	"time"

	"github.com/paymock/paymock"
)

// FuzzPlainAtSeconds_ReadsWhatTimeParseReads: whatever the fast form
// reads, time.Parse reads as the same second and FormatTime writes back
// as the same string, so an entry stored in seconds decodes to its time;
// and a time of the server's own writing is never left to time.Parse.
func FuzzPlainAtSeconds_ReadsWhatTimeParseReads(f *testing.F) {
	for _, s := range []string{"2026-03-14T15:09:26Z", "2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "1000-01-01T00:00:00Z",
		"0999-12-31T23:59:59Z", "9999-12-31T23:59:59Z", "2026-04-31T12:00:00Z", "2026-13-01T00:00:00Z", "2026-01-01T24:00:00Z",
		"2026-01-01T23:60:00Z", "2026-01-01T23:59:60Z", "2026-01-01 23:59:59Z", "2026-01-01T23:59:59+00:00", "2026-1-01T23:59:59Z"} {
		f.Add(s, int64(0))
	}
	f.Add("", int64(1773500966))
	f.Fuzz(func(t *testing.T, s string, unix int64) {
		if sec, ok := plainAtSeconds(s); ok {
			p, err := time.Parse(paymock.TimeLayout, s)
			if err != nil {
				t.Fatalf("plainAtSeconds(%q) = %d, but time.Parse: %v", s, sec, err)
			}
			if p.Unix() != sec || paymock.FormatTime(p) != s {
				t.Fatalf("plainAtSeconds(%q) = %d; time.Parse reads %d, written back %q", s, sec, p.Unix(), paymock.FormatTime(p))
			}
		}
		if unix >= -30610224000 && unix <= 253402300799 { // years 1000 to 9999
			w := paymock.FormatTime(time.Unix(unix, 0))
			if sec, ok := plainAtSeconds(w); !ok || sec != unix {
				t.Fatalf("plainAtSeconds(%q) = %d, %v: want %d", w, sec, ok, unix)
			}
		}
	})
}

// TestAppendEntry_TimesOutsideThePlainFormRoundTrip: an entry whose time
// the fast form leaves to time.Parse decodes to the very string appended.
func TestAppendEntry_TimesOutsideThePlainFormRoundTrip(t *testing.T) {
	for _, at := range []string{"2026-03-14T15:09:26Z", "0999-12-31T23:59:59Z", "2026-02-30T00:00:00Z", "2026-03-14T15:09:26+01:00", "not a time", ""} {
		e := paymock.JournalEntry{ID: "req_1", At: at, Method: "GET", Path: "/x", Status: 200, DurationMS: 0.5}
		if got := decodeEntry(string(appendEntry(nil, &e, 0, 0)), []string{""}); got.At != at {
			t.Errorf("At %q decoded as %q", at, got.At)
		}
	}
}

// TestPeekEntry_ReadsTheStatusAndViolationsDecodeReads: what a filtered
// list reads of every entry is what the entry decodes to, whichever
// short or long form each of its fields took.
func TestPeekEntry_ReadsTheStatusAndViolationsDecodeReads(t *testing.T) {
	v := paymock.Violation{Param: "amount", Code: "parameter_invalid", Message: "amount must be a number"}
	for _, e := range []paymock.JournalEntry{
		{ID: "req_1", At: "2026-03-14T15:09:26Z", Method: "GET", Path: "/api/v1/payments", Status: 200, DurationMS: 0.5},
		{ID: "req_2", At: "not a time", Method: "BREW", Path: "/x", Query: "a=b", Status: 400, DurationMS: 1.0000001,
			InjectedFault: "flt_1", InjectedBy: "header", Violations: []paymock.Violation{v, v, v}},
		{ID: "", Status: 0, DurationMS: -1},
		{ID: "req_4", Status: -32768, Violations: make([]paymock.Violation, 200)},
		{ID: "req_5", Status: 32767, DurationMS: 1e300},
	} {
		enc := string(appendEntry(nil, &e, 3, 129))
		status, violations := peekEntry(enc)
		got := decodeEntry(enc, make([]string, 130))
		if status != got.Status || violations != len(got.Violations) || status != e.Status || violations != len(e.Violations) {
			t.Errorf("%s: peeked status %d with %d violations; decoded %d with %d, appended %d with %d",
				e.ID, status, violations, got.Status, len(got.Violations), e.Status, len(e.Violations))
		}
	}
}

// BenchmarkEntryTime compares an entry's time read by the fast form with
// the time.Parse and FormatTime it replaces.
func BenchmarkEntryTime(b *testing.B) {
	e := paymock.JournalEntry{At: "2026-03-14T15:09:26Z"}
	b.ReportAllocs()
	b.Run("fast", func(b *testing.B) {
		for b.Loop() {
			plainAtSeconds(e.At)
		}
	})
	b.Run("time.Parse", func(b *testing.B) {
		for b.Loop() {
			t, err := time.Parse(paymock.TimeLayout, e.At)
			_ = err == nil && paymock.FormatTime(t) == e.At
		}
	})
}
