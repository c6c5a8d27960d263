// Package proxy is a validating pass-through in front of a deployment of
// the payments service: the merchant's client talks to it, every request
// and answer of the service API is checked against openapi.yaml (each
// violation marked client or upstream), the upstream's answer goes back
// unchanged, and the journal and report are served as a paymock serves
// them, so "paymock report" gates CI on a real sandbox's traffic too.
package proxy

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract"
	"github.com/paymock/paymock/mockserver"
)

// DefaultBodyLimit bounds a request body the proxy reads and forwards.
const DefaultBodyLimit = 8 << 20

// DefaultAnswerLimit bounds an upstream answer the proxy reads.
const DefaultAnswerLimit = 64 << 20

// Config is what a Proxy is built from.
type Config struct {
	// Upstream is the deployment's base URL.
	Upstream string
	// Client sends to the upstream; nil means one that follows no
	// redirect and leaves compression to the client.
	Client *http.Client
	// RecordDir, when set, receives each exchange as a file, its
	// credentials redacted.
	RecordDir string
	// JournalSize is how many exchanges each caller's journal keeps; 0
	// means DefaultJournalSize.
	JournalSize int
	// BodyLimit bounds a request body; 0 means DefaultBodyLimit.
	BodyLimit int64
	// AnswerLimit bounds an upstream answer; 0 means DefaultAnswerLimit.
	AnswerLimit int64
	// Logger receives a line per exchange that broke the contract; nil
	// discards them.
	Logger *slog.Logger
}

// Proxy is the pass-through; it is an http.Handler.
type Proxy struct {
	upstream *url.URL
	client   *http.Client
	doc      *contract.Document
	journal  *Journal
	recorder *recorder
	limit    int64
	answers  int64
	log      *slog.Logger
}

