// Formats: the document-scoped string formats, with a fast form for the
// common shape of a URI that needs no parsing to be sure of.

package contract

import (
	"net/url"
	"strings"
)

func checkURI(s string) error {
	if plainURI(s) {
		return nil
	}
	if u, err := url.Parse(s); err != nil || !u.IsAbs() || u.Host == "" {
		return errNotURI
	}
	return nil
}

// plainURI reports whether s is an http(s) URL of the plainest shape (a
// host of letters, digits, dots and dashes, an optional port, a path and
// a query of unreserved characters and sub-delimiters, no fragment, no
// percent sign), which url.Parse always takes as absolute with a host.
// False is no verdict.
func plainURI(s string) bool {
	rest, ok := strings.CutPrefix(s, "https://")
	if !ok {
		if rest, ok = strings.CutPrefix(s, "http://"); !ok {
			return false
		}
	}
	i := 0
	for i < len(rest) && hostByte(rest[i]) {
		i++
	}
	if i == 0 {
		return false
	}
	if i < len(rest) && rest[i] == ':' {
		j := i + 1
		for j < len(rest) && j-i <= 5 && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if j == i+1 {
			return false
		}
		i = j
	}
	if i == len(rest) {
		return true
	}
	if rest[i] != '/' && rest[i] != '?' {
		return false
	}
	query := false
	for ; i < len(rest); i++ {
		c := rest[i]
		switch {
		case c == '?':
			query = true
		case pathByte(c):
		case query && c == '%':
		default:
			return false
		}
	}
	return true
}

// hostByte is a byte of a registered name that needs no escaping.
func hostByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '-'
}

// pathByte is a byte of a path or query that needs no escaping.
func pathByte(c byte) bool {
	if hostByte(c) {
		return true
	}
	switch c {
	case '_', '~', '/', '!', '$', '&', '\'', '(', ')', '*', '+', ',', ';', '=', ':', '@':
		return true
	}
	return false
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
