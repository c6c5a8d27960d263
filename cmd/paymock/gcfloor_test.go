// The binary's collector floor leaves a GOGC or GOMEMLIMIT set by the user alone.

package main

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
)

// TestStartGCFloor_LeavesATunedCollectorAlone starts the binary's floor
// with each environment: untuned, the heap goal is at least the live
// heap plus the floor; with GOGC or GOMEMLIMIT set, GOGC stays as the
// process had it.
func TestStartGCFloor_LeavesATunedCollectorAlone(t *testing.T) {
	const before = 123 // a GOGC no floor would choose
	defer debug.SetGCPercent(debug.SetGCPercent(before))
	for _, tc := range []struct {
		name  string
		env   map[string]string
		floor bool
	}{
		{"untuned", nil, true},
		{"GOGC set", map[string]string{"GOGC": "200"}, false},
		{"GOGC off", map[string]string{"GOGC": "off"}, false},
		{"GOMEMLIMIT set", map[string]string{"GOMEMLIMIT": "1GiB"}, false},
		{"both empty: unset", map[string]string{"GOGC": "", "GOMEMLIMIT": ""}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			debug.SetGCPercent(before)
			runtime.GC()
			stop := startGCFloor(func(k string) string { return tc.env[k] })
			s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/heap/goal:bytes"}, {Name: "/gc/heap/live:bytes"}}
			metrics.Read(s)
			stop()
			gogc, goal, live := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
			switch {
			case tc.floor && goal < (live+gcFloor)*98/100:
				t.Errorf("goal %d B with %d B live: no floor of %d B under it", goal, live, gcFloor)
			case !tc.floor && gogc != before:
				t.Errorf("GOGC %d, want the process's %d left alone", gogc, before)
			}
			if p := debug.SetGCPercent(before); p != before {
				t.Errorf("GOGC %d after stop, want %d back", p, before)
			}
		})
	}
}
