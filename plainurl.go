// The fast form of an http(s) URL of the plainest shape, which needs no
// parsing to be sure of: the contract's uri format and a create's
// redirect URLs both check every request's URLs.

package paymock

import "strings"

// PlainHTTPURL reports whether s is an http(s) URL of the plainest shape
// (a host of letters, digits, dots and dashes, an optional port, a path
// and a query of unreserved characters, sub-delimiters and percent
// escapes, no fragment, no percent sign in the path), which url.Parse always takes as absolute
// with a host and no user. False is no verdict: the caller parses.
func PlainHTTPURL(s string) bool {
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
		case query && c == '%' && i+2 < len(rest) && hexByte(rest[i+1]) && hexByte(rest[i+2]):
			i += 2
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

// URIChars reports whether every byte of s may stand in a URI (RFC 3986):
// unreserved characters, delimiters, and a percent sign only before two
// hex digits. url.Parse takes more (spaces, quotes, |, non-ASCII), which
// the contract's uri format, and every strict client, refuses.
func URIChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case pathByte(c), c == '?', c == '#', c == '[', c == ']':
		case c == '%' && i+2 < len(s) && hexByte(s[i+1]) && hexByte(s[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func hexByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
