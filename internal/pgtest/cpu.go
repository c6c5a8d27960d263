// The CPU time a database's backends spend, for benchmarks of the server's side.

package pgtest

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// ServerCPU starts counting the CPU time (user and system) of the
// backends serving the database at url, as Linux's /proc accounts it; the
// function returned gives what they have used since, and false where the
// server's processes cannot be read (another machine, not Linux). A
// backend that ends in between is not counted: benchmarks keep their
// pool's connections open throughout.
func ServerCPU(tb testing.TB, url string) func() (time.Duration, bool) {
	tb.Helper()
	conn, err := pgx.Connect(tb.Context(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { conn.Close(context.Background()) })
	sample := func() (map[int]time.Duration, bool) {
		rows, err := conn.Query(context.Background(), `SELECT pid FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`)
		if err != nil {
			tb.Fatal(err)
		}
		pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
		if err != nil {
			tb.Fatal(err)
		}
		used := make(map[int]time.Duration, len(pids))
		for _, pid := range pids {
			d, ok := processCPU(int(pid))
			if !ok {
				return nil, false
			}
			used[int(pid)] = d
		}
		return used, true
	}
	before, ok := sample()
	return func() (time.Duration, bool) {
		after, ok2 := sample()
		if !ok || !ok2 {
			return 0, false
		}
		var d time.Duration
		for pid, t := range after {
			d += t - before[pid] // a backend started since counts whole
		}
		return d, true
	}
}

// clockTick is USER_HZ, the unit of /proc's CPU times: 100 on every
// Linux architecture Go runs on.
const clockTick = 10 * time.Millisecond

// processCPU reads utime and stime of process pid from /proc/pid/stat.
func processCPU(pid int) (time.Duration, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from after its closing one. utime and stime are fields 14 and 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	k, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+k) * clockTick, true
}
