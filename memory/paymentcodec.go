// A payment's compact record in its book's arena: how it is written and
// read back.

package memory

import (
	"encoding/binary"
	"strings"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/internal/packed"
)

// The encoding of a payment in a book's arena: the id first, so an index
// look-up reads it without decoding the rest; then a flags byte, the
// amount, the currency and status as small numbers (0 and the text for any
// other), strings as a length and bytes, times as seconds and nanoseconds.
// The merchant id is the book's and is not repeated; the success and
// cancel URLs, and a checkout URL that ends in the payment's id, are
// written as the book's common strings where they can be.
const (
	hasMethod byte = 1 << iota
	hasBilling
	hasAddress
	declines3DS
	checkoutEndsInID // only the start of the checkout URL is written
)

// The small numbers of currencies and statuses; 0 is none of them. They
// are written to no disk, so they may change with the code.
func currencyCodes() [5]paymock.Currency {
	return [...]paymock.Currency{1: paymock.USD, 2: paymock.EUR, 3: paymock.GBP, 4: paymock.CAD}
}

func statusCodes() [6]paymock.Status {
	return [...]paymock.Status{1: paymock.StatusPending, 2: paymock.StatusCompleted, 3: paymock.StatusSucceeded, 4: paymock.StatusExpired, 5: paymock.StatusFailed}
}

// appendCommon writes s as 2n+1 when it is common string n, else as 2
// times its length and its bytes.
func appendCommon(dst []byte, s string, c *commonStrings) []byte {
	if n, ok := c.add(s); ok {
		return binary.AppendUvarint(dst, uint64(n)<<1|1)
	}
	dst = binary.AppendUvarint(dst, uint64(len(s))<<1)
	return append(dst, s...)
}

func appendTime(dst []byte, t time.Time) []byte {
	dst = binary.AppendVarint(dst, t.Unix())
	return binary.AppendUvarint(dst, uint64(t.Nanosecond()))
}

// appendCode writes the number of v among codes, or 0 and v itself.
func appendCode[T ~string](dst []byte, v T, codes []T) []byte {
	for i, c := range codes {
		if i > 0 && c == v {
			return append(dst, byte(i))
		}
	}
	return packed.AppendString(append(dst, 0), string(v))
}

func encodePayment(dst []byte, p *paymock.Payment, c *commonStrings) []byte {
	dst = packed.AppendString(dst, p.ID)
	var flags byte
	pm := p.PaymentMethod
	if pm != nil {
		flags |= hasMethod
		if pm.BillingDetails != nil {
			flags |= hasBilling
			if pm.BillingDetails.Address != nil {
				flags |= hasAddress
			}
		}
	}
	if p.Declines3DS {
		flags |= declines3DS
	}
	if p.ID != "" && strings.HasSuffix(p.CheckoutURL, p.ID) {
		flags |= checkoutEndsInID
	}
	dst = append(dst, flags)
	dst = binary.AppendVarint(dst, int64(p.Amount))
	cs, ss := currencyCodes(), statusCodes()
	dst = appendCode(dst, p.Currency, cs[:])
	dst = appendCode(dst, p.Status, ss[:])
	for _, s := range [...]string{p.Customer.ID, p.Customer.Email, p.Customer.Name, p.Description, string(p.Metadata)} {
		dst = packed.AppendString(dst, s)
	}
	dst = appendCommon(dst, p.SuccessURL, c)
	dst = appendCommon(dst, p.CancelURL, c)
	if flags&checkoutEndsInID != 0 {
		dst = appendCommon(dst, p.CheckoutURL[:len(p.CheckoutURL)-len(p.ID)], c)
	} else {
		dst = packed.AppendString(dst, p.CheckoutURL)
	}
	for _, t := range [...]time.Time{p.CreatedAt, p.UpdatedAt, p.ExpiresAt, p.CompletedAt} {
		dst = appendTime(dst, t)
	}
	if pm == nil {
		return dst
	}
	dst = packed.AppendString(dst, pm.Type)
	dst = packed.AppendString(dst, pm.Card.Brand)
	dst = packed.AppendString(dst, pm.Card.Last4)
	dst = binary.AppendVarint(dst, int64(pm.Card.ExpiryMonth))
	dst = binary.AppendVarint(dst, int64(pm.Card.ExpiryYear))
	if bd := pm.BillingDetails; bd != nil {
		dst = packed.AppendString(dst, bd.Name)
		if a := bd.Address; a != nil {
			for _, s := range [...]string{a.Line1, a.Line2, a.City, a.State, a.PostalCode, a.Country} {
				dst = packed.AppendString(dst, s)
			}
		}
	}
	return dst
}

