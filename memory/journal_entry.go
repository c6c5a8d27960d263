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
	t, err := time.Parse(paymock.TimeLayout, e.At)
	if err == nil && paymock.FormatTime(t) == e.At {
		flags |= atInSeconds
	}
	us := math.Round(e.DurationMS * 1000)
	if us >= 0 && us < 1<<53 && !math.Signbit(e.DurationMS) && paymock.JournalMillis(int64(us)) == e.DurationMS {
		flags |= durationInMicros
	}
	dst = append(dst, flags)
	if flags&atInSeconds != 0 {
		dst = binary.AppendVarint(dst, t.Unix())
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
