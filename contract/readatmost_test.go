// Tests that a request body is read exactly as io.ReadAll of a
// LimitReader reads it, in one allocation of its size when declared.

package contract

import (
	"bytes"
	"errors"
	"io"
	"net/http/httptest"
	"testing"
	"testing/iotest"
)

// readers hand the same bytes over in the ways a body may: whole, a byte
// at a time, half a buffer at a time, with the end together with the last
// bytes, and failing partway.
var readers = []struct {
	name string
	wrap func(data []byte) io.Reader
}{
	{"whole", func(d []byte) io.Reader { return bytes.NewReader(d) }},
	{"one byte", func(d []byte) io.Reader { return iotest.OneByteReader(bytes.NewReader(d)) }},
	{"half", func(d []byte) io.Reader { return iotest.HalfReader(bytes.NewReader(d)) }},
	{"end with data", func(d []byte) io.Reader { return iotest.DataErrReader(bytes.NewReader(d)) }},
	{"failing", func(d []byte) io.Reader {
		return io.MultiReader(bytes.NewReader(d), iotest.ErrReader(errors.New("connection reset")))
	}},
}

func sameReadAtMost(t *testing.T, data []byte, n, size int64) {
	t.Helper()
	for _, r := range readers {
		got, gotErr := readAtMost(r.wrap(data), n, size)
		want, wantErr := io.ReadAll(io.LimitReader(r.wrap(data), n))
		if !bytes.Equal(got, want) || (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("%s, %d bytes, n %d, size %d: read %q, %v; ReadAll reads %q, %v", r.name, len(data), n, size, got, gotErr, want, wantErr)
		}
	}
}

func FuzzReadAtMost_ReadsWhatReadAllReads(f *testing.F) {
	f.Add([]byte(`{"amount":10.50}`), int64(65537), int64(16))
	f.Add([]byte(`{"amount":10.50}`), int64(5), int64(16))
	f.Add(bytes.Repeat([]byte("x"), 1500), int64(1025), int64(-1))
	f.Add([]byte(`{}`), int64(3), int64(100)) // a declared size that is wrong
	f.Add([]byte(``), int64(1), int64(0))
	f.Fuzz(func(t *testing.T, data []byte, n, size int64) {
		if n < 0 || n > 1<<16 || size > 1<<16 {
			return
		}
		sameReadAtMost(t, data, n, size)
	})
}

func TestReadAtMost_OneAllocationOfTheDeclaredSize(t *testing.T) {
	body := []byte(jsonCreateBody)
	for _, tc := range []struct {
		name   string
		size   int64
		allocs float64
	}{
		{"declared", int64(len(body)), 1},
		{"unknown: ReadAll's 512 bytes, then room for more", -1, 2},
	} {
		sameReadAtMost(t, body, 65537, tc.size)
		r := bytes.NewReader(body)
		n := testing.AllocsPerRun(100, func() {
			r.Reset(body)
			if b, _ := readAtMost(r, 65537, tc.size); tc.size >= 0 && cap(b) != len(body)+1 {
				t.Fatalf("%s: a buffer of %d bytes for a body of %d", tc.name, cap(b), len(body))
			}
		})
		if n != tc.allocs {
			t.Errorf("%s: %v allocations, want %v", tc.name, n, tc.allocs)
		}
	}
	// And through ReadJSONBody, which a request's declared length sizes.
	r := httptest.NewRequest("POST", "/api/v1/payments", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	got, err := ReadJSONBody(r, 65536)
	if err != nil || !bytes.Equal(got, body) || cap(got) != len(body)+1 {
		t.Fatalf("ReadJSONBody: %d bytes in %d, %v", len(got), cap(got), err)
	}
}
