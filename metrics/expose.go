// The Prometheus text exposition format (0.0.4), written as the client library writes it.

package metrics

import (
	"io"
	"log/slog"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// ContentType is the Content-Type of a scrape's answer.
const ContentType = "text/plain; version=0.0.4; charset=utf-8"

// family is one metric family of a scrape: its samples are appended by
// write.
type family struct {
	name, help, typ string
	write           func(b []byte) []byte
}

// Handler serves the metrics in the Prometheus text format. More than
// maxScrapes at once get a 503 in the API's error shape. On a nil *Metrics
// it answers 404, as if the route did not exist.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return http.HandlerFunc(m.serve)
}

func (m *Metrics) serve(w http.ResponseWriter, r *http.Request) {
	select {
	case m.scrapes <- struct{}{}:
		defer func() { <-m.scrapes }()
	default:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"type":"api_error","code":"too_many_scrapes","message":"more than `+
			strconv.Itoa(maxScrapes)+` scrapes of /metrics at once; try again later"}}`)
		return
	}
	body := m.AppendText(make([]byte, 0, 16<<10))
	w.Header().Set("Content-Type", ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	if _, err := w.Write(body); err != nil {
		m.logger.LogAttrs(r.Context(), slog.LevelDebug, "serve metrics", slog.String("err", err.Error()))
	}
}

// WriteTo writes what a scrape would answer to w, for a caller that reads
// the metrics without HTTP.
func (m *Metrics) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(m.AppendText(nil))
	return int64(n), err
}

// AppendText appends what a scrape answers to b: every family, sorted by
// name.
func (m *Metrics) AppendText(b []byte) []byte {
	fams := m.families()
	fams = append(fams, goFamilies()...)
	fams = append(fams, processFamilies()...)
	sort.Slice(fams, func(i, j int) bool { return fams[i].name < fams[j].name })
	for _, f := range fams {
		b = append(b, "# HELP "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = appendEscaped(b, f.help, false)
		b = append(b, "\n# TYPE "...)
		b = append(b, f.name...)
		b = append(b, ' ')
		b = append(b, f.typ...)
		b = append(b, '\n')
		b = f.write(b)
	}
	return b
}

// families are paymock's own.
func (m *Metrics) families() []family {
	fams := []family{
		{"paymock_requests_total", "Requests answered, by operation and HTTP status (injected faults included).", "counter", m.appendRequests},
		{"paymock_request_duration_seconds", "Time from receiving a request to its answer, by operation (injected delays included).", "histogram", m.appendDurations},
		{"paymock_contract_violations_total", "Requests refused by the contract (side=request) and answers that broke it (side=response).", "counter", m.violations.appender("paymock_contract_violations_total")},
		{"paymock_webhook_attempts_total", "Webhook POSTs, by what came of them.", "counter", m.attempts.appender("paymock_webhook_attempts_total")},
		{"paymock_webhook_events_created_total", "Webhook deliveries queued (one per event, endpoint and round); each ends in paymock_webhook_events_finished_total.", "counter", func(b []byte) []byte {
			return appendSample(b, "paymock_webhook_events_created_total", float64(m.created.Load()))
		}},
		{"paymock_webhook_events_finished_total", "Webhook deliveries that reached a final state; created minus finished are pending.", "counter", m.finished.appender("paymock_webhook_events_finished_total")},
		{"paymock_injected_faults_total", "Faults injected on purpose, by target (api or webhooks).", "counter", m.faults.appender("paymock_injected_faults_total")},
	}
	for _, g := range m.gauges {
		fams = append(fams, family{g.name, g.help, "gauge", func(b []byte) []byte {
			return appendSample(b, g.name, float64(g.fn()))
		}})
	}
	return fams
}

// appendRequests writes the request counters that are not zero, by
// operation name, then status ("100".."599" sort as numbers do; "other"
// after them).
func (m *Metrics) appendRequests(b []byte) []byte {
	const name = "paymock_requests_total"
	for _, op := range m.opOrder {
		for slot := range statusSlots {
			n := m.requests[op*statusSlots+slot].Load()
			if n == 0 {
				continue
			}
			status := other
			if slot < statusSlots-1 {
				status = strconv.Itoa(slot + minStatus)
			}
			b = appendSample(b, name, float64(n), "operation", m.opNames[op], "status", status)
		}
	}
	return b
}

// appendDurations writes the histogram of each operation that has one.
func (m *Metrics) appendDurations(b []byte) []byte {
	const name = "paymock_request_duration_seconds"
	bounds := bucketBounds()
	for _, op := range m.opOrder {
		h := &m.durations[op]
		var counts [numBounds + 1]uint64
		var total uint64
		for i := range counts {
			counts[i] = h.buckets[i].Load()
			total += counts[i]
		}
		if total == 0 {
			continue
		}
		opName := m.opNames[op]
		var cum uint64
		for i, bound := range bounds {
			cum += counts[i]
			b = appendSample(b, name+"_bucket", float64(cum), "operation", opName, "le", formatFloat(bound))
		}
		b = appendSample(b, name+"_bucket", float64(total), "operation", opName, "le", "+Inf")
		b = appendSample(b, name+"_sum", float64(h.sum.Load())/1e9, "operation", opName)
		b = appendSample(b, name+"_count", float64(total), "operation", opName)
	}
	return b
}

// appender writes the counter's series sorted by label value: the known
// values always, "other" once something was counted under it.
func (f *fixedCounter) appender(name string) func(b []byte) []byte {
	return func(b []byte) []byte {
		type series struct {
			value string
			n     uint64
		}
		all := make([]series, 0, len(f.counts))
		for i, v := range f.values {
			all = append(all, series{v, f.counts[i].Load()})
		}
		if n := f.counts[len(f.values)].Load(); n > 0 {
			all = append(all, series{other, n})
		}
		sort.Slice(all, func(i, j int) bool { return all[i].value < all[j].value })
		for _, s := range all {
			b = appendSample(b, name, float64(s.n), f.label, s.value)
		}
		return b
	}
}

// appendSample appends one sample line; labels are name, value pairs.
func appendSample(b []byte, name string, v float64, labels ...string) []byte {
	b = append(b, name...)
	if len(labels) > 0 {
		b = append(b, '{')
		for i := 0; i+1 < len(labels); i += 2 {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, labels[i]...)
			b = append(b, `="`...)
			b = appendEscaped(b, labels[i+1], true)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = appendFloat(b, v)
	return append(b, '\n')
}

// appendEscaped escapes as the format asks: a backslash and a line feed
// everywhere, a double quote in label values only.
func appendEscaped(b []byte, s string, quote bool) []byte {
	if !strings.ContainsAny(s, "\\\n\"") {
		return append(b, s...)
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// appendFloat formats v as the client library does: shortest form, and
// the format's spellings of infinities and NaN.
func appendFloat(b []byte, v float64) []byte {
	switch {
	case v == 1:
		return append(b, '1')
	case v == 0:
		return append(b, '0')
	case v == -1:
		return append(b, "-1"...)
	case math.IsNaN(v):
		return append(b, "NaN"...)
	case math.IsInf(v, +1):
		return append(b, "+Inf"...)
	case math.IsInf(v, -1):
		return append(b, "-Inf"...)
	}
	return strconv.AppendFloat(b, v, 'g', -1, 64)
}

func formatFloat(v float64) string { return string(appendFloat(nil, v)) }
