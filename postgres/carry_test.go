// Journal entries written by the statements of creates, retrieves and
// lists: each request journaled once, as answered.

package postgres_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock/internal/pgtest"
	"github.com/paymock/paymock/postgres"
)

// journaled is the replica's journal, newest first: each entry's id,
// operation and status, and its duration.
func (r replica) journaled() (entries []string, durations []float64) {
	r.t.Helper()
	st, body := r.call("GET", "/_sandbox/requests?per_page=100", nil)
	if st != 200 {
		r.t.Fatalf("journal: %d %v", st, body)
	}
	items, _ := body["items"].([]any)
	for _, it := range items {
		e, _ := it.(map[string]any)
		entries = append(entries, fmt.Sprintf("%v %v %v", e["method"], e["operation_id"], e["status"]))
		d, _ := e["duration_ms"].(float64)
		durations = append(durations, d)
	}
	return entries, durations
}

// statusCounts is the report's count of each operation's statuses that
// were answered at least once ("createPayment 201": 1).
func (r replica) statusCounts() map[string]float64 {
	r.t.Helper()
	st, body := r.call("GET", "/_sandbox/report", nil)
	if st != 200 {
		r.t.Fatalf("report: %d %v", st, body)
	}
	out := map[string]float64{}
	ops, _ := body["operations"].([]any)
	for _, o := range ops {
		op, _ := o.(map[string]any)
		statuses, _ := op["statuses"].([]any)
		for _, s := range statuses {
			sc, _ := s.(map[string]any)
			if n, _ := sc["count"].(float64); n > 0 {
				out[fmt.Sprintf("%v %v", op["operation_id"], sc["status"])] = n
			}
		}
	}
	return out
}

func TestCarriedEntry_EachRequestJournaledOnceAsAnswered(t *testing.T) {
	r := counted(t, &wire{})
	start := time.Now()
	id := r.create(3600, nil)
	calls := []struct {
		path string
		want int
	}{
		{"/api/v1/payments/" + id, 200},
		{"/api/v1/payments?per_page=5", 200},
		{"/api/v1/payments/pay_nobody", 404}, // not carried: the statement found nothing
	}
	for _, c := range calls {
		if st, body := r.call("GET", c.path, nil); st != c.want {
			t.Fatalf("GET %s: %d %v", c.path, st, body)
		}
	}
	took := float64(time.Since(start).Microseconds()) / 1000

	entries, durations := r.journaled()
	want := []string{"GET retrievePayment 404", "GET listPayments 200", "GET retrievePayment 200", "POST createPayment 201"}
	if fmt.Sprint(entries) != fmt.Sprint(want) {
		t.Errorf("journal:\n got %q\nwant %q", entries, want)
	}
	// A carried entry's duration is the request's time up to the
	// statement and the statement's own: more than nothing, less than
	// the client waited for all four.
	for i, d := range durations {
		if d <= 0 || d > took {
			t.Errorf("%s: duration %v ms, want more than 0 and at most the %v ms the calls took", entries[i], d, took)
		}
	}
	counts := r.statusCounts()
	wantCounts := map[string]float64{"createPayment 201": 1, "retrievePayment 200": 1, "retrievePayment 404": 1, "listPayments 200": 1}
	if fmt.Sprint(counts) != fmt.Sprint(wantCounts) {
		t.Errorf("report: %v, want %v", counts, wantCounts)
	}
}

// TestCarriedEntry_ReplacedWhenTheAnswerTurnsOutOtherwise: a retrieve
// whose statement wrote its entry as a 200, but whose stored payment
// cannot be answered, is journaled and counted as the 500 it was.
func TestCarriedEntry_ReplacedWhenTheAnswerTurnsOutOtherwise(t *testing.T) {
	r, url := countedAt(t, &wire{})
	id := r.create(3600, nil)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), `UPDATE payments SET payment = '[]' WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if st, body := r.call("GET", "/api/v1/payments/"+id, nil); st != 500 {
		t.Fatalf("retrieve of a payment stored broken: %d %v", st, body)
	}
	entries, _ := r.journaled()
	want := []string{"GET retrievePayment 500", "POST createPayment 201"}
	if fmt.Sprint(entries) != fmt.Sprint(want) {
		t.Errorf("journal:\n got %q\nwant %q", entries, want)
	}
	counts := r.statusCounts()
	wantCounts := map[string]float64{"createPayment 201": 1, "retrievePayment 500": 1}
	if fmt.Sprint(counts) != fmt.Sprint(wantCounts) {
		t.Errorf("report: %v, want %v", counts, wantCounts)
	}
}

// TestCarriedEntry_AContextTheStoreKeepsPastItsRequestStaysValid: pgxpool
// dials a new connection in a goroutine of its own, with a context whose
// values are those of the call that asked for it, and that goroutine goes
// on after a client that gave up has had its answer. The context offering
// the entry must still be valid then, whatever the server does with the
// request's own state: one kept in the pooled exchange was read after the
// exchange served (and zeroed) another request, and the process crashed
// in five runs of six.
func TestCarriedEntry_AContextTheStoreKeepsPastItsRequestStaysValid(t *testing.T) {
	url := pgtest.URL(t)
	var slow atomic.Bool
	network := make(chan struct{})
	dial := func(ctx context.Context, nw, addr string) (net.Conn, error) {
		if slow.Load() {
			<-network
		}
		var d net.Dialer
		return d.DialContext(ctx, nw, addr)
	}
	r := servedOver(t, postgres.Config{URL: url, DialFunc: dial, MaxConns: 10}, "sk_test_carried")
	id := r.create(3600, nil)
	send := func(ctx context.Context, path, fault string) {
		req, err := http.NewRequestWithContext(ctx, "GET", r.url+path, nil)
		if err != nil {
			t.Error(err)
			return
		}
		req.Header.Set("Authorization", "Bearer "+r.key)
		if fault != "" {
			req.Header.Set("Paymock-Fault", fault)
		}
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}

	// Retrieves whose clients give up while the pool dials.
	slow.Store(true)
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			send(ctx, "/api/v1/payments/"+id, "")
		})
	}
	wg.Wait()
	time.Sleep(300 * time.Millisecond)
	// Requests that offer no entry (a fault was asked for) take the
	// exchanges back, and hold them for their delay, while the dials go on.
	for range 96 {
		wg.Go(func() { send(context.Background(), "/api/v1/payments", "delay=1500ms; status=503") })
	}
	time.Sleep(500 * time.Millisecond)
	close(network)
	wg.Wait()
	time.Sleep(time.Second) // the dials end: a crash would come now
	if st, body := r.call("GET", "/api/v1/payments/"+id, nil); st != 200 {
		t.Errorf("a retrieve after the dials: %d %v", st, body)
	}
}
