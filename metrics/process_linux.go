// The process's figures on Linux, read at each scrape from /proc/self.

package metrics

import (
	"bytes"
	"math"
	"os"
	"strconv"
	"strings"
)

// userHZ is the kernel's clock tick in /proc/self/stat; procfs assumes the
// same 100 (sysconf(_SC_CLK_TCK) needs cgo, and is 100 on every Linux Go
// supports).
const userHZ = 100

// processFamilies has the names, help texts and units of the client
// library's process collector, which reads the same files through procfs.
// A file that cannot be read leaves its families out of that scrape.
func processFamilies() []family {
	var fams []family
	gauge := func(name, help string, v float64) {
		fams = append(fams, family{name, help, "gauge", func(b []byte) []byte { return appendSample(b, name, v) }})
	}
	counter := func(name, help string, v float64) {
		fams = append(fams, family{name, help, "counter", func(b []byte) []byte { return appendSample(b, name, v) }})
	}

	if st, ok := readStat(); ok {
		counter("process_cpu_seconds_total", "Total user and system CPU time spent in seconds.", float64(st.utime+st.stime)/userHZ)
		gauge("process_virtual_memory_bytes", "Virtual memory size in bytes.", float64(st.vsize))
		gauge("process_resident_memory_bytes", "Resident memory size in bytes.", float64(st.rss*uint64(os.Getpagesize())))
		if boot, ok := bootTime(); ok {
			gauge("process_start_time_seconds", "Start time of the process since unix epoch in seconds.", boot+float64(st.starttime)/userHZ)
		}
	}
	if d, err := os.ReadDir("/proc/self/fd"); err == nil {
		gauge("process_open_fds", "Number of open file descriptors.", float64(len(d)))
	}
	if files, space, ok := readLimits(); ok {
		gauge("process_max_fds", "Maximum number of open file descriptors.", files)
		gauge("process_virtual_memory_max_bytes", "Maximum amount of virtual memory available in bytes.", space)
	}
	if in, out, ok := readNetstat(); ok {
		counter("process_network_receive_bytes_total", "Number of bytes received by the process over the network.", in)
		counter("process_network_transmit_bytes_total", "Number of bytes sent by the process over the network.", out)
	}
	return fams
}

type procStat struct {
	utime, stime, starttime, vsize, rss uint64
}

// readStat reads /proc/self/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from the last ')'.
func readStat() (procStat, bool) {
	data, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return procStat{}, false
	}
	end := bytes.LastIndexByte(data, ')')
	if end < 0 {
		return procStat{}, false
	}
	f := strings.Fields(string(data[end+1:])) // f[0] is field 3, state
	if len(f) < 22 {
		return procStat{}, false
	}
	var st procStat
	var ok = true
	num := func(field int) uint64 {
		v, err := strconv.ParseUint(f[field-3], 10, 64)
		if err != nil {
			ok = false
		}
		return v
	}
	st.utime, st.stime = num(14), num(15)
	st.starttime, st.vsize = num(22), num(23)
	// rss (field 24) is signed in the kernel's format; it is never
	// negative for a live process.
	st.rss = num(24)
	return st, ok
}

// bootTime is btime of /proc/stat: the boot's time in seconds since the
// epoch, which a process's start ticks count from.
func bootTime() (float64, bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		if v, found := strings.CutPrefix(line, "btime "); found {
			n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
			return float64(n), err == nil
		}
	}
	return 0, false
}

// readLimits reads the soft limits on open files and address space from
// /proc/self/limits; "unlimited" is the largest uint64, as procfs reads it.
func readLimits() (files, space float64, ok bool) {
	data, err := os.ReadFile("/proc/self/limits")
	if err != nil {
		return 0, 0, false
	}
	var foundFiles, foundSpace bool
	for line := range strings.Lines(string(data)) {
		var dst *float64
		var rest string
		if r, found := strings.CutPrefix(line, "Max open files"); found {
			dst, rest, foundFiles = &files, r, true
		} else if r, found := strings.CutPrefix(line, "Max address space"); found {
			dst, rest, foundSpace = &space, r, true
		} else {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, 0, false
		}
		if f[0] == "unlimited" {
			*dst = math.MaxUint64
			continue
		}
		n, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return 0, 0, false
		}
		*dst = float64(n)
	}
	return files, space, foundFiles && foundSpace
}

// readNetstat reads InOctets and OutOctets of the IpExt lines of
// /proc/self/net/netstat (a header line of names, then one of values).
func readNetstat() (in, out float64, ok bool) {
	data, err := os.ReadFile("/proc/self/net/netstat")
	if err != nil {
		return 0, 0, false
	}
	var names []string
	for line := range strings.Lines(string(data)) {
		rest, found := strings.CutPrefix(line, "IpExt:")
		if !found {
			continue
		}
		if names == nil {
			names = strings.Fields(rest)
			continue
		}
		for i, v := range strings.Fields(rest) {
			if i >= len(names) {
				break
			}
			n, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return 0, 0, false
			}
			switch names[i] {
			case "InOctets":
				in = n
			case "OutOctets":
				out = n
			}
		}
		return in, out, true
	}
	return 0, 0, false
}
