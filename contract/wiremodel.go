// Checking a payment answer from the values paymock's encoder wrote
// rather than from its bytes: the compiled check of the answer's schema,
// resolved once for the keys the encoder writes, applied to each value.
// It only ever answers "valid" where the compiled check of the bytes
// would (FuzzPaymentModel_AgreesWithTheByteCheck); anything else goes to
// the byte check, and through it to kin-openapi.

package contract

import (
	"context"
	"net/http"
	"slices"

	"github.com/paymock/paymock"
)

// ValidatePaymentResponse is ValidateResponse of an answer whose body is
// exactly what Payment.EncodePlain wrote of w when it said plain: the
// caller vouches for that (mockserver compares the bytes it holds with
// the bytes encoded). Where the model of the answer's schema finds every
// value of w valid, the bytes are not read again; otherwise the answer
// is checked as ValidateResponse checks it.
func (d *Document) ValidatePaymentResponse(ctx context.Context, r *http.Request, rt *Route, status int, header http.Header, body []byte, w *paymock.WirePayment) error {
	d.ready()
	if r.Method != http.MethodHead && len(body) <= maxTreeBytes {
		if k := d.responseCheck(rt, status, header); k != nil {
			if m := d.payModels[k]; m != nil && m.valid(w) {
				return nil
			}
		}
	}
	return d.ValidateResponse(ctx, r, rt, status, header, body)
}

// paymentModel is an object check resolved for the keys the encoder
// writes of a payment (appendWire), with and without payment_link: the
// check of each key's value (nil where none applies), or nil for a key
// set whose verdict depends on more than its values' verdicts.
type paymentModel struct {
	link, noLink *paymentKeys
}

// paymentKeys are the checks of one key set's values, in the order of
// wireKeys, and of the nested objects' values.
type paymentKeys struct {
	values []*check
	// customer's id, email and name; next_action's url.
	customer []*check
	nextURL  *check
	// The verdicts on null of the keys that may hold it.
	nextNull, methodNull, completedNull verdict
	next                                *check // next_action as an object
}

// wireKeys are the keys appendWire writes, in its order; payment_link is
// written only when set.
func wireKeys() []string {
	return []string{"id", "amount", "currency", "status", "customer", "description", "metadata",
		"success_url", "cancel_url", "next_action", "payment_link", "payment_method", "completed_at",
		"created_at", "updated_at", "expires_at"}
}

// Indexes in wireKeys.
const (
	wkID = iota
	wkAmount
	wkCurrency
	wkStatus
	wkCustomer
	wkDescription
	wkMetadata
	wkSuccessURL
	wkCancelURL
	wkNextAction
	wkPaymentLink
	wkPaymentMethod
	wkCompletedAt
	wkCreatedAt
	wkUpdatedAt
	wkExpiresAt
)

// compilePaymentModels resolves the model of every compiled response
// check that the encoder's payments can meet.
func (d *Document) compilePaymentModels() {
	d.payModels = map[*check]*paymentModel{}
	for _, k := range d.checks {
		link := resolvePaymentKeys(k, wireKeys())
		noLink := resolvePaymentKeys(k, slices.Delete(wireKeys(), wkPaymentLink, wkPaymentLink+1))
		if link != nil || noLink != nil {
			d.payModels[k] = &paymentModel{link: link, noLink: noLink}
		}
	}
}

func resolvePaymentKeys(k *check, keys []string) *paymentKeys {
	subs, ok := objectKeys(k, keys)
	if !ok {
		return nil
	}
	all := wireKeys()
	pk := &paymentKeys{values: make([]*check, len(all))}
	for i, key := range keys {
		pk.values[slices.Index(all, key)] = subs[i]
	}
	cus, ok := objectKeys(pk.values[wkCustomer], []string{"id", "email", "name"})
	if !ok {
		return nil
	}
	pk.customer = cus
	if next := pk.values[wkNextAction]; next != nil {
		url, ok := objectKeys(next, []string{"url"})
		if !ok {
			return nil
		}
		pk.next, pk.nextURL = next, url[0]
	}
	pk.nextNull = nullVerdict(pk.values[wkNextAction])
	pk.methodNull = nullVerdict(pk.values[wkPaymentMethod])
	pk.completedNull = nullVerdict(pk.values[wkCompletedAt])
	return pk
}

