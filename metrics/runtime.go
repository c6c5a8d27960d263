// The Go runtime's figures, read at each scrape as the client library's Go collector reads them.

package metrics

import (
	"runtime"
	"runtime/debug"
	rm "runtime/metrics"
	"time"
)

// goSamples are the runtime/metrics a scrape reads, in the order of the
// constants below.
func goSamples() []rm.Sample {
	names := [...]string{
		"/gc/heap/tiny/allocs:objects",
		"/gc/heap/allocs:objects",
		"/gc/heap/frees:objects",
		"/gc/heap/allocs:bytes",
		"/memory/classes/total:bytes",
		"/memory/classes/heap/objects:bytes",
		"/memory/classes/heap/unused:bytes",
		"/memory/classes/heap/released:bytes",
		"/memory/classes/heap/free:bytes",
		"/gc/heap/objects:objects",
		"/memory/classes/heap/stacks:bytes",
		"/memory/classes/os-stacks:bytes",
		"/memory/classes/metadata/mspan/inuse:bytes",
		"/memory/classes/metadata/mspan/free:bytes",
		"/memory/classes/metadata/mcache/inuse:bytes",
		"/memory/classes/metadata/mcache/free:bytes",
		"/memory/classes/profiling/buckets:bytes",
		"/memory/classes/metadata/other:bytes",
		"/memory/classes/other:bytes",
		"/gc/heap/goal:bytes",
		"/gc/gogc:percent",
		"/gc/gomemlimit:bytes",
		"/sched/gomaxprocs:threads",
	}
	s := make([]rm.Sample, len(names))
	for i, n := range names {
		s[i].Name = n
	}
	return s
}

const (
	rmTinyAllocs = iota
	rmAllocsObjects
	rmFreesObjects
	rmAllocsBytes
	rmTotal
	rmHeapObjects
	rmHeapUnused
	rmHeapReleased
	rmHeapFree
	rmObjects
	rmStacks
	rmOSStacks
	rmMSpanInuse
	rmMSpanFree
	rmMCacheInuse
	rmMCacheFree
	rmBuckets
	rmMetadataOther
	rmOther
	rmGoal
	rmGOGC
	rmMemLimit
	rmGOMAXPROCS
)

