// Amounts and currencies: parsing, exactness and the wire form.

package paymock

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAmount(t *testing.T) {
	tests := []struct {
		in      string
		want    Amount
		wantErr error
	}{
		// Accepted.
		{"10", 1000, nil},
		{"1", 100, nil},
		{"10.5", 1050, nil},
		{"10.50", 1050, nil},
		{"10.500", 1050, nil}, // the value has two decimals
		{"0.01", 1, nil},
		{"0.10", 10, nil},
		{"1e2", 10000, nil},
		{"1E2", 10000, nil},
		{"1e+2", 10000, nil},
		{"1000e-2", 1000, nil},
		{"1.005e2", 10050, nil},
		{"0.0001e2", 1, nil},
		{"999999999.99", MaxAmount, nil},
		{"999999999.990000", MaxAmount, nil},
		{"9.9999999999e8", MaxAmount, nil},

		// Not positive.
		{"0", 0, ErrAmountNotPositive},
		{"0.00", 0, ErrAmountNotPositive},
		{"0e5", 0, ErrAmountNotPositive},
		{"-0", 0, ErrAmountNotPositive},
		{"-1", 0, ErrAmountNotPositive},
		{"-0.001", 0, ErrAmountNotPositive},
		{"-1e1000001", 0, ErrAmountNotPositive},

		// Too many decimals.
		{"0.001", 0, ErrAmountPrecision},
		{"10.505", 0, ErrAmountPrecision},
		{"1.00501e2", 0, ErrAmountPrecision},
		{"1e-3", 0, ErrAmountPrecision},
		{"1e-400", 0, ErrAmountPrecision},
		{"1e-1000001", 0, ErrAmountPrecision},
		{"0.0000000000000000000001", 0, ErrAmountPrecision},

		// Too large.
		{"1000000000", 0, ErrAmountTooLarge},
		{"1000000000.00", 0, ErrAmountTooLarge},
		{"999999999.991", 0, ErrAmountTooLarge},
		{"1e9", 0, ErrAmountTooLarge},
		{"1e10", 0, ErrAmountTooLarge},
		{"1e400", 0, ErrAmountTooLarge},
		{"1e1000001", 0, ErrAmountTooLarge}, // a number, just far too large
		{"9223372036854775808", 0, ErrAmountTooLarge},

		// Not a number in JSON's grammar.
		{"", 0, ErrAmountNotNumber},
		{"ten", 0, ErrAmountNotNumber},
		{"10,50", 0, ErrAmountNotNumber},
		{"$10", 0, ErrAmountNotNumber},
		{"10 ", 0, ErrAmountNotNumber},
		{" 10", 0, ErrAmountNotNumber},
		{"1/2", 0, ErrAmountNotNumber},
		{"0x10", 0, ErrAmountNotNumber},
		{"1_000", 0, ErrAmountNotNumber},
		{"+5", 0, ErrAmountNotNumber},
		{"010", 0, ErrAmountNotNumber},
		{".5", 0, ErrAmountNotNumber},
		{"5.", 0, ErrAmountNotNumber},
		{"1e", 0, ErrAmountNotNumber},
		{"1e+", 0, ErrAmountNotNumber},
		{"-", 0, ErrAmountNotNumber},
		{"--1", 0, ErrAmountNotNumber},
		{"NaN", 0, ErrAmountNotNumber},
		{"Inf", 0, ErrAmountNotNumber},
		{"1.2.3", 0, ErrAmountNotNumber},
		{"\"10\"", 0, ErrAmountNotNumber},
	}
	for _, tc := range tests {
		got, err := ParseAmount(tc.in)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("ParseAmount(%q) error = %v, want %v", tc.in, err, tc.wantErr)
			continue
		}
		if got != tc.want {
			t.Errorf("ParseAmount(%q) = %d, want %d", tc.in, got, tc.want)
		}
	}
}

func TestParseAmount_LongInputsStayExact(t *testing.T) {
	// Many digits, but a value inside the bounds: exact arithmetic, no
	// float rounding either way.
	tests := []struct {
		in      string
		want    Amount
		wantErr error
	}{
		{"12.34" + strings.Repeat("0", 5000), 1234, nil},
		{"12.34" + strings.Repeat("0", 5000) + "1", 0, ErrAmountPrecision},
		{"0." + strings.Repeat("0", 5000) + "1e4999", 1, nil},
		{"1" + strings.Repeat("0", 5000) + "e-5000", 100, nil},
		{"1" + strings.Repeat("0", 5000), 0, ErrAmountTooLarge},
		// 900,000 digits, as a tenant sent: read in one pass, not by
		// rational arithmetic whose cost grew with their square.
		{"1." + strings.Repeat("0", 900_000), 100, nil},
		{"1." + strings.Repeat("0", 900_000) + "1", 0, ErrAmountPrecision},
		{"999999999.99" + strings.Repeat("0", 900_000) + "1", 0, ErrAmountTooLarge},
		{"1" + strings.Repeat("0", 900_000) + "e-900000", 100, nil},
	}
	for _, tc := range tests {
		got, err := ParseAmount(tc.in)
		if !errors.Is(err, tc.wantErr) || got != tc.want {
			t.Errorf("ParseAmount(%.20q...) = %d, %v; want %d, %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestAmount_String(t *testing.T) {
	tests := []struct {
		a    Amount
		want string
	}{
		{0, "0.00"},
		{1, "0.01"},
		{5, "0.05"},
		{10, "0.10"},
		{99, "0.99"},
		{100, "1.00"},
		{1050, "10.50"},
		{1005, "10.05"},
		{123400, "1234.00"},
		{MaxAmount, "999999999.99"},
		{-5, "-0.05"},
		{-1050, "-10.50"},
	}
	for _, tc := range tests {
		if got := tc.a.String(); got != tc.want {
			t.Errorf("Amount(%d).String() = %q, want %q", int64(tc.a), got, tc.want)
		}
		if got := string(tc.a.AppendDecimal([]byte("x="))); got != "x="+tc.want {
			t.Errorf("Amount(%d).AppendDecimal(\"x=\") = %q, want %q", int64(tc.a), got, "x="+tc.want)
		}
	}
}

func TestAmount_StringRoundTripsThroughParseAmount(t *testing.T) {
	for _, a := range []Amount{1, 9, 10, 99, 100, 101, 1050, 123456, MaxAmount - 1, MaxAmount} {
		got, err := ParseAmount(a.String())
		if err != nil || got != a {
			t.Errorf("ParseAmount(%q) = %d, %v; want %d", a.String(), got, err, a)
		}
	}
}

func TestCurrency_Valid(t *testing.T) {
	for _, tc := range []struct {
		c    Currency
		want bool
	}{
		{USD, true}, {EUR, true}, {GBP, true}, {CAD, true},
		{"", false}, {"usd", false}, {"JPY", false}, {"USD ", false}, {"AUD", false},
	} {
		if got := tc.c.Valid(); got != tc.want {
			t.Errorf("Currency(%q).Valid() = %v, want %v", tc.c, got, tc.want)
		}
	}
	if want := []Currency{USD, EUR, GBP, CAD}; len(Currencies) != len(want) {
		t.Fatalf("Currencies = %v, want %v", Currencies, want)
	}
	for i, c := range []Currency{USD, EUR, GBP, CAD} {
		if Currencies[i] != c {
			t.Errorf("Currencies[%d] = %q, want %q (spec order)", i, Currencies[i], c)
		}
	}
}
