// Tests that a client asking for large answers and reading none cannot
// hold more of the process's memory than the answers' bound.

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/paymock/paymock/connlimit"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/internal/largeanswertest"
)

func TestRun_LargeAnswersPastTheByteBoundAreRefusedWhileAClientReadsNone(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	limits := connLimits
	limits.answer = safetyNet    // only the bound, not the answer's deadline, frees the unread answer
	limits.answerBytes = 5 << 20 // one page of 2.9 MB on its way at a time (in a buffer of 4 MiB), and small pages
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &limits})
	const key = "sk_test_big"
	for i := range 100 {
		if st, body := checkedDo(t, docs.Service, largeanswertest.BigCreate(t, r.addr, key)); st != http.StatusCreated {
			t.Fatalf("create %d: %d %s", i, st, body)
		}
	}
	page := func(perPage int) *http.Request {
		req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("http://%s/api/v1/payments?per_page=%d", r.addr, perPage), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		return req
	}
	if st, whole := checkedDo(t, docs.Service, page(100)); st != http.StatusOK || len(whole) < 2<<20 {
		t.Fatalf("the page alone: %d, %d bytes; want 200 and more than 2 MB", st, len(whole))
	}

	// A client with a small window asks for many pages at once and reads
	// nothing: more than the kernel's buffers take, so one answer waits on
	// it, held by the process. Its pages and the other client's compete
	// for the bound while both are built, and one of its pages refused so
	// is a small answer, after which the next is built: enough of them
	// that one is held.
	c := largeanswertest.DialSmallWindow(t, r.addr)
	fmt.Fprint(c, strings.Repeat("GET /api/v1/payments?per_page=100 HTTP/1.1\r\nHost: paymock\r\nAuthorization: Bearer "+key+"\r\n\r\n", 20))

	// Meanwhile another client's large page is refused, with a 503 the
	// contract declares, and its small pages are not.
	var refused []byte
	waitUntil(t, func() bool {
		var st int
		st, refused = checkedDo(t, docs.Service, page(100))
		return st == http.StatusServiceUnavailable
	}, "a large page to be refused while another waits on its client")
	var e struct {
		Error struct{ Code, Message string }
	}
	if err := json.Unmarshal(refused, &e); err != nil || e.Error.Code != "answers_busy" || !strings.Contains(e.Error.Message, "per_page") {
		t.Errorf("the refusal: %s (%v), want code answers_busy and a way out", refused, err)
	}
	// A page under connlimit.SmallAnswer (one payment of about 29 kB) is
	// never counted: five (145 kB) would be, against the merchant's share,
	// which its own held page fills.
	if st, body := checkedDo(t, docs.Service, page(1)); st != http.StatusOK || len(body) > connlimit.SmallAnswer {
		t.Errorf("a small page while the bound is held: %d, %d bytes (want 200, at most %d)", st, len(body), connlimit.SmallAnswer)
	}

	// Once the client that read nothing has gone, its answer's bytes are
	// given back and large pages are sent again.
	c.Close()
	waitUntil(t, func() bool {
		st, _ := checkedDo(t, docs.Service, page(100))
		return st == http.StatusOK
	}, "a large page to be sent again")

	// The journal shows the refusal as it was answered.
	req, err := http.NewRequest(http.MethodGet, "http://"+r.addr+"/_sandbox/requests?status=503", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	_, body := checkedDo(t, docs.Sandbox, req)
	var journal struct {
		Items []struct {
			Status int `json:"status"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &journal); err != nil || len(journal.Items) == 0 {
		t.Errorf("the journal's 503s: %s (%v), want the refusals", body, err)
	}
}

// A page larger than the bound alone is refused as it is built, not once
// it is whole: a client asking for many such pages at once cannot make
// the process hold each of them first. Measured in bytes allocated (not
// time): the page is 2.9 MB; the store's decoded page and the answer up
// to the bound took 7.4 MB, building it whole and refusing it then took
// 20.8 MB.
func TestRun_ALargePagePastTheByteBoundIsRefusedBeforeItIsBuiltWhole(t *testing.T) {
	docs, err := contract.Embedded()
	if err != nil {
		t.Fatal(err)
	}
	limits := connLimits
	limits.answerBytes = 1 << 20 // less than the page alone
	r := startRun(t, []string{"--addr", "127.0.0.1:0"}, nil, hooks{limits: &limits})
	const key = "sk_test_big"
	for i := range 100 {
		if st, body := checkedDo(t, docs.Service, largeanswertest.BigCreate(t, r.addr, key)); st != http.StatusCreated {
			t.Fatalf("create %d: %d %s", i, st, body)
		}
	}
	req, err := http.NewRequest(http.MethodGet, "http://"+r.addr+"/api/v1/payments?per_page=100", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	st, body := checkedDo(t, docs.Service, req)
	runtime.ReadMemStats(&after)
	if st != http.StatusServiceUnavailable || !strings.Contains(string(body), `"answers_busy"`) {
		t.Fatalf("the page: %d %.300s, want a 503 answers_busy", st, body)
	}
	const most = 12 << 20
	if n := after.TotalAlloc - before.TotalAlloc; n > most {
		t.Errorf("refusing the page allocated %.1f MB, want at most %.1f MB: the page was built whole before it was refused", float64(n)/1e6, float64(most)/1e6)
	}

	// A fault that answers in the page's place, once the call has run,
	// is answered, not the refusal of the page it discards.
	req.Header.Set("Paymock-Fault", "status=429; retry_after=3; when=after")
	if st, body := checkedDo(t, docs.Service, req); st != http.StatusTooManyRequests || strings.Contains(string(body), "answers_busy") {
		t.Errorf("a when=after fault of 429 on a refused page: %d %.300s, want the fault's 429", st, body)
	}
}