// New builds a proxy from cfg.
func New(cfg Config) (*Proxy, error) {
	u, err := url.Parse(cfg.Upstream)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" {
		return nil, fmt.Errorf("proxy: upstream %q: want an absolute http(s) URL without a query", cfg.Upstream)
	}
	if u.User != nil {
		return nil, errors.New("proxy: the upstream URL must not carry credentials")
	}
	u.Path = strings.TrimRight(u.Path, "/")
	docs, err := contract.Embedded()
	if err != nil {
		return nil, fmt.Errorf("proxy: %w", err)
	}
	p := &Proxy{upstream: u, client: cfg.Client, doc: docs.Service, journal: NewJournal(docs.Service, cfg.JournalSize),
		limit: cfg.BodyLimit, answers: cfg.AnswerLimit, log: cfg.Logger}
	if p.client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		// The answer goes back as the upstream sent it: no gzip asked
		// for, or undone, behind the client's back.
		tr.DisableCompression = true
		p.client = &http.Client{Transport: tr, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if p.limit <= 0 {
		p.limit = DefaultBodyLimit
	}
	if p.answers <= 0 {
		p.answers = DefaultAnswerLimit
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if cfg.RecordDir != "" {
		if p.recorder, err = newRecorder(cfg.RecordDir); err != nil {
			return nil, fmt.Errorf("proxy: %w", err)
		}
	}
	return p, nil
}

// Journal is the proxy's journal.
func (p *Proxy) Journal() *Journal { return p.journal }

// Upstream is the host the proxy forwards to, for logs.
func (p *Proxy) Upstream() string { return p.upstream.Host }

// hopByHop are the headers that belong to one connection, never
// forwarded either way.
func hopByHop() []string {
	return []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade"}
}

func copyHeader(dst, src http.Header) {
	for k, vs := range src {
		dst[k] = append([]string(nil), vs...)
	}
	for _, c := range src.Values("Connection") {
		for _, name := range strings.Split(c, ",") {
			dst.Del(strings.TrimSpace(name))
		}
	}
	for _, h := range hopByHop() {
		dst.Del(h)
	}
}

// ServeHTTP serves the journal and the report itself and forwards every
// other request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/_sandbox/report", "/_sandbox/requests":
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, &paymock.Error{Type: paymock.InvalidRequest, Code: "method_not_allowed",
				Message: r.Method + " is not allowed on " + r.URL.Path})
			return
		}
		if r.URL.Path == "/_sandbox/report" {
			p.serveReport(w, r)
		} else {
			p.serveRequests(w, r)
		}
		return
	}
	start := time.Now()
	body, err := io.ReadAll(io.LimitReader(r.Body, p.limit+1))
	if err != nil {
		writeError(w, http.StatusBadRequest, &paymock.Error{Type: paymock.InvalidRequest, Code: "body_unreadable", Message: "the request body could not be read"})
		return
	}
	if int64(len(body)) > p.limit {
		writeError(w, http.StatusRequestEntityTooLarge, &paymock.Error{Type: paymock.InvalidRequest, Code: "body_too_large",
			Message: fmt.Sprintf("paymock proxy: the request body is larger than %d bytes", p.limit)})
		return
	}
	target := *p.upstream
	target.Path = p.upstream.Path + r.URL.Path
	target.RawPath = ""
	if r.URL.RawPath != "" {
		target.RawPath = p.upstream.EscapedPath() + r.URL.RawPath
	}
	target.RawQuery = r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), r.Method, target.String(), bytes.NewReader(body))
	if err != nil {
		writeError(w, http.StatusBadRequest, &paymock.Error{Type: paymock.InvalidRequest, Code: "bad_request", Message: "paymock proxy: the request cannot be forwarded"})
		return
	}
	copyHeader(out.Header, r.Header)
	if ae := acceptable(r.Header.Get("Accept-Encoding")); ae != "" {
		out.Header.Set("Accept-Encoding", ae)
	}
	if len(body) == 0 {
		out.Body, out.ContentLength = http.NoBody, 0
	}
	resp, err := p.client.Do(out)
	if err != nil {
		p.log.WarnContext(r.Context(), "upstream unreachable", "upstream", p.upstream.Host, "error", unwrapURL(err).Error())
		writeError(w, http.StatusBadGateway, &paymock.Error{Type: paymock.APIError, Code: "upstream_unreachable",
			Message: fmt.Sprintf("paymock proxy: cannot reach %s: %v", p.upstream.Host, unwrapURL(err))})
		return
	}
	defer resp.Body.Close()
	answer, err := io.ReadAll(io.LimitReader(resp.Body, p.answers+1))
	if err != nil {
		p.log.WarnContext(r.Context(), "upstream answer unreadable", "upstream", p.upstream.Host, "error", err.Error())
		writeError(w, http.StatusBadGateway, &paymock.Error{Type: paymock.APIError, Code: "upstream_answer_unreadable",
			Message: fmt.Sprintf("paymock proxy: reading the answer of %s: %v", p.upstream.Host, err)})
		return
	}
	// Passing on the first part of a longer answer, under the upstream's
	// Content-Length, would hand the client a body cut short: a 502 that
	// says why is the honest answer.
	if int64(len(answer)) > p.answers {
		p.log.WarnContext(r.Context(), "upstream answer too large", "upstream", p.upstream.Host, "limit_bytes", p.answers)
		writeError(w, http.StatusBadGateway, &paymock.Error{Type: paymock.APIError, Code: "upstream_answer_too_large",
			Message: fmt.Sprintf("paymock proxy: the answer of %s is larger than %d bytes", p.upstream.Host, p.answers)})
		return
	}
	copyHeader(w.Header(), resp.Header)
	w.WriteHeader(resp.StatusCode)
	_, _ = w.Write(answer)

	if !strings.HasPrefix(r.URL.Path, "/api/") {
		return
	}
	x := Exchange{Request: r, Body: body, Authenticated: bearer(r.Header) != "", Status: resp.StatusCode, Header: resp.Header, Answer: answer}
	if x.Answer, x.Header, err = decoded(resp.Header, answer, p.answers); err != nil {
		x.Answer, x.Header = answer, resp.Header
	}
	op, vs := Check(r.Context(), p.doc, x)
	e := Entry{ID: "req_" + rand.Text()[:20], At: paymock.FormatTime(start), Method: contract.ShortPath(r.Method), Path: contract.ShortPath(r.URL.Path),
		Query: contract.ShortPath(r.URL.RawQuery), Operation: op, Status: resp.StatusCode,
		DurationMS: float64(time.Since(start).Microseconds()) / 1000, Violations: vs}
	p.journal.Record(caller(r.Header), e)
	if len(vs) > 0 {
		p.log.WarnContext(r.Context(), "exchange breaks the contract", "method", r.Method, "path", e.Path, "status", e.Status,
			"violations", len(vs), "first_side", vs[0].Side, "first", strings.TrimSpace(vs[0].Param+" "+vs[0].Message))
	}
	if p.recorder != nil {
		if err := p.recorder.write(x, e); err != nil {
			p.log.ErrorContext(r.Context(), "recording the exchange failed", "error", err.Error())
		}
	}
}

