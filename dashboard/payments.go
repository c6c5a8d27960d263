// Payments: the list (newest first, paged, filtered by status, searched by
// id or customer email), one payment with its timeline, and its outcome
// buttons.

package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/paymock/paymock"
)

const (
	perPage = 20
	// scanChunk is how many payments a filtered list reads from the store
	// at a time.
	scanChunk = 500
)

// SearchesAtOnce is how many filtered searches of the payments (a status
// or an email searched for) run at once in all, and SearchesPerMerchant
// how many of them one merchant's. A search reads the merchant's whole
// list through: over 10,000 of the largest payments it costs 0.5 to
// 0.9 s of CPU and holds a chunk of them decoded, so 16 at once slowed
// another merchant's API calls a hundredfold and grew the process by
// 800 MB. Four at once keep most of the cores and memory for everyone
// else; one per merchant is what a person searching needs (the next
// search of the same merchant waits about a second), so one merchant's
// many searches wait on each other, and filling the four takes four
// merchants. The next search waits for a slot (Config.SearchWait).
const (
	SearchesAtOnce      = 4
	SearchesPerMerchant = 1
)

// errSearchesBusy is a search that found no slot in Config.SearchWait.
var errSearchesBusy = errors.New("dashboard: every search slot stayed taken")

func (d *Dashboard) registerPaymentRoutes() {
	d.mux.HandleFunc("GET "+Prefix+"/payments", d.page(d.handlePayments))
	d.mux.HandleFunc("GET "+Prefix+"/payments/{id}", d.page(d.handlePayment))
	d.mux.HandleFunc("POST "+Prefix+"/payments/{id}", d.action(d.handlePaymentAction))
}

// paymentsData is what the payments list shows.
type paymentsData struct {
	pager
	Items    []paymock.Payment
	Status   string // the filter, "" for all
	Query    string
	Statuses []string
	Filtered bool
}

// handlePayments handles GET /dashboard/payments.
func (d *Dashboard) handlePayments(w http.ResponseWriter, r *http.Request, v *visit) {
	q := r.URL.Query()
	data := paymentsData{
		Status:   q.Get("status"),
		Query:    strings.TrimSpace(q.Get("q")),
		Statuses: []string{string(paymock.StatusPending), string(paymock.StatusCompleted), string(paymock.StatusExpired), string(paymock.StatusFailed)},
	}
	data.Filtered = data.Status != "" || data.Query != ""
	pv := v.view("Payments", "payments")
	page := pageNumber(q.Get("page"), perPage)
	status := http.StatusOK
	switch paymock.Status(data.Status) {
	case "", paymock.StatusPending, paymock.StatusCompleted, paymock.StatusExpired, paymock.StatusFailed:
		items, total, err := d.findPayments(r.Context(), v.m, paymock.Status(data.Status), data.Query, (page-1)*perPage, perPage)
		switch {
		case err == nil:
		case r.Context().Err() != nil:
			// The browser went away (a new search, a closed tab): nobody
			// reads an answer, and it is no failure of paymock's.
			d.log.InfoContext(r.Context(), "dashboard search dropped: its client went away", "merchant", v.m.ID)
			return
		case errors.Is(err, errSearchesBusy):
			d.log.WarnContext(r.Context(), "dashboard search refused: every search slot stayed taken", "merchant", v.m.ID, "waited", d.cfg.SearchWait)
			d.searchesBusy(w, r, v)
			return
		default:
			d.failed(r.Context(), w, r, v, "list the payments", err)
			return
		}
		data.Items, data.Total = items, total
	default:
		status = http.StatusBadRequest
		pv.Error = "There is no status “" + data.Status + "”: choose pending, completed, expired or failed."
	}
	data.pager = newPager(page, data.Total, perPage, func(page int) string {
		lq := url.Values{}
		if data.Status != "" {
			lq.Set("status", data.Status)
		}
		if data.Query != "" {
			lq.Set("q", data.Query)
		}
		lq.Set("page", strconv.Itoa(page))
		return Prefix + "/payments?" + lq.Encode()
	})
	pv.Data = data
	d.render(w, r, status, "payments", pv)
}

