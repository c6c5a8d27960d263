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
	// also are the checks of a value that a second schema of an allOf
	// checks too (a created payment's cancel_url): it must pass both.
	also []keyCheck
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
	subs, also, ok := objectKeys(k, keys)
	if !ok {
		return nil
	}
	all := wireKeys()
	pk := &paymentKeys{values: make([]*check, len(all))}
	for i, key := range keys {
		pk.values[slices.Index(all, key)] = subs[i]
	}
	for _, a := range also {
		i := slices.Index(all, keys[a.key])
		if !wireScalar(i) {
			return nil // a nested object checked twice: the bytes decide
		}
		pk.also = append(pk.also, keyCheck{key: i, k: a.k})
	}
	cus, also, ok := objectKeys(pk.values[wkCustomer], []string{"id", "email", "name"})
	if !ok || len(also) > 0 {
		return nil
	}
	pk.customer = cus
	if next := pk.values[wkNextAction]; next != nil {
		url, also, ok := objectKeys(next, []string{"url"})
		if !ok || len(also) > 0 {
			return nil
		}
		pk.next, pk.nextURL = next, url[0]
	}
	pk.nextNull = nullVerdict(pk.values[wkNextAction])
	pk.methodNull = nullVerdict(pk.values[wkPaymentMethod])
	pk.completedNull = nullVerdict(pk.values[wkCompletedAt])
	return pk
}

// keyCheck is one more check of the value of a key (an index).
type keyCheck struct {
	key int
	k   *check
}

// objectKeys resolves an object check for an object of exactly these
// keys, all distinct: the check of each key's value (nil where none
// applies), as check.object finds them, and the further checks of a
// value that more than one schema of an allOf checks (also). False where
// the check's verdict on such an object depends on more than its values'
// verdicts: a keyword of the object itself (not, oneOf, anyOf, enum), a
// required key not among them, a key it refuses, or more keys than it
// allows.
func objectKeys(k *check, keys []string) (subs []*check, also []keyCheck, ok bool) {
	if k == nil || k.unsupported || k.empty || k.not != nil || len(k.oneOf)+len(k.anyOf) > 0 ||
		len(k.enum) > 0 || k.types&typeObject == 0 || len(k.required) > 64 ||
		k.maxProps != nil && uint64(len(keys)) > *k.maxProps {
		return nil, nil, false
	}
	if subs, ok = ownObjectKeys(k, keys); !ok {
		return nil, nil, false
	}
	// An allOf holds where each of its schemas does: a created payment is
	// a Payment plus a schema that requires cancel_url, and checks it. Each
	// schema's verdict must come from the values' verdicts too; a value
	// two of them check must pass both.
	for _, member := range k.allOf {
		ms, mAlso, ok := objectKeys(member, keys)
		if !ok {
			return nil, nil, false
		}
		also = append(also, mAlso...)
		for i, c := range ms {
			switch {
			case c == nil || subs[i] == c:
			case subs[i] != nil:
				also = append(also, keyCheck{key: i, k: c})
			default:
				subs[i] = c
			}
		}
	}
	return subs, also, true
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
	for _, a := range pk.also {
		if !scalarValid(a.k, w, a.key) {
			return false
		}
	}
	if w.CompletedAt == nil {
		return pk.completedNull == valid
	}
	return stringValid(v[wkCompletedAt], *w.CompletedAt)
}

// wireScalar reports whether the key of index i in wireKeys holds a
// string or raw JSON of its own, which scalarValid can check.
func wireScalar(i int) bool {
	switch i {
	case wkCustomer, wkNextAction, wkPaymentMethod, wkCompletedAt:
		return false
	}
	return true
}

// scalarValid is k's verdict on the value w writes for the key of index
// i in wireKeys (a wireScalar one).
func scalarValid(k *check, w *paymock.WirePayment, i int) bool {
	switch i {
	case wkAmount:
		return rawValid(k, w.Amount)
	case wkMetadata:
		return rawValid(k, w.Metadata)
	}
	var s string
	switch i {
	case wkID:
		s = w.ID
	case wkCurrency:
		s = string(w.Currency)
	case wkStatus:
		s = string(w.Status)
	case wkDescription:
		s = w.Description
	case wkSuccessURL:
		s = w.SuccessURL
	case wkCancelURL:
		s = w.CancelURL
	case wkPaymentLink:
		s = w.PaymentLink
	case wkCreatedAt:
		s = w.CreatedAt
	case wkUpdatedAt:
		s = w.UpdatedAt
	case wkExpiresAt:
		s = w.ExpiresAt
	default:
		return false
	}
	return stringValid(k, s)
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