// goFamilies reads the runtime now and returns its families, with the
// names, help texts and formulas of the client library's Go collector
// (client_golang v1.25: memStatsFromRM, baseGoCollector), so dashboards
// built on it read the same values.
func goFamilies() []family {
	s := goSamples()
	rm.Read(s)
	u := func(i int) float64 {
		if s[i].Value.Kind() != rm.KindUint64 {
			return 0 // not known to this Go release
		}
		return float64(s[i].Value.Uint64())
	}
	heapInuse := u(rmHeapObjects) + u(rmHeapUnused)
	heapIdle := u(rmHeapReleased) + u(rmHeapFree)

	var gc debug.GCStats
	gc.PauseQuantiles = make([]time.Duration, 5)
	debug.ReadGCStats(&gc)
	threads, _ := runtime.ThreadCreateProfile(nil)

	gauge := func(name, help string, v float64) family {
		return family{name, help, "gauge", func(b []byte) []byte { return appendSample(b, name, v) }}
	}
	counter := func(name, help string, v float64) family {
		return family{name, help, "counter", func(b []byte) []byte { return appendSample(b, name, v) }}
	}
	return []family{
		{"go_gc_duration_seconds", "A summary of the wall-time pause (stop-the-world) duration in garbage collection cycles.", "summary", func(b []byte) []byte {
			const name = "go_gc_duration_seconds"
			for i, q := range [...]string{"0", "0.25", "0.5", "0.75", "1"} {
				b = appendSample(b, name, gc.PauseQuantiles[i].Seconds(), "quantile", q)
			}
			b = appendSample(b, name+"_sum", gc.PauseTotal.Seconds())
			return appendSample(b, name+"_count", float64(gc.NumGC))
		}},
		gauge("go_gc_gogc_percent", "Heap size target percentage configured by the user, otherwise 100. This value is set by the GOGC environment variable, and the runtime/debug.SetGCPercent function. Sourced from /gc/gogc:percent.", u(rmGOGC)),
		gauge("go_gc_gomemlimit_bytes", "Go runtime memory limit configured by the user, otherwise math.MaxInt64. This value is set by the GOMEMLIMIT environment variable, and the runtime/debug.SetMemoryLimit function. Sourced from /gc/gomemlimit:bytes.", u(rmMemLimit)),
		gauge("go_goroutines", "Number of goroutines that currently exist.", float64(runtime.NumGoroutine())),
		{"go_info", "Information about the Go environment.", "gauge", func(b []byte) []byte {
			return appendSample(b, "go_info", 1, "version", runtime.Version())
		}},
		gauge("go_memstats_alloc_bytes", "Number of bytes allocated in heap and currently in use. Equals to /memory/classes/heap/objects:bytes.", u(rmHeapObjects)),
		counter("go_memstats_alloc_bytes_total", "Total number of bytes allocated in heap until now, even if released already. Equals to /gc/heap/allocs:bytes.", u(rmAllocsBytes)),
		gauge("go_memstats_buck_hash_sys_bytes", "Number of bytes used by the profiling bucket hash table. Equals to /memory/classes/profiling/buckets:bytes.", u(rmBuckets)),
		counter("go_memstats_frees_total", "Total number of heap objects frees. Equals to /gc/heap/frees:objects + /gc/heap/tiny/allocs:objects.", u(rmFreesObjects)+u(rmTinyAllocs)),
		gauge("go_memstats_gc_sys_bytes", "Number of bytes used for garbage collection system metadata. Equals to /memory/classes/metadata/other:bytes.", u(rmMetadataOther)),
		gauge("go_memstats_heap_alloc_bytes", "Number of heap bytes allocated and currently in use, same as go_memstats_alloc_bytes. Equals to /memory/classes/heap/objects:bytes.", u(rmHeapObjects)),
		gauge("go_memstats_heap_idle_bytes", "Number of heap bytes waiting to be used. Equals to /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", heapIdle),
		gauge("go_memstats_heap_inuse_bytes", "Number of heap bytes that are in use. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes", heapInuse),
		gauge("go_memstats_heap_objects", "Number of currently allocated objects. Equals to /gc/heap/objects:objects.", u(rmObjects)),
		gauge("go_memstats_heap_released_bytes", "Number of heap bytes released to OS. Equals to /memory/classes/heap/released:bytes.", u(rmHeapReleased)),
		gauge("go_memstats_heap_sys_bytes", "Number of heap bytes obtained from system. Equals to /memory/classes/heap/objects:bytes + /memory/classes/heap/unused:bytes + /memory/classes/heap/released:bytes + /memory/classes/heap/free:bytes.", heapInuse+heapIdle),
		gauge("go_memstats_last_gc_time_seconds", "Number of seconds since 1970 of last garbage collection.", float64(gc.LastGC.UnixNano())/1e9),
		counter("go_memstats_mallocs_total", "Total number of heap objects allocated, both live and gc-ed. Semantically a counter version for go_memstats_heap_objects gauge. Equals to /gc/heap/allocs:objects + /gc/heap/tiny/allocs:objects.", u(rmAllocsObjects)+u(rmTinyAllocs)),
		gauge("go_memstats_mcache_inuse_bytes", "Number of bytes in use by mcache structures. Equals to /memory/classes/metadata/mcache/inuse:bytes.", u(rmMCacheInuse)),
		gauge("go_memstats_mcache_sys_bytes", "Number of bytes used for mcache structures obtained from system. Equals to /memory/classes/metadata/mcache/inuse:bytes + /memory/classes/metadata/mcache/free:bytes.", u(rmMCacheInuse)+u(rmMCacheFree)),
		gauge("go_memstats_mspan_inuse_bytes", "Number of bytes in use by mspan structures. Equals to /memory/classes/metadata/mspan/inuse:bytes.", u(rmMSpanInuse)),
		gauge("go_memstats_mspan_sys_bytes", "Number of bytes used for mspan structures obtained from system. Equals to /memory/classes/metadata/mspan/inuse:bytes + /memory/classes/metadata/mspan/free:bytes.", u(rmMSpanInuse)+u(rmMSpanFree)),
		gauge("go_memstats_next_gc_bytes", "Number of heap bytes when next garbage collection will take place. Equals to /gc/heap/goal:bytes.", u(rmGoal)),
		gauge("go_memstats_other_sys_bytes", "Number of bytes used for other system allocations. Equals to /memory/classes/other:bytes.", u(rmOther)),
		gauge("go_memstats_stack_inuse_bytes", "Number of bytes obtained from system for stack allocator in non-CGO environments. Equals to /memory/classes/heap/stacks:bytes.", u(rmStacks)),
		gauge("go_memstats_stack_sys_bytes", "Number of bytes obtained from system for stack allocator. Equals to /memory/classes/heap/stacks:bytes + /memory/classes/os-stacks:bytes.", u(rmStacks)+u(rmOSStacks)),
		gauge("go_memstats_sys_bytes", "Number of bytes obtained from system. Equals to /memory/classes/total:byte.", u(rmTotal)),
		gauge("go_sched_gomaxprocs_threads", "The current runtime.GOMAXPROCS setting, or the number of operating system threads that can execute user-level Go code simultaneously. Sourced from /sched/gomaxprocs:threads.", u(rmGOMAXPROCS)),
		gauge("go_threads", "Number of OS threads created.", float64(threads)),
	}
}
