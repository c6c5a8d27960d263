// Rendering: the embedded templates and stylesheet, what every page shows
// around its content, and how values read to a person.

package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/paymock/paymock"
)

//go:embed templates
var files embed.FS

// assetPath serves the dashboard's own stylesheet, which adds the layout of
// a wider page (navigation, tables, timeline) to the hosted pages' one.
const assetPath = Prefix + "/assets/dashboard.css"

// pages are what every page links to. The templates and stylesheet
// (sharedAssets) are parsed on the first page served, not in New: most
// runs never open the dashboard.
type pages struct {
	stylesheetURL string // the hosted pages' stylesheet
}

func newPages(stylesheetURL string) (*pages, error) {
	return &pages{stylesheetURL: stylesheetURL}, nil
}

// assets are the dashboard's parsed templates and stylesheet: made from
// embedded files, as immutable as they are, so parsed once per process and
// shared by every dashboard (paymocktest starts a sandbox per test).
type assets struct {
	templates map[string]*template.Template
	css       []byte
	cssURL    string
}

var sharedAssets = sync.OnceValues(func() (*assets, error) {
	layout, err := template.New("layout.html").Funcs(templateFuncs()).ParseFS(files, "templates/layout.html", "templates/pager.html")
	if err != nil {
		return nil, fmt.Errorf("dashboard layout: %w", err)
	}
	a := &assets{templates: make(map[string]*template.Template)}
	// One template per page: the layout plus the page's own content.
	for _, name := range []string{"sign-in", "message", "payments", "payment", "api-keys", "webhooks", "endpoint", "clock", "requests", "report"} {
		t, err := layout.Clone()
		if err == nil {
			t, err = t.ParseFS(files, "templates/"+name+".html")
		}
		if err != nil {
			return nil, fmt.Errorf("dashboard page %s: %w", name, err)
		}
		a.templates[name] = t
	}
	a.css, err = fs.ReadFile(files, "templates/dashboard.css")
	if err != nil {
		return nil, fmt.Errorf("dashboard stylesheet: %w", err)
	}
	sum := sha256.Sum256(a.css)
	a.cssURL = assetPath + "?v=" + hex.EncodeToString(sum[:6])
	return a, nil
})

// view is what the layout shows around a page's content.
type view struct {
	Title         string
	Section       string // the navigation entry to mark as current
	StylesheetURL string
	DashboardCSS  string
	Merchant      string // empty when signed out: no navigation
	MerchantID    string
	CSRF          string
	Flash         string
	Error         string
	Data          any
}

// render writes a page. A template that fails is a bug: the person gets a
// short apology and the log the details.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, status int, name string, v view) {
	v.StylesheetURL = d.pages.stylesheetURL
	var b bytes.Buffer
	a, err := sharedAssets()
	if err == nil {
		v.DashboardCSS = a.cssURL
		err = a.templates[name].ExecuteTemplate(&b, "layout.html", v)
	}
	if err != nil {
		d.log.ErrorContext(r.Context(), "render dashboard page", "page", name, "error", err)
		b.Reset()
		b.WriteString(`<!doctype html><html lang="en"><meta charset="utf-8"><title>Error · paymock dashboard</title><h1>Something went wrong</h1><p>This page could not be shown. This is a paymock bug; the server log has the details.</p></html>`)
		status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(b.Bytes())
}

