// Card checks and masking: what is verified about a card number, and the
// only parts of a card that are ever kept.

package paymock

import "strings"

// Luhn reports whether the digits in number pass the Luhn checksum.
func Luhn(number string) bool {
	if len(number) < 2 {
		return false
	}
	sum := 0
	double := false
	for i := len(number) - 1; i >= 0; i-- {
		c := number[i]
		if c < '0' || c > '9' {
			return false
		}
		d := int(c - '0')
		if double {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

// CardBrand names the network of a card number from its leading digits.
func CardBrand(number string) string {
	hasPrefix := func(ps ...string) bool {
		for _, p := range ps {
			if strings.HasPrefix(number, p) {
				return true
			}
		}
		return false
	}
	prefixIn := func(n int, lo, hi int) bool {
		if len(number) < n {
			return false
		}
		v := 0
		for _, c := range number[:n] {
			v = v*10 + int(c-'0')
		}
		return v >= lo && v <= hi
	}
	switch {
	case hasPrefix("34", "37"):
		return "amex"
	case prefixIn(2, 51, 55) || prefixIn(4, 2221, 2720):
		return "mastercard"
	case hasPrefix("4"):
		return "visa"
	case hasPrefix("6011", "65") || prefixIn(3, 644, 649):
		return "discover"
	case hasPrefix("36", "38", "39") || prefixIn(3, 300, 305):
		return "diners"
	case prefixIn(4, 3528, 3589):
		return "jcb"
	case hasPrefix("62"):
		return "unionpay"
	}
	return "unknown"
}
