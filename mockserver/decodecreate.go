// The create body read by hand in its plain shape, since every create
// decodes one; anything else goes to encoding/json, which stays the judge
// (FuzzDecodeCreate_ReadsWhatEncodingJSONReads).

package mockserver

import (
	"encoding/json"

	"github.com/paymock/paymock"
)

// decodeCreate reads body into req exactly as decodeJSON would, for a
// body of valid JSON (the chain checked it) in the plain shape: an object
// of the create fields under their exact names, each at most once, with
// strings of printable ASCII without escapes, numbers where numbers are
// due and an object for metadata. False, with req left as it was, sends
// the body to decodeJSON: a payment method, a null, a key in another case
// or unknown, a number that is not whole, an escape.
func decodeCreate(body []byte, req *paymock.CreateRequest) bool {
	var out paymock.CreateRequest
	d := plainReader{b: body}
	var seen uint16
	ok := d.object(func(key []byte) bool {
		bit, field := createKey(key)
		if bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		return field(&d, &out)
	})
	if !ok || d.space() != len(body) {
		return false
	}
	*req = out
	return true
}

// createKey is the field of a create body key and its reader, by its
// exact name: 0 for any other.
func createKey(key []byte) (uint16, func(*plainReader, *paymock.CreateRequest) bool) {
	switch string(key) {
	case "amount":
		return 1 << 0, func(d *plainReader, r *paymock.CreateRequest) bool {
			n, ok := d.number()
			r.Amount = json.Number(n)
			return ok
		}
	case "currency":
		return 1 << 1, func(d *plainReader, r *paymock.CreateRequest) bool {
			s, ok := d.str()
			r.Currency = paymock.Currency(s)
			return ok
		}
	case "customer":
		return 1 << 2, func(d *plainReader, r *paymock.CreateRequest) bool {
			c := &paymock.CustomerInput{}
			r.Customer = c
			var seen uint8
			return d.object(func(key []byte) bool {
				var ok bool
				switch string(key) {
				case "email":
					if seen&1 != 0 {
						return false
					}
					seen |= 1
					c.Email, ok = d.str()
				case "name":
					if seen&2 != 0 {
						return false
					}
					seen |= 2
					c.Name, ok = d.str()
				}
				return ok
			})
		}
	case "description":
		return 1 << 3, func(d *plainReader, r *paymock.CreateRequest) bool {
			var ok bool
			r.Description, ok = d.str()
			return ok
		}
	case "expires_in":
		return 1 << 4, func(d *plainReader, r *paymock.CreateRequest) bool {
			var ok bool
			r.ExpiresIn, ok = d.whole()
			return ok
		}
	case "metadata":
		return 1 << 5, func(d *plainReader, r *paymock.CreateRequest) bool {
			raw, ok := d.rawObject()
			r.Metadata = raw
			return ok
		}
	case "success_url":
		return 1 << 6, func(d *plainReader, r *paymock.CreateRequest) bool {
			var ok bool
			r.SuccessURL, ok = d.str()
			return ok
		}
	case "cancel_url":
		return 1 << 7, func(d *plainReader, r *paymock.CreateRequest) bool {
			var ok bool
			r.CancelURL, ok = d.str()
			return ok
		}
	case "mcc":
		return 1 << 8, func(d *plainReader, r *paymock.CreateRequest) bool {
			var ok bool
			r.MCC, ok = d.whole()
			return ok
		}
	case "account_id":
		return 1 << 9, func(d *plainReader, r *paymock.CreateRequest) bool {
			s, ok := d.str()
			r.AccountID = &s
			return ok
		}
	}
	return 0, nil
}

// plainReader reads the plain shape of a JSON body known to be valid.
type plainReader struct {
	b []byte
	i int
}

func (d *plainReader) space() int {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\n' || d.b[d.i] == '\r') {
		d.i++
	}
	return d.i
}

// object reads an object, handing each key (a plain string) to member,
// which reads its value.
func (d *plainReader) object(member func(key []byte) bool) bool {
	if d.space() >= len(d.b) || d.b[d.i] != '{' {
		return false
	}
	d.i++
	if d.space() < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return true
	}
	for {
		key, ok := d.plain()
		if !ok || d.space() >= len(d.b) || d.b[d.i] != ':' {
			return false
		}
		d.i++
		d.space()
		if !member(key) {
			return false
		}
		if d.space() >= len(d.b) {
			return false
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.space()
		case '}':
			d.i++
			return true
		default:
			return false
		}
	}
}

// plain reads a string of printable ASCII without escapes: its bytes
// are what encoding/json decodes it to.
func (d *plainReader) plain() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	start := d.i + 1
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return d.b[start:j], true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, false
		}
	}
	return nil, false
}

func (d *plainReader) str() (string, bool) {
	s, ok := d.plain()
	return string(s), ok
}

// number reads a number literal as json.Number keeps it.
func (d *plainReader) number() (string, bool) {
	n := d.literal()
	return string(n), len(n) > 0
}

// literal reads the bytes of a number literal (none where there is
// another value).
func (d *plainReader) literal() []byte {
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if (c < '0' || c > '9') && c != '-' && c != '+' && c != '.' && c != 'e' && c != 'E' {
			break
		}
		d.i++
	}
	return d.b[start:d.i]
}

// whole reads a number literal whose value is a whole number within
// int64, as paymock.Whole does.
func (d *plainReader) whole() (*paymock.Whole, bool) {
	v, ok := paymock.ParseWhole(d.literal())
	if !ok {
		return nil, false
	}
	w := paymock.Whole(v)
	return &w, true
}

// rawObject reads an object as json.RawMessage keeps it: its bytes, in a
// copy of their own. The body is valid JSON, so matching the brackets
// outside strings finds its end.
func (d *plainReader) rawObject() (json.RawMessage, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return nil, false
	}
	start, depth, inString := d.i, 0, false
	for ; d.i < len(d.b); d.i++ {
		c := d.b[d.i]
		switch {
		case inString:
			if c == '\\' {
				d.i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			depth--
			if depth == 0 {
				d.i++
				return append(json.RawMessage(nil), d.b[start:d.i]...), true
			}
		}
	}
	return nil, false
}
