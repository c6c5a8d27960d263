// The fast form of an http(s) URL of the plainest shape, which needs no
// parsing to be sure of: the contract's uri format and a create's
// redirect URLs both check every request's URLs.

package paymock

import (
	"net/netip"
	"strings"
)

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

// AbsoluteURI reports whether s is an absolute URI with an authority by
// RFC 3986's grammar: a scheme, "//", a host (a registered name, an IPv4
// address, or an IPv6 address in brackets) with an optional user and
// port, then a path, a query and a fragment, each of the characters it
// may hold, and a percent sign only before two hex digits. url.Parse
// takes more (spaces, quotes, |, non-ASCII, a bracket or a second # in a
// path, a host "a]"), which the contract's uri format, and every strict
// client, refuses.
func AbsoluteURI(s string) bool {
	i := 0
	for i < len(s) && (isAlpha(s[i]) || i > 0 && ('0' <= s[i] && s[i] <= '9' || s[i] == '+' || s[i] == '-' || s[i] == '.')) {
		i++
	}
	if i == 0 || !strings.HasPrefix(s[i:], "://") {
		return false
	}
	rest := s[i+3:]
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	authority, rest := rest[:end], rest[end:]
	if at := strings.LastIndexByte(authority, '@'); at >= 0 {
		if !uriRun(authority[:at], ":") {
			return false
		}
		authority = authority[at+1:]
	}
	var port string
	if strings.HasPrefix(authority, "[") {
		closing := strings.IndexByte(authority, ']')
		if closing < 0 {
			return false
		}
		a, err := netip.ParseAddr(authority[1:closing])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return false
		}
		port = authority[closing+1:]
	} else {
		host := authority
		if colon := strings.IndexByte(authority, ':'); colon >= 0 {
			host, port = authority[:colon], authority[colon:]
		}
		if !uriRun(host, "") {
			return false
		}
	}
	if port != "" && (port[0] != ':' || !digits(port[1:], 0, len(port))) {
		return false
	}
	path, query, fragment := rest, "", ""
	if k := strings.IndexByte(rest, '#'); k >= 0 {
		path, fragment = rest[:k], rest[k+1:]
	}
	if k := strings.IndexByte(path, '?'); k >= 0 {
		path, query = path[:k], path[k+1:]
	}
	return uriRun(path, ":@/") && uriRun(query, ":@/?") && uriRun(fragment, ":@/?")
}

// uriRun reports whether s is unreserved characters, sub-delimiters,
// percent escapes and the bytes of extra (RFC 3986).
func uriRun(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case hostByte(c), strings.IndexByte("_~!$&'()*+,;=", c) >= 0, strings.IndexByte(extra, c) >= 0:
		case c == '%' && i+2 < len(s) && hexByte(s[i+1]) && hexByte(s[i+2]):
			i += 2
		default:
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }

func hexByte(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