// findPayments lists a merchant's payments newest first. Without a filter
// it is one store call; a payment id is one look-up; anything else reads
// the list through, matching the status and the email, in one of the
// searches' slots (errSearchesBusy when none came free in time). A scan
// stops between chunks once ctx is done.
func (d *Dashboard) findPayments(ctx context.Context, m *paymock.Merchant, status paymock.Status, query string, offset, limit int) ([]paymock.Payment, int, error) {
	if status == "" && query == "" {
		return d.cfg.Payments.List(ctx, m.ID, offset, limit)
	}
	if strings.HasPrefix(query, "pay_") && !strings.Contains(query, "@") {
		p, err := d.cfg.Payments.Get(ctx, m.ID, query)
		if isNotFound(err) || err == nil && status != "" && p.Status != status {
			return []paymock.Payment{}, 0, nil
		}
		if err != nil {
			return nil, 0, err
		}
		if offset > 0 {
			return []paymock.Payment{}, 1, nil
		}
		return []paymock.Payment{p}, 1, nil
	}
	needle := strings.ToLower(query)
	match := func(p paymock.Payment) bool {
		return (status == "" || p.Status == status) &&
			(needle == "" || p.ID == query || strings.Contains(strings.ToLower(p.Customer.Email), needle))
	}
	if !d.acquireSearch(ctx, m.ID) {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		return nil, 0, errSearchesBusy
	}
	defer d.searches.Release(m.ID)
	out := []paymock.Payment{}
	// A payment created during the scan shifts the list by one: the seen
	// set keeps it from being counted twice.
	seen := make(map[string]bool)
	total := 0
	for at := 0; ; at += scanChunk {
		if err := ctx.Err(); err != nil {
			return nil, 0, err // nobody waits for the rest
		}
		chunk, all, err := d.cfg.Payments.List(ctx, m.ID, at, scanChunk)
		if err != nil {
			return nil, 0, err
		}
		for _, p := range chunk {
			if seen[p.ID] || !match(p) {
				continue
			}
			seen[p.ID] = true
			if total >= offset && len(out) < limit {
				out = append(out, p)
			}
			total++
		}
		if len(chunk) < scanChunk || at+scanChunk >= all {
			return out, total, nil
		}
	}
}

// acquireSearch waits, while ctx lasts and at most Config.SearchWait, for
// a slot to scan a merchant's payments in, and reports whether it got
// one. Release gives it back once the scan is over.
func (d *Dashboard) acquireSearch(ctx context.Context, merchantID string) bool {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.SearchWait)
	defer cancel()
	return d.searches.Acquire(ctx, merchantID)
}

// searchesBusy answers a search that waited for a slot in vain: a 503
// that says trying again is the remedy, and a link to do so.
func (d *Dashboard) searchesBusy(w http.ResponseWriter, r *http.Request, v *visit) {
	const heading = "Searches busy"
	pv := v.view(heading, "payments")
	pv.Data = messageData{
		Code:    http.StatusServiceUnavailable,
		Heading: heading,
		Message: "Too many searches of payments are running in the sandbox now, so this one was not started. Try again in a moment.",
		Retry:   localPath(r.URL.RequestURI()),
	}
	w.Header().Set("Retry-After", "1")
	d.render(w, r, http.StatusServiceUnavailable, "message", pv)
}

// paymentData is what a payment's page shows.
type paymentData struct {
	P           paymock.Payment
	Pending     bool
	CheckoutURL string
	Metadata    string // indented JSON
	Events      []eventView
	Now         string // the merchant's clock
}

// eventView is an event of the timeline, with its body ready to read.
type eventView struct {
	Event
	Body string
}