// recordID is the id at the start of an encoding, still in the arena.
func recordID(enc []byte) []byte {
	n, k := binary.Uvarint(enc)
	return enc[k : k+int(n)]
}

// decoder reads an encoding from one string copy of it: every string of
// the payment is a piece of that copy, so decoding allocates once for all
// of them and shares nothing with the arena.
type decoder struct{ packed.Reader }

func (d *decoder) common(c []string) string {
	v := d.Uvarint()
	if v&1 == 1 {
		return c[v>>1]
	}
	s := d.S[d.I : d.I+int(v>>1)]
	d.I += int(v >> 1)
	return s
}

func (d *decoder) time() time.Time {
	sec := d.Varint()
	return time.Unix(sec, int64(d.Uvarint())).UTC()
}

func decodeCode[T ~string](d *decoder, codes []T) T {
	if c := d.Byte(); c != 0 {
		return codes[c]
	}
	return T(d.String())
}

// decodePayment reads an encoding of encodePayment; c are its book's
// common strings.
func decodePayment(enc []byte, merchantID string, c *commonStrings) paymock.Payment {
	// One allocation holds the copy of enc and, after it, a checkout URL
	// rebuilt from its start and the id: strings handed out earlier keep
	// their bytes, as a Builder only ever appends.
	var sb strings.Builder
	idLen, _ := binary.Uvarint(enc)
	sb.Grow(len(enc) + c.maxLen + int(idLen))
	sb.Write(enc)
	d := decoder{packed.Reader{S: sb.String()}}
	common := c.s
	p := paymock.Payment{ID: d.String(), MerchantID: merchantID}
	flags := d.Byte()
	p.Declines3DS = flags&declines3DS != 0
	p.Amount = paymock.Amount(d.Varint())
	cs, ss := currencyCodes(), statusCodes()
	p.Currency = decodeCode(&d, cs[:])
	p.Status = decodeCode(&d, ss[:])
	p.Customer = paymock.Customer{ID: d.String(), Email: d.String(), Name: d.String()}
	p.Description = d.String()
	if m := d.String(); m != "" {
		p.Metadata = []byte(m) // a copy of its own: a caller may change it
	}
	p.SuccessURL, p.CancelURL = d.common(common), d.common(common)
	if flags&checkoutEndsInID != 0 {
		sb.WriteString(d.common(common))
		sb.WriteString(p.ID)
		p.CheckoutURL = sb.String()[len(enc):]
	} else {
		p.CheckoutURL = d.String()
	}
	p.CreatedAt, p.UpdatedAt, p.ExpiresAt, p.CompletedAt = d.time(), d.time(), d.time(), d.time()
	if flags&hasMethod == 0 {
		return p
	}
	pm := &paymock.PaymentMethod{Type: d.String()}
	pm.Card.Brand, pm.Card.Last4 = d.String(), d.String()
	pm.Card.ExpiryMonth, pm.Card.ExpiryYear = int(d.Varint()), int(d.Varint())
	if flags&hasBilling != 0 {
		pm.BillingDetails = &paymock.BillingDetails{Name: d.String()}
		if flags&hasAddress != 0 {
			pm.BillingDetails.Address = &paymock.Address{Line1: d.String(), Line2: d.String(), City: d.String(),
				State: d.String(), PostalCode: d.String(), Country: d.String()}
		}
	}
	p.PaymentMethod = pm
	return p
}
