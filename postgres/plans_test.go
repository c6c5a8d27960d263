// The plans PostgreSQL keeps for the store's statements on large tables.

package postgres

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/paymock/paymock/internal/storetest"
)

// TestList_PlanIsKeptAndReadsOnlyThePage: a connection plans the list
// statement once, not at every call (planning cost PostgreSQL more than
// the page), and the plan it keeps reads the page's rows through
// payments_newest_first, whatever the merchant holds: a list of 10 over
// many payments reads 10.
func TestList_PlanIsKeptAndReadsOnlyThePage(t *testing.T) {
	cases := []struct {
		name string
		// merchants of small payments each, beside acme's big ones
		others, each, big int
	}{
		{name: "one merchant", big: 20_000},
		{name: "many small merchants and one big", others: 2_000, each: 10, big: 20_000},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			s, _ := openStore(t)
			doc, err := encode(storetest.StoredPayment("acme", 0))
			if err != nil {
				t.Fatal(err)
			}
			fill := func(merchant string, n int) string {
				return fmt.Sprintf(`INSERT INTO payments (merchant_id, id, status, expires_at, payment)
					SELECT %s, 'pay_' || g, 'succeeded', now(), $1 FROM generate_series(1, %d) g`, merchant, n)
			}
			for _, q := range []string{
				fill("'acme'", tc.big),
				fill("'m' || (g % "+fmt.Sprint(max(tc.others, 1))+")", tc.others*tc.each),
			} {
				if _, err := s.pool.Exec(ctx, q, doc); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := s.pool.Exec(ctx, `INSERT INTO payment_counts (merchant_id, slot, n)
				SELECT merchant_id, 0, count(*) FROM payments GROUP BY merchant_id`); err != nil {
				t.Fatal(err)
			}
			if _, err := s.pool.Exec(ctx, `ANALYZE payments, payment_counts`); err != nil {
				t.Fatal(err)
			}

			// The statement alone, and carrying a request's journal entry
			// (carry.go), whose parameters follow the page's.
			entry := `, 'acme', 200, 'listPayments', false, true, false, false, '{"id":"req_1","duration_ms":', 5, '}', NULL`
			for _, st := range []struct{ name, sql, more string }{
				{"alone", listPayments, ""},
				{"carrying an entry", s.carriedSQL.list, entry},
			} {
				t.Run(st.name, func(t *testing.T) { checkListPlan(t, s, st.sql, st.more, tc.big, tc.others > 0) })
			}
		})
	}
}

// checkListPlan prepares sql, a list page, on a connection of s, calls it
// as a store would, and fails unless the plan kept reads only the page;
// more are the parameters past the page's three.
func checkListPlan(t *testing.T, s *Store, sql, more string, big int, others bool) {
	ctx := t.Context()
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `PREPARE list_page AS `+sql); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `DEALLOCATE list_page`) //nolint:errcheck // the connection goes back to the pool
	// PostgreSQL plans the first five calls for their values, then
	// keeps a plan for any values when it costs no more.
	for i := range 6 {
		m := "acme"
		if i%2 == 1 && others {
			m = "m1"
		}
		if _, err := conn.Exec(ctx, `EXECUTE list_page('`+m+`', 0, 10`+more+`)`); err != nil {
			t.Fatal(err)
		}
	}
	plan := explain(t, conn.Conn(), `EXPLAIN (VERBOSE, COSTS OFF) EXECUTE list_page('acme', 0, 10`+more+`)`)
	if strings.Contains(plan, "'acme'") {
		t.Errorf("the plan holds the call's merchant: planned for this call, not kept:\n%s", plan)
	}
	// payment_counts may be read whole while it is one page.
	for _, bad := range []string{"Sort", "Seq Scan on public.payments", "Bitmap Heap Scan on public.payments"} {
		if strings.Contains(plan, bad) {
			t.Errorf("the plan has a %s:\n%s", bad, plan)
		}
	}
	ran := explain(t, conn.Conn(), `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE list_page('acme', 0, 10`+more+`)`)
	if !strings.Contains(ran, "Index Scan using payments_newest_first on payments (actual rows=10 loops=1)") {
		t.Errorf("a page of 10 of %d payments does not read 10 of them through payments_newest_first:\n%s", big, ran)
	}
}

