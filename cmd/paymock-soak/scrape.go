// Reading the server's /metrics: the few figures a soak watches, from the
// Prometheus text format.

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// sample is one reading of /metrics.
type sample struct {
	At          time.Duration // since the merchants started
	RSS         float64       // process_resident_memory_bytes
	HeapInuse   float64       // go_memstats_heap_inuse_bytes
	Goroutines  float64       // go_goroutines
	Status5xx   float64       // paymock_requests_total with a 5xx status, all operations
	Requests    float64       // paymock_requests_total, all
	Created     float64       // paymock_webhook_events_created_total
	Delivered   float64       // paymock_webhook_events_finished_total{state="delivered"}
	Failed      float64       // ... {state="failed"}
	Interrupted float64       // ... {state="interrupted"}
	// Attempts are paymock_webhook_attempts_total by outcome.
	Attempts  map[string]float64
	Merchants float64 // paymock_merchants
	Timers    float64 // paymock_scheduled_timers
}

// Pending is what the server has yet to finish: created minus finished.
func (s sample) Pending() float64 { return s.Created - s.Delivered - s.Failed - s.Interrupted }

// scraper reads one server's /metrics.
type scraper struct {
	url    string
	client http.Client
}

func (s *scraper) read(ctx context.Context) (sample, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return sample{}, err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return sample{}, fmt.Errorf("read /metrics: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sample{}, fmt.Errorf("read /metrics: status %d", resp.StatusCode)
	}
	return parseMetrics(resp.Body)
}

// parseMetrics reads the series a soak watches from the text format and
// ignores the rest. A watched series that is missing is an error: a
// renamed metric must not read as a healthy zero.
func parseMetrics(r io.Reader) (sample, error) {
	s := sample{Attempts: map[string]float64{}}
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		name, labels, value, ok := splitSeries(line)
		if !ok {
			return s, fmt.Errorf("read /metrics: a line that is not a series: %q", line)
		}
		seen[name] = true
		switch name {
		case "process_resident_memory_bytes":
			s.RSS = value
		case "go_memstats_heap_inuse_bytes":
			s.HeapInuse = value
		case "go_goroutines":
			s.Goroutines = value
		case "paymock_requests_total":
			s.Requests += value
			if strings.HasPrefix(labels["status"], "5") {
				s.Status5xx += value
			}
		case "paymock_webhook_events_created_total":
			s.Created = value
		case "paymock_webhook_events_finished_total":
			switch labels["state"] {
			case "delivered":
				s.Delivered = value
			case "failed":
				s.Failed = value
			case "interrupted":
				s.Interrupted = value
			default:
				return s, fmt.Errorf("read /metrics: a finished state soak does not know: %q", line)
			}
		case "paymock_webhook_attempts_total":
			s.Attempts[labels["outcome"]] = value
		case "paymock_merchants":
			s.Merchants = value
		case "paymock_scheduled_timers":
			s.Timers = value
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("read /metrics: %w", err)
	}
	for _, name := range []string{
		"process_resident_memory_bytes", "go_memstats_heap_inuse_bytes", "go_goroutines",
		"paymock_webhook_events_created_total", "paymock_webhook_events_finished_total",
		"paymock_webhook_attempts_total", "paymock_merchants", "paymock_scheduled_timers",
	} {
		if !seen[name] {
			return s, fmt.Errorf("read /metrics: no %s", name)
		}
	}
	return s, nil
}

// splitSeries splits `name{a="x",b="y"} 12.5 [timestamp]`.
func splitSeries(line string) (name string, labels map[string]string, value float64, ok bool) {
	rest := line
	if i := strings.IndexByte(line, '{'); i >= 0 {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return "", nil, 0, false
		}
		name, rest = line[:i], line[j+1:]
		labels = map[string]string{}
		for _, kv := range splitLabels(line[i+1 : j]) {
			k, v, found := strings.Cut(kv, "=")
			if !found {
				return "", nil, 0, false
			}
			uq, err := strconv.Unquote(v)
			if err != nil {
				return "", nil, 0, false
			}
			labels[k] = uq
		}
	} else {
		sp := strings.IndexByte(line, ' ')
		if sp < 0 {
			return "", nil, 0, false
		}
		name, rest = line[:sp], line[sp:]
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 {
		return "", nil, 0, false
	}
	v, err := strconv.ParseFloat(fields[0], 64)
	if err != nil {
		return "", nil, 0, false
	}
	return name, labels, v, true
}

// splitLabels splits a="x",b="y" at the commas outside quotes.
func splitLabels(s string) []string {
	var out []string
	inQuote, esc, start := false, false, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case esc:
			esc = false
		case c == '\\':
			esc = true
		case c == '"':
			inQuote = !inQuote
		case c == ',' && !inQuote:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}
