// Formats: the document-scoped string formats, with a fast form for the
// common shape of a URI that needs no parsing to be sure of
// (paymock.PlainHTTPURL) and of a date-time.

package contract

import (
	"net/url"

	"github.com/paymock/paymock"
)

func checkURI(s string) error {
	if paymock.PlainHTTPURL(s) {
		return nil
	}
	if !paymock.AbsoluteURI(s) {
		return errNotURI
	}
	if u, err := url.Parse(s); err != nil || !u.IsAbs() || u.Host == "" {
		return errNotURI
	}
	return nil
}

// plainDateTime reports whether s is a UTC time to the second, in the
// form paymock writes (2026-11-24T04:00:00Z), with every field in range,
// which kin's date-time format (openapi3.FormatOfStringDateTime) always
// takes. False is no verdict.
func plainDateTime(s string) bool {
	if len(s) != 20 || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' || s[19] != 'Z' {
		return false
	}
	num := func(i int) int {
		a, b := s[i], s[i+1]
		if a < '0' || a > '9' || b < '0' || b > '9' {
			return -1
		}
		return int(a-'0')*10 + int(b-'0')
	}
	year, month, day := num(0), num(5), num(8)
	hour, minute, second := num(11), num(14), num(17)
	return year >= 0 && num(2) >= 0 && month >= 1 && month <= 12 && day >= 1 && day <= 31 &&
		hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 59
}