// handlePayment handles GET /dashboard/payments/{id}.
func (d *Dashboard) handlePayment(w http.ResponseWriter, r *http.Request, v *visit) {
	ctx := r.Context()
	id := r.PathValue("id")
	p, err := d.cfg.Payments.Get(ctx, v.m.ID, id)
	if isNotFound(err) {
		d.notFound(w, r, v, "There is no payment "+id+" in this merchant's sandbox.")
		return
	}
	if err != nil {
		d.failed(ctx, w, r, v, "read the payment", err)
		return
	}
	evs, err := d.cfg.Events.PaymentEvents(ctx, v.m, p.ID)
	if err != nil && !isNotFound(err) {
		d.failed(ctx, w, r, v, "read the payment's events", err)
		return
	}
	now, err := d.cfg.Clock.Now(ctx, v.m)
	if err != nil {
		d.failed(ctx, w, r, v, "read the merchant's clock", err)
		return
	}
	data := paymentData{
		P:           p,
		Pending:     p.Status == paymock.StatusPending,
		CheckoutURL: d.cfg.CheckoutURL(p),
		Metadata:    indentJSON(p.Metadata),
		Now:         paymock.FormatTime(now),
	}
	for _, e := range evs {
		data.Events = append(data.Events, eventView{Event: e, Body: indentJSON(e.Payload)})
	}
	pv := v.view("Payment "+p.ID, "payments")
	pv.Data = data
	d.render(w, r, http.StatusOK, "payment", pv)
}

// maxIndented bounds the indented form of a JSON value on a payment's
// page. Indenting adds a line and its indent per value, so a payment's
// largest metadata (50 values of 500 bytes of numbers, 26 kB) indents to
// ten times its size, and metadata stored before its depth was bounded
// (249 levels, 25 kB) to 12 MB. Past the bound the value is shown as
// stored: the page weighs about what the payment does.
const maxIndented = 64 << 10

// indentJSON lays out a JSON value to read; "" for none. A value whose
// indented form could pass maxIndented is shown as it is.
func indentJSON(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if indentedSize(raw) > maxIndented {
		return string(raw)
	}
	var b bytes.Buffer
	if json.Indent(&b, raw, "", "  ") != nil {
		return string(raw)
	}
	return b.String()
}

// indentedSize is an upper bound of the length of raw indented by
// json.Indent with two spaces, found without writing it: every byte stays
// (a space too: json.Indent keeps a trailing one), a bracket or comma
// outside a string adds a line break and the indent of its depth, a colon
// a space after it.
func indentedSize(raw []byte) int {
	size, depth := len(raw), 0
	for i := paymock.NextJSONStructural(raw, 0); i < len(raw); i = paymock.NextJSONStructural(raw, i+1) {
		switch raw[i] {
		case '[', '{':
			depth++
			size += 1 + 2*depth
		case ']', '}':
			depth = max(depth-1, 0)
			size += 1 + 2*depth
		case ',':
			size += 1 + 2*depth
		case ':':
			size++
		}
	}
	return size
}

// handlePaymentAction handles POST /dashboard/payments/{id}: the complete,
// fail and expire buttons, through the lifecycle like the control API. A
// refusal is shown on the payment's page.
func (d *Dashboard) handlePaymentAction(w http.ResponseWriter, r *http.Request, v *visit) {
	ctx := r.Context()
	id := r.PathValue("id")
	page := Prefix + "/payments/" + url.PathEscape(id)
	if _, err := d.cfg.Payments.Get(ctx, v.m.ID, id); err != nil {
		if isNotFound(err) {
			d.notFound(w, r, v, "There is no payment "+id+" in this merchant's sandbox, so nothing was changed.")
			return
		}
		d.failed(ctx, w, r, v, "read the payment", err)
		return
	}
	action := r.PostForm.Get("action")
	to, ok := map[string]paymock.Status{
		"complete": paymock.StatusCompleted, "fail": paymock.StatusFailed, "expire": paymock.StatusExpired,
	}[action]
	if !ok {
		d.refuse(w, r, v, page, "There is no such action: choose Complete, Fail or Expire. Nothing was changed.", "")
		return
	}
	p, err := d.cfg.Lifecycle.Act(ctx, v.m, id, to)
	if err != nil {
		if isNotFound(err) {
			d.notFound(w, r, v, "There is no payment "+id+" in this merchant's sandbox, so nothing was changed.")
			return
		}
		if msg, ok := refusal(err); ok {
			d.refuse(w, r, v, page, msg+". Nothing was changed.", "")
			return
		}
		d.failed(ctx, w, r, v, "change the payment", err)
		return
	}
	d.log.InfoContext(ctx, "dashboard payment action", "merchant", v.m.ID, "payment", id, "action", action)
	d.done(w, r, v, page, func(n *notes) {
		n.Flash = "Payment " + string(p.Status) + "."
	})
}