// explain runs an EXPLAIN and returns its lines.
func explain(t *testing.T, conn *pgx.Conn, q string) string {
	t.Helper()
	rows, err := conn.Query(t.Context(), q)
	if err != nil {
		t.Fatal(err)
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// TestAddRound_PendingCountReadsAtMostTheLimit: the count of a merchant's
// pending deliveries that AddRound's limit reads (nextRound) stops at the
// limit and goes through an index of pending deliveries led by the
// merchant, in the plan a connection keeps: a merchant with twice the
// limit pending, beside finished deliveries and other merchants', costs a
// refusal no more than the limit's rows.
func TestAddRound_PendingCountReadsAtMostTheLimit(t *testing.T) {
	const limit, pending = 1_000, 20_000
	ctx := t.Context()
	s, _ := openStore(t)
	for _, q := range []string{
		`INSERT INTO webhook_events (merchant_id, id, type, created_at, body)
			SELECT m, 'evt_1', 'payment.completed', now(), '{}' FROM (SELECT 'acme' UNION ALL SELECT 'm' || g FROM generate_series(0, 999) g) ms(m)`,
		// acme: its pending deliveries, and as many finished.
		fmt.Sprintf(`INSERT INTO webhook_deliveries (merchant_id, event_id, round, position, url, state, next_at)
			SELECT 'acme', 'evt_1', g, 0, 'http://a.test/', 'pending', now() FROM generate_series(1, %d) g`, pending),
		fmt.Sprintf(`INSERT INTO webhook_deliveries (merchant_id, event_id, round, position, url, state)
			SELECT 'acme', 'evt_1', g, 1, 'http://a.test/', 'delivered' FROM generate_series(1, %d) g`, pending),
		`INSERT INTO webhook_deliveries (merchant_id, event_id, round, position, url, state, next_at)
			SELECT 'm' || (g % 1000), 'evt_1', g, 0, 'http://m.test/', 'pending', now() FROM generate_series(1, 20000) g`,
		`ANALYZE webhook_events, webhook_deliveries`,
	} {
		if _, err := s.pool.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, `PREPARE next_round AS `+nextRound); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `DEALLOCATE next_round`) //nolint:errcheck // the connection goes back to the pool
	// Past five calls PostgreSQL may keep a plan for any values.
	for i := range 6 {
		m := "acme"
		if i%2 == 1 {
			m = "m1"
		}
		if _, err := conn.Exec(ctx, fmt.Sprintf(`EXECUTE next_round('%s', 'evt_1', %d)`, m, limit)); err != nil {
			t.Fatal(err)
		}
	}
	ran := explain(t, conn.Conn(), fmt.Sprintf(`EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) EXECUTE next_round('acme', 'evt_1', %d)`, limit))
	if strings.Contains(ran, "'acme'") {
		t.Errorf("the plan holds the call's merchant: planned for this call, not kept:\n%s", ran)
	}
	for _, bad := range []string{"Seq Scan on webhook_deliveries", "Bitmap Heap Scan on webhook_deliveries"} {
		if strings.Contains(ran, bad) {
			t.Errorf("the plan has a %s:\n%s", bad, ran)
		}
	}
	// Either partial index of the pending deliveries led by the merchant
	// serves: both hold exactly the rows counted.
	counted := regexp.MustCompile(`Limit \(actual rows=` + fmt.Sprint(limit) + ` loops=1\)\s+->  Index (Only )?Scan using ` +
		`webhook_deliveries_(merchant_due|chain) on webhook_deliveries \S+ \(actual rows=` + fmt.Sprint(limit) + ` loops=1\)`)
	if !counted.MatchString(ran) {
		t.Errorf("the count of %d pending deliveries does not stop at %d read through a pending index:\n%s", pending, limit, ran)
	}
}
