// Tests of what the memory store keeps of the strings it is given.

package memory

import (
	"strings"
	"testing"
	"unsafe"
)

// TestCustomerID_KeepsNoPartOfTheCallersString: an email cut from a
// larger string (a create body read by hand cuts every field from one
// copy of the body) must not keep that string alive in the customer
// index, whatever the case of the email.
func TestCustomerID_KeepsNoPartOfTheCallersString(t *testing.T) {
	for _, tc := range []struct{ name, email string }{
		{"lower case", "jane@example.com"},
		{"mixed case", "Jane@Example.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"customer":{"email":"` + tc.email + `","name":"Jane"},"description":"a long body around the email"}`
			at := strings.Index(body, tc.email)
			email := body[at : at+len(tc.email)]
			s := NewPayments()
			if _, err := s.CustomerID(t.Context(), "m", email, func() string { return "cus_1" }, -1); err != nil {
				t.Fatal(err)
			}
			start := uintptr(unsafe.Pointer(unsafe.StringData(body)))
			for key := range s.book("m", false).customers {
				if p := uintptr(unsafe.Pointer(unsafe.StringData(key))); p >= start && p < start+uintptr(len(body)) {
					t.Errorf("the customer key %q is a piece of the caller's string", key)
				}
			}
		})
	}
}
