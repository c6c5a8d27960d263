// Package paymocktest runs the whole paymock sandbox inside go test, on an
// httptest server, with no docker and nothing to install:
//
//	func TestCheckout(t *testing.T) {
//		s := paymocktest.New(t) // closed by t.Cleanup
//		shop := myshop.New(s.URL, s.APIKey)
//		id := shop.Checkout(t.Context(), ...)
//		if _, err := s.Complete(t.Context(), id); err != nil {
//			t.Fatal(err)
//		}
//		d, err := s.Webhooks().Next(t.Context()) // signature verified
//		...
//	}
//
// Each New is a sandbox of its own (parallel tests share nothing) with a
// frozen clock that moves only through Advance, and a fresh merchant whose
// key is APIKey. Its events go to a built-in receiver, Webhooks, that
// verifies every delivery with the Standard Webhooks reference library.
//
// At cleanup the test fails if the code under test sent any request that
// broke the contract, and the failure lists each one with its violations;
// AllowViolations turns that off for tests that send bad requests on
// purpose.
//
// Everything else of the control API (events, redelivery, reset, the
// report, API keys, webhook endpoints) is reached through sandbox.Client
// with URL and APIKey: the same client works against paymock in docker.
package paymocktest
