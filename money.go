// Money: currencies and amounts kept as integer minor units, so that no
// amount is ever rounded by floating point.
package paymock

import (
	"errors"
	"math/big"
	"strconv"
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
func ParseAmount(s string) (Amount, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok || s == "" {
		return 0, ErrAmountNotNumber
	}
	if r.Sign() <= 0 {
		return 0, ErrAmountNotPositive
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
