// The compact form of a journal entry in memory: one string of varints and
// length-prefixed strings, with no pointer for the collector to follow.

package memory

import (
	"encoding/binary"
	"math"
	"net/http"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/packed"
)

// The flags of an encoded entry: which of its fields take their short
// form.
const (
	atInSeconds byte = 1 << iota
	durationInMicros
)

// appendEntry encodes e: its strings as a length and bytes, then a flags
// byte, its time as seconds when the wire layout gives them back exactly,
// its method, operation and variant as numbers (op and variant), its
// duration as whole microseconds when they give back its float exactly,
// then its violations.
func appendEntry(dst []byte, e *paymock.JournalEntry, op, variant uint32) []byte {
	dst = packed.AppendString(dst, e.ID)
	var flags byte
	sec, ok := plainAtSeconds(e.At)
	if !ok {
		t, err := time.Parse(paymock.TimeLayout, e.At)
		ok = err == nil && paymock.FormatTime(t) == e.At
		sec = t.Unix()
	}
	if ok {
		flags |= atInSeconds
	}
	us := math.Round(e.DurationMS * 1000)
	if us >= 0 && us < 1<<53 && !math.Signbit(e.DurationMS) && paymock.JournalMillis(int64(us)) == e.DurationMS {
		flags |= durationInMicros
	}
	dst = append(dst, flags)
	if flags&atInSeconds != 0 {
		dst = binary.AppendVarint(dst, sec)
	} else {
		dst = packed.AppendString(dst, e.At)
	}
	dst = appendMethod(dst, e.Method)
	for _, s := range [...]string{e.Path, e.Query, e.InjectedFault, e.InjectedBy} {
		dst = packed.AppendString(dst, s)
	}
	dst = binary.AppendUvarint(dst, uint64(op))
	dst = binary.AppendUvarint(dst, uint64(variant))
	dst = binary.AppendVarint(dst, int64(e.Status))
	if flags&durationInMicros != 0 {
		dst = binary.AppendUvarint(dst, uint64(us))
	} else {
		dst = binary.LittleEndian.AppendUint64(dst, math.Float64bits(e.DurationMS))
	}
	dst = binary.AppendUvarint(dst, uint64(len(e.Violations)))
	for _, v := range e.Violations {
		dst = packed.AppendString(dst, v.Param)
		dst = packed.AppendString(dst, v.Code)
		dst = packed.AppendString(dst, v.Message)
	}
	return dst
}

// plainAtSeconds reads a time of the wire layout with a year from 1000
// on, as the server writes every entry's, digit by digit: the seconds
// time.Parse reads, and FormatTime gives it back
// (FuzzPlainAtSeconds_ReadsWhatTimeParseReads). Anything else is false,
// for time.Parse to judge; a parse and a format cost most of an append.
func plainAtSeconds(s string) (int64, bool) {
	const layout = "dddd-dd-ddTdd:dd:ddZ"
	if len(s) != len(layout) {
		return 0, false
	}
	for i := range len(layout) {
		if c := s[i]; layout[i] == 'd' && (c < '0' || c > '9') || layout[i] != 'd' && c != layout[i] {
			return 0, false
		}
	}
	num := func(i, n int) int {
		v := 0
		for _, c := range []byte(s[i : i+n]) {
			v = v*10 + int(c-'0')
		}
		return v
	}
	year, month, day := num(0, 4), num(5, 2), num(8, 2)
	hour, minute, second := num(11, 2), num(14, 2), num(17, 2)
	if year < 1000 || month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59 {
		return 0, false
	}
	t := time.Date(year, time.Month(month), day, hour, minute, second, 0, time.UTC)
	if t.Day() != day { // past the month's last day
		return 0, false
	}
	return t.Unix(), true
}

// methods are the methods an entry names by number; 0 is any other, spelt
// out.
func methods() [8]string {
	return [...]string{1: http.MethodGet, 2: http.MethodPost, 3: http.MethodHead, 4: http.MethodPut,
		5: http.MethodPatch, 6: http.MethodDelete, 7: http.MethodOptions}
}

func appendMethod(dst []byte, m string) []byte {
	for i, known := range methods() {
		if i > 0 && known == m {
			return append(dst, byte(i))
		}
	}
	return packed.AppendString(append(dst, 0), m)
}

func (r *entryReader) method() string {
	if c := r.Byte(); c != 0 {
		return methods()[c]
	}
	return r.String()
}

// entryReader reads an encoded entry; the strings it returns are pieces of
// the entry's own string, which nothing changes, so they cost nothing.
type entryReader struct{ packed.Reader }

// decodeEntry reads an entry of appendEntry; names are the journal's.
func decodeEntry(enc string, names []string) paymock.JournalEntry {
	r := entryReader{packed.Reader{S: enc}}
	e := paymock.JournalEntry{ID: r.String()}
	flags := r.Byte()
	if flags&atInSeconds != 0 {
		e.At = paymock.FormatTime(time.Unix(r.Varint(), 0))
	} else {
		e.At = r.String()
	}
	e.Method = r.method()
	e.Path, e.Query, e.InjectedFault, e.InjectedBy = r.String(), r.String(), r.String(), r.String()
	e.Operation, e.Variant = names[r.Uvarint()], names[r.Uvarint()]
	e.Status = int(r.Varint())
	if flags&durationInMicros != 0 {
		e.DurationMS = paymock.JournalMillis(int64(r.Uvarint()))
	} else {
		e.DurationMS = math.Float64frombits(binary.LittleEndian.Uint64([]byte(r.S[r.I : r.I+8])))
		r.I += 8
	}
	if n := int(r.Uvarint()); n > 0 {
		e.Violations = make([]paymock.Violation, n)
		for k := range e.Violations {
			e.Violations[k] = paymock.Violation{Param: r.String(), Code: r.String(), Message: r.String()}
		}
	}
	return e
}

// peekEntry reads of an entry of appendEntry only what a list filters on,
// its status and how many violations it lists, without a string made:
// a filtered list reads every entry of the journal this way, and decodes
// only those of its page.
func peekEntry(enc string) (status, violations int) {
	r := entryReader{packed.Reader{S: enc}}
	r.skip() // id
	flags := r.Byte()
	if flags&atInSeconds != 0 {
		r.Varint()
	} else {
		r.skip()
	}
	if r.Byte() == 0 { // a method spelt out
		r.skip()
	}
	for range 4 { // path, query, injected fault and by
		r.skip()
	}
	r.Uvarint() // operation
	r.Uvarint() // variant
	status = int(r.Varint())
	if flags&durationInMicros != 0 {
		r.Uvarint()
	} else {
		r.I += 8
	}
	return status, int(r.Uvarint())
}

// skip passes over a string written by packed.AppendString.
func (r *entryReader) skip() { r.I += int(r.Uvarint()) }