// bearer is the well-formed bearer token of a request, or "".
func bearer(h http.Header) string {
	tok, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer ")
	if !ok || !paymock.WellFormedKey(tok) {
		return ""
	}
	return tok
}

// caller is the journal's name of a request's key: a digest, so the
// proxy keeps no key.
func caller(h http.Header) string {
	tok := bearer(h)
	if tok == "" {
		return ""
	}
	sum := sha256.Sum256([]byte(tok))
	return hex.EncodeToString(sum[:])
}

func unwrapURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// writeError answers in the one error shape.
func writeError(w http.ResponseWriter, status int, e *paymock.Error) {
	type detail struct {
		Type    paymock.ErrorType `json:"type"`
		Code    string            `json:"code"`
		Message string            `json:"message"`
		Param   string            `json:"param,omitempty"`
	}
	body, _ := json.Marshal(map[string]detail{"error": {Type: e.Type, Code: e.Code, Message: e.Message, Param: e.Param}})
	w.Header().Set("Content-Type", "application/json")
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", "Bearer")
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// authorized is the caller of a journal or report request, or false
// after answering 401.
func authorized(w http.ResponseWriter, r *http.Request) (string, bool) {
	c := caller(r.Header)
	if c == "" {
		writeError(w, http.StatusUnauthorized, &paymock.Error{Type: paymock.Authentication, Code: "api_key_missing",
			Message: "no API key given: send the key your client uses as Authorization: Bearer <API_KEY>"})
		return "", false
	}
	return c, true
}

// serveReport handles GET /_sandbox/report: the caller's report, as JSON
// or (?format=junit) JUnit XML.
func (p *Proxy) serveReport(w http.ResponseWriter, r *http.Request) {
	c, ok := authorized(w, r)
	if !ok {
		return
	}
	rep := p.journal.Report(c)
	if r.URL.Query().Get("format") == "junit" {
		doc, err := mockserver.JUnit(rep)
		if err != nil {
			writeError(w, http.StatusInternalServerError, &paymock.Error{Type: paymock.APIError, Code: "internal", Message: "the JUnit report could not be written"})
			return
		}
		w.Header().Set("Content-Type", "application/xml")
		_, _ = w.Write(doc)
		return
	}
	writeJSON(w, rep)
}

// serveRequests handles GET /_sandbox/requests: the caller's journal,
// newest first, with page and per_page as the server takes them.
func (p *Proxy) serveRequests(w http.ResponseWriter, r *http.Request) {
	c, ok := authorized(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	page, perPage := 1, 10
	var f Filter
	for _, param := range []struct {
		name  string
		dst   *int
		max   int
		words string
	}{
		{"page", &page, 1 << 30, "a whole number from 1"},
		{"per_page", &perPage, 100, "a whole number from 1 to 100"},
		{"status", &f.Status, 599, "an HTTP status"},
	} {
		if !q.Has(param.name) {
			continue
		}
		n, err := parsePositive(q.Get(param.name))
		if err != nil || n > param.max {
			writeError(w, http.StatusBadRequest, &paymock.Error{Type: paymock.InvalidRequest, Code: "parameter_invalid",
				Message: param.name + " must be " + param.words, Param: param.name})
			return
		}
		*param.dst = n
	}
	f.Violations = q.Get("violations") == "true"
	items, total := p.journal.Entries(c, f, (page-1)*perPage, perPage)
	writeJSON(w, map[string]any{"items": items, "pagination": map[string]int{
		"page": page, "per_page": perPage, "total_items": total, "total_pages": (total + perPage - 1) / perPage}})
}

func writeJSON(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		writeError(w, http.StatusInternalServerError, &paymock.Error{Type: paymock.APIError, Code: "internal", Message: "the answer could not be written"})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

func parsePositive(s string) (int, error) {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, errors.New("not a positive whole number")
	}
	return n, nil
}
