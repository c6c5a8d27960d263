// What the limiter and the answer deadline cost a request, over loopback
// against the same server without them.

package connlimit

import (
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

func BenchmarkServe(b *testing.B) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"ok":true}`)
	})
	for _, bb := range []struct {
		name    string
		limited bool
	}{{"bare", false}, {"limited", true}} {
		b.Run(bb.name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			srv := &http.Server{Handler: ok, ReadHeaderTimeout: 10 * time.Second}
			if bb.limited {
				l := New(Config{Max: DefaultMax})
				srv.Handler = l.Handler(AnswerWithin(time.Minute, ok))
				l.Server(srv)
				ln = l.Listen(ln)
			}
			go func() { _ = srv.Serve(ln) }()
			defer srv.Close()
			client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
			url := "http://" + ln.Addr().String() + "/"
			b.ReportAllocs()
			for b.Loop() {
				resp, err := client.Get(url)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
		})
	}
}

// BenchmarkDeadline_SetFuture is what net/http's deadline calls cost a
// request each: a future deadline written down, on connections of their
// own, while other connections change state (the limiter's order).
func BenchmarkDeadline_SetFuture(b *testing.B) {
	l := New(Config{Max: DefaultMax})
	b.RunParallel(func(pb *testing.PB) {
		var d deadline
		apply := func(time.Time) error { return nil }
		t := time.Now().Add(time.Hour)
		for pb.Next() {
			_ = d.set(l, t, apply)
			l.order.Add(1)
		}
	})
}
