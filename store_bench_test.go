// Benchmarks of the memory store: what a stored payment costs it.

package paymock

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkMemoryStore_BytesPerPayment reports the live heap the store
// holds per payment, for payments shaped like the API's.
func BenchmarkMemoryStore_BytesPerPayment(b *testing.B) {
	const n = 100_000
	now := time.Date(2026, 3, 14, 15, 9, 26, 0, time.UTC)
	for b.Loop() {
		s := NewMemoryStore()
		heap := func() uint64 {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			return ms.HeapAlloc
		}
		before := heap()
		for i := range n {
			id := fmt.Sprintf("pay_%024d", i)
			p := Payment{ID: id, MerchantID: "mer_0000000000000000000000001", Amount: 1050, Currency: "USD", Status: StatusPending,
				Customer:    Customer{ID: "cus_IwedGhNUwYReemdqbSIibeTf", Email: fmt.Sprint("jane@example.com"), Name: fmt.Sprint("Jane Doe")},
				Description: fmt.Sprint("Order 1234"), Metadata: []byte(`{"order_id":"ord_1234"}`),
				SuccessURL: fmt.Sprint("https://shop.example.com/success"), CancelURL: fmt.Sprint("https://shop.example.com/cancel"),
				CheckoutURL: "http://localhost:8080/checkout/" + id, CreatedAt: now, UpdatedAt: now, ExpiresAt: now.Add(time.Hour)}
			if err := s.Insert(context.Background(), p); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(heap()-before)/n, "B/payment")
		runtime.KeepAlive(s)
	}
}
