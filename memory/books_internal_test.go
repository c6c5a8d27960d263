// Tests of what every store's per-merchant books share.

package memory

import (
	"context"
	"testing"
	"time"
)

// othersGoOn runs each of ops while the test holds a busy merchant's
// book, failing the test when one fails or waits for that book: the ops
// are of other merchants, whose books are their own.
func othersGoOn(t *testing.T, ctx context.Context, ops map[string]func(context.Context) error) {
	t.Helper()
	for name, op := range ops {
		done := make(chan error, 1)
		go func() { done <- op(ctx) }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("%s of another merchant: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s of another merchant waited for the busy merchant's book", name)
		}
	}
}
