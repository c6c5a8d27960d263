// The payment's wire form written without reflection, byte for byte what
// EncodeJSON writes of it: every create, retrieve and list answer, and
// every webhook, encodes payments.

package paymock

import (
	"encoding/json"
	"time"
)

// EncodePlain writes p's wire form under enc, byte for byte as Encode
// does, and says whether it wrote it by hand from w (the plain shapes of
// appendWire): the bytes are then exactly appendWire's of w, so that a
// reader may check the answer from w's values rather than parse the
// bytes again. plain is false when the form went through encoding/json.
func (p Payment) EncodePlain(enc Encoding) (b []byte, w WirePayment, plain bool, err error) {
	w = p.wire(enc)
	if b, ok := appendWire(make([]byte, 0, wireSize(&w)), &w); ok {
		return b, w, true, nil
	}
	b, err = EncodeJSON(w)
	return b, w, false, err
}

// appendWire appends w as EncodeJSON writes it. It takes the plain
// shapes only (a payment without a payment method, strings of printable
// ASCII, raw JSON without whitespace); false sends w to EncodeJSON.
func appendWire(b []byte, w *WirePayment) ([]byte, bool) {
	if w.PaymentMethod != nil || !plainRaw(w.Amount) || !plainRaw(w.Metadata) {
		return nil, false
	}
	ok := true
	str := func(key, s string) {
		b = append(b, key...)
		if !plainString(s) {
			ok = false
			return
		}
		b = append(b, '"')
		b = append(b, s...)
		b = append(b, '"')
	}
	str(`{"id":`, w.ID)
	b = append(b, `,"amount":`...)
	b = append(b, w.Amount...)
	str(`,"currency":`, string(w.Currency))
	str(`,"status":`, string(w.Status))
	str(`,"customer":{"id":`, w.Customer.ID)
	str(`,"email":`, w.Customer.Email)
	str(`,"name":`, w.Customer.Name)
	str(`},"description":`, w.Description)
	b = append(b, `,"metadata":`...)
	b = append(b, w.Metadata...)
	str(`,"success_url":`, w.SuccessURL)
	str(`,"cancel_url":`, w.CancelURL)
	if w.NextAction == nil {
		b = append(b, `,"next_action":null`...)
	} else {
		str(`,"next_action":{"url":`, w.NextAction.URL)
		b = append(b, '}')
	}
	if w.PaymentLink != "" {
		str(`,"payment_link":`, w.PaymentLink)
	}
	b = append(b, `,"payment_method":null`...)
	if w.CompletedAt == nil {
		b = append(b, `,"completed_at":null`...)
	} else {
		str(`,"completed_at":`, *w.CompletedAt)
	}
	str(`,"created_at":`, w.CreatedAt)
	str(`,"updated_at":`, w.UpdatedAt)
	str(`,"expires_at":`, w.ExpiresAt)
	b = append(b, '}')
	return b, ok
}

// wireSize is at least the length of appendWire's bytes of w, so that
// they take one allocation: the keys and punctuation, and the values.
func wireSize(w *WirePayment) int {
	n := wireFixed + len(w.ID) + len(w.Amount) + len(w.Currency) + len(w.Status) + len(w.Customer.ID) +
		len(w.Customer.Email) + len(w.Customer.Name) + len(w.Description) + len(w.Metadata) + len(w.SuccessURL) +
		len(w.CancelURL) + len(w.PaymentLink) + len(w.CreatedAt) + len(w.UpdatedAt) + len(w.ExpiresAt)
	if w.NextAction != nil {
		n += len(w.NextAction.URL)
	}
	if w.CompletedAt != nil {
		n += len(*w.CompletedAt)
	}
	return n
}

// wireFixed is what appendWire writes besides the values at most: every
// key, quote and bracket, nulls in full (TestWireSize_HoldsTheBytes).
const wireFixed = 320

// plainString reports whether encoding/json writes s as its bytes in
// quotes: printable ASCII without a quote or a backslash (with HTML
// escaping off, as EncodeJSON has it).
func plainString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// plainRaw reports whether encoding/json writes raw JSON as it is: valid,
// and with no whitespace for its compaction to take out.
func plainRaw(raw json.RawMessage) bool {
	for _, c := range raw {
		if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
			return false
		}
	}
	return len(raw) > 0 && json.Valid(raw)
}

// appendPlainTime appends t in TimeLayout, in UTC and whole seconds, as
// FormatTime writes it, for the years 1 to 9999: there, Truncate's
// rounding down since the zero time is the clock's dropping of the
// fraction, and the year has four digits. false leaves other years to
// time.Format.
func appendPlainTime(b []byte, t time.Time) ([]byte, bool) {
	t = t.UTC()
	year, month, day := t.Date()
	if year < 1 || year > 9999 {
		return b, false
	}
	hour, minute, sec := t.Clock()
	two := func(n int) { b = append(b, byte('0'+n/10), byte('0'+n%10)) }
	two(year / 100)
	two(year % 100)
	b = append(b, '-')
	two(int(month))
	b = append(b, '-')
	two(day)
	b = append(b, 'T')
	two(hour)
	b = append(b, ':')
	two(minute)
	b = append(b, ':')
	two(sec)
	return append(b, 'Z'), true
}
