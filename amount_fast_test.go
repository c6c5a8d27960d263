// Tests that the fast form of ParseAmount reads what big.Rat reads.

package paymock

import (
	"math/big"
	"strings"
	"testing"
)

// ratAmount is ParseAmount's exact arithmetic alone, for a number its
// first checks have passed.
func ratAmount(s string) (Amount, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return 0, ErrAmountNotNumber
	}
	r.Mul(r, big.NewRat(100, 1))
	if r.Cmp(new(big.Rat).SetInt64(int64(MaxAmount))) > 0 {
		return 0, ErrAmountTooLarge
	}
	if !r.IsInt() {
		return 0, ErrAmountPrecision
	}
	return Amount(r.Num().Int64()), nil
}

func samePlainAmount(t *testing.T, s string) {
	t.Helper()
	a, ok := plainAmount(s)
	if !ok {
		return
	}
	want, err := ratAmount(s)
	if a > MaxAmount {
		if err != ErrAmountTooLarge {
			t.Fatalf("plainAmount(%q) = %d past the maximum; big.Rat: %d, %v", s, a, want, err)
		}
		return
	}
	if err != nil || want != a {
		t.Fatalf("plainAmount(%q) = %d; big.Rat: %d, %v", s, a, want, err)
	}
}

func TestPlainAmount_ReadsWhatBigRatReads(t *testing.T) {
	for _, s := range []string{"10.50", "10.5", "10", "0.01", "9999999999.99", "1.", ".5", "1.555", "1e2", "-1", "12a", "0000000001.00"} {
		samePlainAmount(t, s)
	}
	if a, ok := plainAmount("10.5"); !ok || a != 1050 {
		t.Fatalf("plainAmount(10.5) = %d, %v", a, ok)
	}
}

// FuzzPlainAmount_ReadsWhatBigRatReads compares the two readings of the
// same amount.
func FuzzPlainAmount_ReadsWhatBigRatReads(f *testing.F) {
	for _, s := range []string{"10.50", "0.5", "9999999999.99", "123"} {
		f.Add(s)
	}
	f.Fuzz(samePlainAmount)
}

// FuzzValidateMetadata_ShortNeedsNoCheck checks that the short cut of
// validateMetadata only skips what its full check would pass: the same
// object, padded past the short cut with whitespace, must pass in full.
func FuzzValidateMetadata_ShortNeedsNoCheck(f *testing.F) {
	for _, s := range []string{`{"k":"v"}`, `{"\u00e9\u00e9\u00e9\u00e9\u00e9":1}`, `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if len(raw) > min(MaxMetadataKeyLen, MaxMetadataValueLen, 4*MaxMetadataKeys) {
			return
		}
		padded := raw + strings.Repeat(" ", 600)
		if vs := validateMetadata([]byte(padded)); vs != nil {
			t.Fatalf("%q is short enough to skip, and its check finds %v", raw, vs)
		}
	})
}

// sameExactAmount compares ParseAmount with big.Rat's reading of any
// number ParseAmount's first checks let through to exact arithmetic.
func sameExactAmount(t *testing.T, s string) {
	t.Helper()
	lead, ok := scanNumber(s)
	if !ok || lead == zeroNumber || s[0] == '-' || lead > 10 || lead < -2 {
		return
	}
	got, gotErr := exactAmount(s, lead)
	want, wantErr := ratAmount(s)
	if got != want || gotErr != wantErr {
		t.Fatalf("exactAmount(%q) = %d, %v; big.Rat: %d, %v", s, got, gotErr, want, wantErr)
	}
}

func TestExactAmount_ReadsWhatBigRatReads(t *testing.T) {
	for _, s := range []string{"10.5", "1e2", "1000e-2", "1.005e2", "0.0001e2", "999999999.99", "999999999.991",
		"999999999.990000", "9.9999999999e8", "0.015", "0.005", "0.01", "1.2345678901e3", "123456789012e-2",
		"1234567890123e-3", "100000000000000000000e-20", "0.00000000000000000001e20", "5e-3", "1.10E+1"} {
		sameExactAmount(t, s)
	}
}

// FuzzExactAmount_ReadsWhatBigRatReads compares the digit reading of
// an amount with exact rational arithmetic.
func FuzzExactAmount_ReadsWhatBigRatReads(f *testing.F) {
	for _, s := range []string{"10.50", "1.005e2", "999999999.991", "100e-4", "0.00012e3"} {
		f.Add(s)
	}
	f.Fuzz(sameExactAmount)
}
