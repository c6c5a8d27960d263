// Tests that one merchant's unread large answers leave room for every
// other merchant's, over real HTTP.

package mockserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/paymock/paymock/internal/largeanswertest"
	"github.com/paymock/paymock/sandbox"
)

// The attack in miniature: merchant A holds as many of its largest pages
// as it can, unread, on many connections; merchant B's largest page is
// still sent. The bound of 24 MiB holds about six pages of 2.9 MB (in
// buffers of up to 4 MiB): A alone filled it, and B's page was a 503
// answers_busy for as long as A read nothing. A's share is 6 MiB.
func TestServer_OneMerchantsUnreadAnswersLeaveRoomForAnothersLargePage(t *testing.T) {
	sb, err := sandbox.New(sandbox.Config{MaxAnswerBytes: 24 << 20})
	if err != nil {
		t.Fatal(err)
	}
	sb.Start()
	srv := httptest.NewServer(sb.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = sb.Close(context.Background())
	})
	addr := srv.Listener.Addr().String()
	const a, b = "sk_test_share_a", "sk_test_share_b"
	for _, key := range []string{a, b} {
		for i := range 100 {
			if st, body := send(t, largeanswertest.BigCreate(t, addr, key)); st != http.StatusCreated {
				t.Fatalf("create %d of %s: %d %.300s", i, key, st, body)
			}
		}
	}
	page := func(key string) *http.Request {
		req, err := http.NewRequest(http.MethodGet, "http://"+addr+"/api/v1/payments?per_page=100", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		return req
	}
	if st, body := send(t, page(b)); st != http.StatusOK || len(body) < 2<<20 {
		t.Fatalf("B's page alone: %d, %d bytes; want 200 and more than 2 MB", st, len(body))
	}

	// A asks for its largest page on 12 connections, 20 times on each, and
	// reads nothing. The kernel's buffers take a connection's first page
	// whole, and pages refused while others are built are small 503s, so
	// a connection holds an answer once a second page of its own is built:
	// with 5 asks each, a busy machine refused enough that none was.
	for range 12 {
		c := largeanswertest.DialSmallWindow(t, addr)
		fmt.Fprint(c, strings.Repeat("GET /api/v1/payments?per_page=100 HTTP/1.1\r\nHost: paymock\r\nAuthorization: Bearer "+a+"\r\n\r\n", 20))
	}
	// Until A's own next page is refused: A holds what it may.
	deadline := time.Now().Add(60 * time.Second)
	for {
		st, _ := send(t, page(a))
		if st == http.StatusServiceUnavailable {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A's page was still answered %d after 60s of A's unread pages", st)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// B reads its answers, and its largest page is sent, again and again.
	for i := range 3 {
		st, body := send(t, page(b))
		if st != http.StatusOK || len(body) < 2<<20 {
			var e struct {
				Error struct{ Code, Message string }
			}
			_ = json.Unmarshal(body, &e)
			t.Fatalf("B's page %d while A holds its unread pages: %d %s %q, %d bytes; want 200 and more than 2 MB",
				i, st, e.Error.Code, e.Error.Message, len(body))
		}
	}
}

// send does req and reads its whole answer.
func send(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, body
}
