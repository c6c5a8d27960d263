// The hosted pages a payment sends its customer to.

package paymock

import "time"

// Paths of the hosted pages, relative to the public URL; a payment's page
// is the path followed by its id.
const (
	CheckoutPath = "/checkout/"
	ThreeDSPath  = "/3ds/"
)

// PagePath is the hosted page of a payment: a payment created with a
// payment method authenticates on the 3DS page, any other pays on the
// checkout page.
func PagePath(withPaymentMethod bool) string {
	if withPaymentMethod {
		return ThreeDSPath
	}
	return CheckoutPath
}

// Overdue reports whether p is still pending although its expiry has come
// on the merchant's clock (now): the scheduler just has not recorded it.
func (p Payment) Overdue(now time.Time) bool {
	return p.Status == StatusPending && !now.Before(p.ExpiresAt)
}