// objectKeys resolves an object check for an object of exactly these
// keys, all distinct: the check of each key's value (nil where none
// applies), as check.object finds them. False where the check's verdict
// on such an object depends on more than its values' verdicts: a keyword
// of the object itself (not, oneOf, anyOf, enum), a required key not
// among them, a key it refuses, more keys than it allows, or a key whose
// value two schemas of an allOf check.
func objectKeys(k *check, keys []string) ([]*check, bool) {
	if k == nil || k.unsupported || k.empty || k.not != nil || len(k.oneOf)+len(k.anyOf) > 0 ||
		len(k.enum) > 0 || k.types&typeObject == 0 || len(k.required) > 64 ||
		k.maxProps != nil && uint64(len(keys)) > *k.maxProps {
		return nil, false
	}
	subs, ok := ownObjectKeys(k, keys)
	if !ok {
		return nil, false
	}
	// An allOf holds where each of its schemas does: a created payment is
	// a Payment plus a schema that only requires cancel_url. Each schema's
	// verdict must come from the values' verdicts too, and a value checked
	// by two of them has no one check to resolve to.
	for _, member := range k.allOf {
		ms, ok := objectKeys(member, keys)
		if !ok {
			return nil, false
		}
		for i, c := range ms {
			switch {
			case c == nil:
			case subs[i] != nil && subs[i] != c:
				return nil, false
			default:
				subs[i] = c
			}
		}
	}
	return subs, true
}

// ownObjectKeys is objectKeys of k's own keywords, its allOf aside.
func ownObjectKeys(k *check, keys []string) ([]*check, bool) {
	for _, name := range k.required {
		if !slices.Contains(keys, name) {
			return nil, false
		}
	}
	subs := make([]*check, len(keys))
	for i, key := range keys {
		if p, ok := k.props[key]; ok {
			subs[i] = p
		} else if !k.additional {
			return nil, false
		} else {
			subs[i] = k.addSchema
		}
	}
	return subs, true
}

// nullVerdict is k's verdict on a null.
func nullVerdict(k *check) verdict {
	if k == nil {
		return valid
	}
	t, ok := parseTree([]byte("null"))
	if !ok {
		return unsure
	}
	defer t.release()
	return k.validate(t, 0)
}

// valid reports whether the model finds every value of w valid, where
// the compiled check of appendWire's bytes of w would. False is no
// verdict.
func (m *paymentModel) valid(w *paymock.WirePayment) bool {
	pk := m.noLink
	if w.PaymentLink != "" {
		pk = m.link
	}
	if pk == nil || w.PaymentMethod != nil || pk.methodNull != valid {
		return false // a payment method is never written by hand
	}
	v := pk.values
	if !stringValid(v[wkID], w.ID) || !rawValid(v[wkAmount], w.Amount) ||
		!stringValid(v[wkCurrency], string(w.Currency)) || !stringValid(v[wkStatus], string(w.Status)) ||
		!stringValid(v[wkDescription], w.Description) || !rawValid(v[wkMetadata], w.Metadata) ||
		!stringValid(v[wkSuccessURL], w.SuccessURL) || !stringValid(v[wkCancelURL], w.CancelURL) ||
		!stringValid(v[wkCreatedAt], w.CreatedAt) || !stringValid(v[wkUpdatedAt], w.UpdatedAt) ||
		!stringValid(v[wkExpiresAt], w.ExpiresAt) {
		return false
	}
	if w.PaymentLink != "" && !stringValid(v[wkPaymentLink], w.PaymentLink) {
		return false
	}
	if !stringValid(pk.customer[0], w.Customer.ID) || !stringValid(pk.customer[1], w.Customer.Email) ||
		!stringValid(pk.customer[2], w.Customer.Name) {
		return false
	}
	if w.NextAction == nil {
		if pk.nextNull != valid {
			return false
		}
	} else if pk.next != nil && !stringValid(pk.nextURL, w.NextAction.URL) {
		return false
	}
	if w.CompletedAt == nil {
		return pk.completedNull == valid
	}
	return stringValid(v[wkCompletedAt], *w.CompletedAt)
}

// stringValid is k's verdict on a string node holding s (nil k: none
// applies), valid or not: check.validate takes a string node this way.
func stringValid(k *check, s string) bool {
	return k == nil || k.stringValue(s) == valid
}

// rawValid is k's verdict on raw JSON met at depth 1 of the answer, as
// the byte check parses and checks it there.
func rawValid(k *check, raw []byte) bool {
	t, ok := parseTreeAt(raw, 1)
	if !ok {
		return false
	}
	defer t.release()
	return k == nil || k.validate(t, 0) == valid
}
