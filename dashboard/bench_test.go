// Benchmarks: what a page costs over loopback, what a search costs when it
// has to read a merchant's whole list, and what a sign-in costs that has to
// end a session to make room.

package dashboard_test

import (
	"net/http"
	"strconv"
	"testing"
)

func benchPage(b *testing.B, payments int, path string) {
	h := newHarness(b, nil)
	for i := range payments {
		h.fake.addPayment(b, "acme", "buyer"+strconv.Itoa(i)+"@example.com", 1050, i)
	}
	br := h.browser()
	br.signIn(acmeKey)
	req, err := http.NewRequest(http.MethodGet, h.srv.URL+path, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		// A clone each time: the client adds the jar's cookies to the
		// request it is given, and past 3,000 Cookie values Go's server
		// reads none, so the same request sent again is signed out.
		resp, err := br.c.Do(req.Clone(req.Context()))
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("GET %s: %v %v", path, resp, err)
		}
		resp.Body.Close()
	}
}

func BenchmarkPaymentsPage_FirstPageOf10k(b *testing.B) {
	benchPage(b, 10000, "/dashboard/payments")
}

func BenchmarkPaymentsPage_EmailSearchOver10k(b *testing.B) {
	benchPage(b, 10000, "/dashboard/payments?q=buyer9999@")
}

func BenchmarkPaymentsPage_IDSearch(b *testing.B) {
	benchPage(b, 10000, "/dashboard/payments?q=pay_000000000000000000005000")
}

// BenchmarkSignIn_AtAFullStoreOf10k is a sign-in with many keys once the
// store holds its default 10,000 sessions: each one ends another.
func BenchmarkSignIn_AtAFullStoreOf10k(b *testing.B) {
	h := newHarness(b, nil)
	h.fake.open = true
	f := newFlooder(h)
	f.drop = true
	for range 10000 {
		f.signIn(false)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f.signIn(false)
	}
}
