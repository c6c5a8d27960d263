// Whole numbers in request bodies, in every form JSON allows for them.

package paymock

import (
	"encoding/json"
	"math"
	"math/big"
	"reflect"
)

// Whole is an integer field of a request body. JSON has one number type:
// 60, 60.0, 6e1 and 600e-1 are the same number, and the contract's check
// (JSON Schema's "integer") accepts each of them, so the decode does too.
// A number that is not whole, or outside int64, is a *json.UnmarshalTypeError,
// which encoding/json completes with the field's path for the 400 answer.
type Whole int64

// UnmarshalJSON reads any JSON number whose value is a whole number.
func (w *Whole) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil // as for any Go value: null leaves it alone
	}
	n, ok := ParseWhole(b)
	if !ok {
		return &json.UnmarshalTypeError{Value: "number " + clip(string(b), 40), Type: reflect.TypeFor[int64]()}
	}
	*w = Whole(n)
	return nil
}

// ParseWhole is the value of the JSON number literal b when it is a whole
// number within int64.
func ParseWhole(b []byte) (int64, bool) {
	if len(b) == 0 || (b[0] != '-' && (b[0] < '0' || b[0] > '9')) {
		return 0, false // a string, a bool or an object is not a number
	}
	// The common form first, without allocating.
	var n int64
	neg := b[0] == '-'
	digits := b
	if neg {
		digits = b[1:]
	}
	plain := len(digits) > 0 && len(digits) <= 18
	for _, c := range digits {
		if c < '0' || c > '9' {
			plain = false
			break
		}
		n = n*10 + int64(c-'0')
	}
	if plain {
		if neg {
			n = -n
		}
		return n, true
	}
	// A long exponent could make SetString build a huge number: anything
	// past 1e19 is out of range anyway.
	if len(b) > 64 {
		return 0, false
	}
	for i, c := range b {
		if (c == 'e' || c == 'E') && exponentTooLarge(b[i+1:]) {
			return 0, false
		}
	}
	r, ok := new(big.Rat).SetString(string(b))
	if !ok || !r.IsInt() || !r.Num().IsInt64() {
		return 0, false
	}
	v := r.Num().Int64()
	if v == math.MinInt64 && !neg {
		return 0, false
	}
	return v, true
}

// exponentTooLarge reports whether an exponent's digits exceed what any
// int64 could need (a mantissa of 64 digits with an exponent of ±100).
func exponentTooLarge(exp []byte) bool {
	if len(exp) > 0 && (exp[0] == '+' || exp[0] == '-') {
		exp = exp[1:]
	}
	return len(exp) > 3
}
