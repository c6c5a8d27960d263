// Money: currencies and amounts kept as integer minor units, so that no
// amount is ever rounded by floating point.

package paymock

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// Currency is an ISO 4217 code the service supports.
type Currency string

// The supported currencies; all four have two decimal places.
const (
	USD Currency = "USD"
	EUR Currency = "EUR"
	GBP Currency = "GBP"
	CAD Currency = "CAD"
)

// Currencies lists the supported currencies in the spec's order.
var Currencies = []Currency{USD, EUR, GBP, CAD}

// Valid reports whether c is a supported currency.
func (c Currency) Valid() bool {
	switch c {
	case USD, EUR, GBP, CAD:
		return true
	}
	return false
}

// MaxAmount is the largest amount accepted, in minor units (999999999.99).
const MaxAmount Amount = 99999999999

// Amount is money in minor units (cents).
type Amount int64

// Errors of ParseAmount, used as the reasons in violations.
var (
	ErrAmountNotNumber   = errors.New("must be a number")
	ErrAmountNotPositive = errors.New("must be greater than 0")
	ErrAmountTooLarge    = errors.New("must be at most 999999999.99")
	ErrAmountPrecision   = errors.New("must have at most two decimals")
)

// ParseAmount reads a decimal amount in major units ("10.5", "1e2") exactly.
// s must be a number in JSON's grammar.
func ParseAmount(s string) (Amount, error) {
	lead, ok := scanNumber(s)
	if !ok {
		return 0, ErrAmountNotNumber
	}
	switch {
	case lead == zeroNumber || s[0] == '-':
		return 0, ErrAmountNotPositive
	case lead > 10: // at least 1e10
		return 0, ErrAmountTooLarge
	case lead < -2: // below 0.001, above 0
		return 0, ErrAmountPrecision
	}
	if a, ok := plainAmount(s); ok {
		if a > MaxAmount {
			return 0, ErrAmountTooLarge
		}
		return a, nil
	}
	return exactAmount(s, lead)
}

// exactAmount reads any other form of an amount whose magnitude scanNumber
// bounded (lead in -2..10) in one pass over its digits, with no big
// arithmetic: trailing zeros cost nothing however many there are (exact
// rational arithmetic on 900,000 of them took two seconds), and a
// nonzero digit below the cents is a precision error wherever it is.
func exactAmount(s string, lead int64) (Amount, error) {
	mant := s
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant = s[:i]
	}
	// The significant digits: from the first nonzero to the last nonzero.
	first, last := -1, -1
	for i := 0; i < len(mant); i++ {
		if c := mant[i]; c >= '1' && c <= '9' {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	if first < 0 {
		return 0, ErrAmountNotPositive // not reached: scanNumber saw a nonzero digit
	}
	// The digits down to the cents, 10^(lead-1) to 10^-2: lead+2 of them
	// at most 12 (lead <= 10). Any significant digit past them is below a
	// cent; the last significant digit is nonzero, so there is one then.
	places, sig := lead+2, int64(0)
	var n int64
	for i := first; i <= last; i++ {
		if mant[i] == '.' {
			continue
		}
		if sig < places {
			n = n*10 + int64(mant[i]-'0')
		}
		sig++
	}
	below := sig > places
	for range places - min(sig, places) {
		n *= 10
	}
	// Too large outranks too precise: 999999999.991 is past the maximum.
	if Amount(n) > MaxAmount || Amount(n) == MaxAmount && below {
		return 0, ErrAmountTooLarge
	}
	if below {
		return 0, ErrAmountPrecision
	}
	return Amount(n), nil
}

// plainAmount reads the common form of an amount, up to 10 digits and
// at most 2 decimals (10.50), in cents without big.Rat. False is no
// verdict.
func plainAmount(s string) (Amount, bool) {
	whole, frac, dot := strings.Cut(s, ".")
	if len(whole) == 0 || len(whole) > 10 || dot && (len(frac) == 0 || len(frac) > 2) {
		return 0, false
	}
	var n int64
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return 0, false
			}
			n = n*10 + int64(part[i]-'0')
		}
	}
	for range 2 - len(frac) {
		n *= 10
	}
	return Amount(n), true
}

// zeroNumber is what scanNumber reports for a number whose digits are all 0.
const zeroNumber = math.MinInt64

// scanNumber checks s against the JSON number grammar and returns the
// decimal position of its first significant digit: the number lies in
// [10^(lead-1), 10^lead). Huge exponents saturate instead of overflowing.
func scanNumber(s string) (lead int64, ok bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	intStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intDigits := s[intStart:i]
	if intDigits == "" || len(intDigits) > 1 && intDigits[0] == '0' {
		return 0, false
	}
	var fracDigits string
	if i < len(s) && s[i] == '.' {
		i++
		fracStart := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if fracStart == i {
			return 0, false
		}
		fracDigits = s[fracStart:i]
	}
	var exp int64
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		neg := false
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			neg = s[i] == '-'
			i++
		}
		expStart := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			if exp < 1<<40 {
				exp = exp*10 + int64(s[i]-'0')
			}
			i++
		}
		if expStart == i {
			return 0, false
		}
		if neg {
			exp = -exp
		}
	}
	if i != len(s) {
		return 0, false
	}
	if t := strings.TrimLeft(intDigits, "0"); t != "" {
		return int64(len(t)) + exp, true
	}
	t := strings.TrimLeft(fracDigits, "0")
	if t == "" {
		return zeroNumber, true
	}
	return exp - int64(len(fracDigits)-len(t)), true
}

// String is the amount in major units with two decimals: "10.50".
func (a Amount) String() string {
	b := make([]byte, 0, 16)
	return string(a.AppendDecimal(b))
}

// AppendDecimal appends the amount as "units.cc" to b.
func (a Amount) AppendDecimal(b []byte) []byte {
	if a < 0 {
		b = append(b, '-')
		a = -a
	}
	b = strconv.AppendInt(b, int64(a/100), 10)
	cents := a % 100
	return append(b, '.', byte('0'+cents/10), byte('0'+cents%10))
}
