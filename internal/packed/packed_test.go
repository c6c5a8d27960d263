// Packed files read back what was written.

package packed_test

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/paymock/paymock/internal/packed"
)

func TestReader_ReadsBackWhatWasWritten(t *testing.T) {
	ints := []int64{0, 1, -1, 63, -64, 300, math.MaxInt64, math.MinInt64}
	uints := []uint64{0, 127, 128, 16383, 16384, math.MaxUint64}
	strs := []string{"", "a", "héllo", string(make([]byte, 300))}
	var b []byte
	for _, v := range ints {
		b = binary.AppendVarint(b, v)
	}
	for _, v := range uints {
		b = binary.AppendUvarint(b, v)
	}
	for _, s := range strs {
		b = packed.AppendString(b, s)
	}
	b = append(b, 0xfe)
	r := packed.Reader{S: string(b)}
	for _, want := range ints {
		if got := r.Varint(); got != want {
			t.Errorf("varint %d, want %d", got, want)
		}
	}
	for _, want := range uints {
		if got := r.Uvarint(); got != want {
			t.Errorf("uvarint %d, want %d", got, want)
		}
	}
	for _, want := range strs {
		if got := r.String(); got != want {
			t.Errorf("string %q, want %q", got, want)
		}
	}
	if got := r.Byte(); got != 0xfe || r.I != len(b) {
		t.Errorf("byte %x at %d of %d", got, r.I, len(b))
	}
}
