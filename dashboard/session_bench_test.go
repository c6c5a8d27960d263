// Benchmark of the session store alone: what ending a session to make room
// costs once the store is full, without the noise of HTTP around it.

package dashboard

import (
	"strconv"
	"testing"
	"time"
)

func BenchmarkSessions_CreateAtAFullStoreOf10k(b *testing.B) {
	ss := newSessions(DefaultSessionIdle, DefaultSessionMax, DefaultMaxSessions)
	now := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for i := range DefaultMaxSessions {
		ss.create("m"+strconv.Itoa(i), "k", now.Add(time.Duration(i)*time.Millisecond))
	}
	now = now.Add(time.Minute)
	ids := make([]string, 1024)
	for i := range ids {
		ids[i] = "flood" + strconv.Itoa(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		ss.create(ids[i%len(ids)], "k", now)
		i++
	}
}
