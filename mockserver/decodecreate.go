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
//
// Every create decodes one, so it allocates little: its strings are cut
// from one copy of the body (a plain string's bytes are what it decodes
// to), and what the request points to shares one allocation.
func decodeCreate(body []byte, req *paymock.CreateRequest) bool {
	var out paymock.CreateRequest
	d := plainReader{b: body}
	var seen uint16
	ok := d.object(func(key []byte) bool {
		bit := createKey(key)
		if bit == 0 || seen&bit != 0 {
			return false
		}
		seen |= bit
		return d.createField(bit, &out)
	})
	if !ok || d.space() != len(body) {
		return false
	}
	*req = out
	return true
}

// The create body's fields, each a bit of the set decodeCreate has read.
const (
	fieldAmount uint16 = 1 << iota
	fieldCurrency
	fieldCustomer
	fieldDescription
	fieldExpiresIn
	fieldMetadata
	fieldSuccessURL
	fieldCancelURL
	fieldMCC
	fieldAccountID
)

// createKey is the field of a create body key by its exact name: 0 for
// any other.
func createKey(key []byte) uint16 {
	switch string(key) {
	case "amount":
		return fieldAmount
	case "currency":
		return fieldCurrency
	case "customer":
		return fieldCustomer
	case "description":
		return fieldDescription
	case "expires_in":
		return fieldExpiresIn
	case "metadata":
		return fieldMetadata
	case "success_url":
		return fieldSuccessURL
	case "cancel_url":
		return fieldCancelURL
	case "mcc":
		return fieldMCC
	case "account_id":
		return fieldAccountID
	}
	return 0
}

// createField reads the value of one field into r. A method with a
// switch, not a reader per field held in a func value: a call through a
// func value makes the reader and the request escape to the heap.
func (d *plainReader) createField(field uint16, r *paymock.CreateRequest) bool {
	var ok bool
	switch field {
	case fieldAmount:
		var n string
		n, ok = d.number()
		r.Amount = json.Number(n)
	case fieldCurrency:
		var s string
		s, ok = d.str()
		r.Currency = paymock.Currency(s)
	case fieldCustomer:
		c := &d.parts().customer
		r.Customer = c
		var seen uint8
		ok = d.object(func(key []byte) bool {
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
	case fieldDescription:
		r.Description, ok = d.str()
	case fieldExpiresIn:
		r.ExpiresIn, ok = d.whole(&d.parts().expiresIn)
	case fieldMetadata:
		r.Metadata, ok = d.rawObject()
	case fieldSuccessURL:
		r.SuccessURL, ok = d.str()
	case fieldCancelURL:
		r.CancelURL, ok = d.str()
	case fieldMCC:
		r.MCC, ok = d.whole(&d.parts().mcc)
	case fieldAccountID:
		a := &d.parts().accountID
		*a, ok = d.str()
		r.AccountID = a
	}
	return ok
}

// createParts is what a create request read by hand points to, in one
// allocation rather than one each.
type createParts struct {
	customer       paymock.CustomerInput
	expiresIn, mcc paymock.Whole
	accountID      string
}

// plainReader reads the plain shape of a JSON body known to be valid.
type plainReader struct {
	b []byte
	i int
	// s is b as a string, made at the first string read: every string
	// read is cut from it.
	s string
	p *createParts
}

func (d *plainReader) parts() *createParts {
	if d.p == nil {
		d.p = new(createParts)
	}
	return d.p
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
	start, end, ok := d.plainAt()
	return d.b[start:end], ok
}

// plainAt is plain, as the bounds of the string's bytes in the body.
func (d *plainReader) plainAt() (start, end int, ok bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return 0, 0, false
	}
	start = d.i + 1
	for j := start; j < len(d.b); j++ {
		switch c := d.b[j]; {
		case c == '"':
			d.i = j + 1
			return start, j, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// str reads a plain string, cut from the copy of the whole body, which
// the strings read keep alive: a store that keeps one must clone it.
func (d *plainReader) str() (string, bool) {
	start, end, ok := d.plainAt()
	if !ok {
		return "", false
	}
	return d.cut(start, end), true
}

// cut is the body's bytes from start to end, as a string of the body's
// copy.
func (d *plainReader) cut(start, end int) string {
	if d.s == "" {
		d.s = string(d.b)
	}
	return d.s[start:end]
}

// number reads a number literal as json.Number keeps it.
func (d *plainReader) number() (string, bool) {
	start := d.i
	if len(d.literal()) == 0 {
		return "", false
	}
	return d.cut(start, d.i), true
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
// int64, as paymock.Whole does, into w.
func (d *plainReader) whole(w *paymock.Whole) (*paymock.Whole, bool) {
	v, ok := paymock.ParseWhole(d.literal())
	if !ok {
		return nil, false
	}
	*w = paymock.Whole(v)
	return w, true
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