// serveCSS serves the dashboard's stylesheet.
func (d *Dashboard) serveCSS(w http.ResponseWriter, r *http.Request) {
	a, err := sharedAssets()
	if err != nil {
		d.log.ErrorContext(r.Context(), "dashboard stylesheet", "error", err)
		http.Error(w, "the stylesheet could not be read; this is a paymock bug", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/css; charset=utf-8")
	h.Set("Cache-Control", "public, max-age=86400")
	_, _ = w.Write(a.css)
}

func templateFuncs() template.FuncMap {
	return template.FuncMap{
		"when":     when,
		"iso":      iso,
		"money":    money,
		"percent":  func(f float64) string { return strconv.FormatFloat(f*100, 'f', 0, 64) + "%" },
		"add":      func(a, b int) int { return a + b },
		"duration": func(ms int64) string { return strconv.FormatInt(ms, 10) + " ms" },
		"msf":      func(ms float64) string { return strconv.FormatFloat(ms, 'f', 1, 64) + " ms" },
		"statusOK": func(code int) bool { return code >= 200 && code < 300 },
		"route":    route,
		// The most distinct violations a report lists per operation.
		"distinctViolations": func() int { return paymock.MaxDistinctViolations },
	}
}

// longPiece is the most characters a piece of a route has and still is
// kept whole: an id with its prefix (28) is, and so many characters fit
// the cell of a phone 320 px wide (34 do).
const longPiece = 32

// route is a request line ("GET /api/v1/payments/{id}", a query after
// it) as HTML that a narrow cell breaks after a "/" (and before the query
// and after each "&"): every piece between those points is kept whole, so
// no line ends inside a segment such as "{id}". A piece longer than
// longPiece (a cursor, an id a client made up, a query of accents) may
// break anywhere instead: kept whole, it made the page scroll sideways.
func route(method, path, query string) template.HTML {
	var b strings.Builder
	piece := func(s string) {
		if utf8.RuneCountInString(s) > longPiece {
			b.WriteString(`<span class="long">`)
		} else {
			b.WriteString(`<span class="nowrap">`)
		}
		b.WriteString(template.HTMLEscapeString(s))
		b.WriteString(`</span>`)
	}
	parts := strings.SplitAfter(method+" "+path, "/")
	for i, p := range parts {
		if i > 0 {
			b.WriteString("<wbr>")
		}
		piece(p)
	}
	if query != "" {
		for i, q := range strings.SplitAfter(query, "&") {
			if i == 0 {
				q = "?" + q
			}
			b.WriteString("<wbr>")
			piece(q)
		}
	}
	return template.HTML(b.String()) // every piece escaped above
}

// readable is how times read on every page: the merchant's clock, UTC.
const readable = "2 Jan 2006, 15:04:05 UTC"

// asTime reads a time.Time, or a wire-form timestamp as the event and
// journal records carry them.
func asTime(v any) (time.Time, bool) {
	switch t := v.(type) {
	case time.Time:
		return t, !t.IsZero()
	case string:
		p, err := time.Parse(paymock.TimeLayout, t)
		return p, err == nil
	}
	return time.Time{}, false
}

// when is a time for a person; "—" for none.
func when(v any) string {
	if t, ok := asTime(v); ok {
		return t.UTC().Format(readable)
	}
	if s, ok := v.(string); ok && s != "" {
		return s
	}
	return "—"
}

// iso is a time for a <time datetime> attribute.
func iso(v any) string {
	if t, ok := asTime(v); ok {
		return paymock.FormatTime(t)
	}
	return ""
}

// money is an amount as a checkout shows it: "$1,234.50".
func money(a paymock.Amount, c paymock.Currency) string {
	sign := string(c) + " "
	switch c {
	case paymock.USD:
		sign = "$"
	case paymock.EUR:
		sign = "€"
	case paymock.GBP:
		sign = "£"
	case paymock.CAD:
		sign = "CA$"
	}
	neg := a < 0
	if neg {
		a = -a
	}
	units := strconv.FormatInt(int64(a/100), 10)
	var b []byte
	if neg {
		b = append(b, '-')
	}
	b = append(b, sign...)
	for i := range len(units) {
		if i > 0 && (len(units)-i)%3 == 0 {
			b = append(b, ',')
		}
		b = append(b, units[i])
	}
	cents := a % 100
	return string(append(b, '.', byte('0'+cents/10), byte('0'+cents%10)))
}
