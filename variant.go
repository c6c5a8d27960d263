// Response variants: the wire forms the spec allows a client to meet
// (amount as a number or a string, "completed" or "succeeded", payment_link
// present or absent), chosen per response so clients meet them in tests.

package paymock

import (
	"fmt"
	mrand "math/rand/v2"
	"strings"
	"sync"
)

// String names an encoding as it is written in --variants and the journal;
// the default form is "default".
func (e Encoding) String() string {
	var parts []string
	if e.AmountAsString {
		parts = append(parts, "amount=string")
	}
	if e.StatusSucceeded {
		parts = append(parts, "status=succeeded")
	}
	if e.OmitPaymentLink {
		parts = append(parts, "payment_link=omit")
	}
	if len(parts) == 0 {
		return "default"
	}
	return strings.Join(parts, ",")
}

// Variants picks the encoding of each response: always the same fixed one,
// or, with "all", every form in turn from a seeded source.
type Variants struct {
	fixed  Encoding
	rotate bool
	mu     sync.Mutex
	rng    *mrand.Rand
}

// ParseVariants reads --variants: "" or "default" for the default form, a
// comma-separated list of amount=number|string, status=completed|succeeded,
// payment_link=include|omit, or "all" to rotate through every form with a
// source seeded by seed.
func ParseVariants(spec string, seed uint64) (*Variants, error) {
	v := &Variants{}
	spec = strings.TrimSpace(spec)
	switch spec {
	case "", "default":
		return v, nil
	case "all":
		v.rotate = true
		v.rng = mrand.New(mrand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
		return v, nil
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(spec, ",") {
		key, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			return nil, fmt.Errorf("variant %q: want name=value, e.g. amount=string", part)
		}
		if seen[key] {
			return nil, fmt.Errorf("variant %q given twice", key)
		}
		seen[key] = true
		switch key + "=" + val {
		case "amount=number", "status=completed", "payment_link=include":
		case "amount=string":
			v.fixed.AmountAsString = true
		case "status=succeeded":
			v.fixed.StatusSucceeded = true
		case "payment_link=omit":
			v.fixed.OmitPaymentLink = true
		default:
			return nil, fmt.Errorf("variant %q: want amount=number|string, status=completed|succeeded, payment_link=include|omit, or all", part)
		}
	}
	return v, nil
}

// Next is the encoding of the next response. A nil Variants is the default.
func (v *Variants) Next() Encoding {
	if v == nil || !v.rotate {
		if v == nil {
			return Encoding{}
		}
		return v.fixed
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	bits := v.rng.Uint32()
	return Encoding{AmountAsString: bits&1 != 0, StatusSucceeded: bits&2 != 0, OmitPaymentLink: bits&4 != 0}
}
