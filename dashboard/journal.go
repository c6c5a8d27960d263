// Requests and Report: the merchant's request journal with its violations
// highlighted, and the conformance report.

package dashboard

import (
	"net/http"
	"net/url"
	"strconv"
)

// requestsPerPage is the journal page size.
const requestsPerPage = 50

func (d *Dashboard) registerJournalRoutes() {
	d.mux.HandleFunc("GET "+Prefix+"/requests", d.page(d.handleRequests))
	d.mux.HandleFunc("GET "+Prefix+"/report", d.page(d.handleReport))
}

// requestsData is what the requests page shows.
type requestsData struct {
	pager
	Items          []Request
	OnlyViolations bool
}

// handleRequests handles GET /dashboard/requests.
func (d *Dashboard) handleRequests(w http.ResponseWriter, r *http.Request, v *visit) {
	q := r.URL.Query()
	data := requestsData{OnlyViolations: q.Get("violations") != ""}
	page := pageNumber(q.Get("page"), requestsPerPage)
	items, total, err := d.cfg.Journal.Requests(r.Context(), v.m, data.OnlyViolations, (page-1)*requestsPerPage, requestsPerPage)
	if err != nil {
		d.failed(r.Context(), w, r, v, "read the request journal", err)
		return
	}
	data.Items = items
	data.pager = newPager(page, total, requestsPerPage, func(page int) string {
		lq := url.Values{"page": {strconv.Itoa(page)}}
		if data.OnlyViolations {
			lq.Set("violations", "1")
		}
		return Prefix + "/requests?" + lq.Encode()
	})
	pv := v.view("Requests", "requests")
	pv.Data = data
	d.render(w, r, http.StatusOK, "requests", pv)
}

// handleReport handles GET /dashboard/report.
func (d *Dashboard) handleReport(w http.ResponseWriter, r *http.Request, v *visit) {
	rep, err := d.cfg.Journal.Report(r.Context(), v.m)
	if err != nil {
		d.failed(r.Context(), w, r, v, "build the report", err)
		return
	}
	pv := v.view("Report", "report")
	pv.Data = rep
	d.render(w, r, http.StatusOK, "report", pv)
}
