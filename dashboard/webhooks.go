// Developers -> Webhooks: endpoints (add, reveal the secret, disable,
// delete, send a test event), their deliveries with every attempt, and
// redelivering an event.

package dashboard

import (
	"net/http"
	"net/url"
	"strings"
)

const (
	// recentDeliveries is how many deliveries the list shows per endpoint;
	// the endpoint's own page shows up to endpointDeliveries.
	recentDeliveries   = 5
	endpointDeliveries = 100
	maxEndpointURL     = 2048
)

func (d *Dashboard) registerWebhookRoutes() {
	m := d.mux
	m.HandleFunc("GET "+Prefix+"/webhooks", d.page(d.handleWebhooks))
	m.HandleFunc("POST "+Prefix+"/webhooks", d.action(d.handleAddEndpoint))
	m.HandleFunc("GET "+Prefix+"/webhooks/{id}", d.page(d.handleEndpoint))
	m.HandleFunc("POST "+Prefix+"/webhooks/{id}/reveal", d.action(d.handleRevealSecret))
	m.HandleFunc("POST "+Prefix+"/webhooks/{id}/disable", d.action(d.handleSetDisabled(true)))
	m.HandleFunc("POST "+Prefix+"/webhooks/{id}/enable", d.action(d.handleSetDisabled(false)))
	m.HandleFunc("POST "+Prefix+"/webhooks/{id}/delete", d.action(d.handleDeleteEndpoint))
	m.HandleFunc("POST "+Prefix+"/webhooks/{id}/test", d.action(d.handleSendTest))
	m.HandleFunc("POST "+Prefix+"/events/{id}/redeliver", d.action(d.handleRedeliver))
}

// webhooksData is what the webhooks page shows.
type webhooksData struct {
	Endpoints []endpointCard
	URL       string // the add form's value, kept after a refusal
	Here      string // this page's path, where its forms come back to
}

// endpointView is an endpoint with its recent deliveries and, right after
// a reveal, its secret.
type endpointView struct {
	Endpoint
	Secret string
	// SecretMasked: the secret revealed is the operator's, shared by every
	// merchant of a --webhook-url endpoint, and comes masked.
	SecretMasked bool
	Deliveries   []EndpointDelivery
	More         bool // more deliveries than shown
}

// handleWebhooks handles GET /dashboard/webhooks.
func (d *Dashboard) handleWebhooks(w http.ResponseWriter, r *http.Request, v *visit) {
	ctx := r.Context()
	eps, err := d.cfg.Endpoints.ListEndpoints(ctx, v.m)
	if err != nil {
		d.failed(ctx, w, r, v, "list the webhook endpoints", err)
		return
	}
	data := webhooksData{URL: v.notes.Typed, Here: Prefix + "/webhooks"}
	for _, ep := range eps {
		ev, ok := d.endpointView(w, r, v, ep, recentDeliveries)
		if !ok {
			return
		}
		data.Endpoints = append(data.Endpoints, endpointCard{E: ev, CSRF: v.s.csrf, Here: data.Here})
	}
	pv := v.view("Webhooks", "webhooks")
	pv.Data = data
	d.render(w, r, http.StatusOK, "webhooks", pv)
}

// endpointView reads an endpoint's deliveries; on a failure it has
// answered and returns false.
func (d *Dashboard) endpointView(w http.ResponseWriter, r *http.Request, v *visit, ep Endpoint, limit int) (endpointView, bool) {
	dels, err := d.cfg.Endpoints.EndpointDeliveries(r.Context(), v.m, ep.ID, limit+1)
	if err != nil && !isNotFound(err) {
		d.failed(r.Context(), w, r, v, "read the endpoint's deliveries", err)
		return endpointView{}, false
	}
	for i := range dels {
		dels[i].URL = "" // the endpoint's own: the card shows it once
	}
	ev := endpointView{Endpoint: ep, Deliveries: dels}
	if len(dels) > limit {
		ev.Deliveries, ev.More = dels[:limit], true
	}
	if v.notes.SecretFor == ep.ID {
		ev.Secret = v.notes.Secret
		ev.SecretMasked = masked(ev.Secret)
	}
	return ev, true
}

// endpointCard is one endpoint as the list and its own page show it, with
// what its forms carry: the CSRF token and the page to come back to.
type endpointCard struct {
	E    endpointView
	CSRF string
	Here string
	Full bool // its own page: every delivery read, no link to more
}

// handleEndpoint handles GET /dashboard/webhooks/{id}.
func (d *Dashboard) handleEndpoint(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	ep, ok, err := d.findEndpoint(r, v, id)
	if err != nil {
		d.failed(r.Context(), w, r, v, "list the webhook endpoints", err)
		return
	}
	if !ok {
		d.notFound(w, r, v, "There is no webhook endpoint "+id+" for this merchant.")
		return
	}
	ev, ok := d.endpointView(w, r, v, ep, endpointDeliveries)
	if !ok {
		return
	}
	pv := v.view("Webhook endpoint", "webhooks")
	pv.Data = endpointCard{E: ev, CSRF: v.s.csrf, Here: Prefix + "/webhooks/" + url.PathEscape(id), Full: true}
	d.render(w, r, http.StatusOK, "endpoint", pv)
}

// findEndpoint finds one of the merchant's endpoints by id.
func (d *Dashboard) findEndpoint(r *http.Request, v *visit, id string) (Endpoint, bool, error) {
	eps, err := d.cfg.Endpoints.ListEndpoints(r.Context(), v.m)
	if err != nil {
		return Endpoint{}, false, err
	}
	for _, ep := range eps {
		if ep.ID == id {
			return ep, true, nil
		}
	}
	return Endpoint{}, false, nil
}

// checkEndpointURL refuses what cannot receive a webhook, in the words the
// add form shows.
func checkEndpointURL(raw string) string {
	if raw == "" {
		return "Enter the URL of the endpoint, for example https://example.com/webhooks."
	}
	if len(raw) > maxEndpointURL {
		return "That URL is too long: at most 2048 characters."
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Opaque != "" {
		return "The endpoint URL must be an absolute http or https URL, for example https://example.com/webhooks."
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return "The endpoint URL must not have a #fragment: it is never sent to the server."
	}
	return ""
}

// handleAddEndpoint handles POST /dashboard/webhooks.
func (d *Dashboard) handleAddEndpoint(w http.ResponseWriter, r *http.Request, v *visit) {
	raw := strings.TrimSpace(r.PostForm.Get("url"))
	if msg := checkEndpointURL(raw); msg != "" {
		d.refuse(w, r, v, Prefix+"/webhooks", msg+" Nothing was added.", raw)
		return
	}
	ep, err := d.cfg.Endpoints.AddEndpoint(r.Context(), v.m, raw)
	if err != nil {
		if msg, ok := refusal(err); ok {
			d.refuse(w, r, v, Prefix+"/webhooks", msg+". Nothing was added.", raw)
			return
		}
		d.failed(r.Context(), w, r, v, "add the webhook endpoint", err)
		return
	}
	d.log.InfoContext(r.Context(), "dashboard webhook endpoint added", "merchant", v.m.ID, "endpoint", ep.ID)
	d.done(w, r, v, Prefix+"/webhooks", func(n *notes) {
		n.Flash = "Endpoint " + ep.URL + " added. Reveal its secret to verify the signatures it receives."
	})
}

// endpointCall runs one change of an endpoint and answers it: a missing id
// is 404; a refusal goes back where the form came from with the reason,
// success with a note (to the list when the endpoint's own page is gone).
func (d *Dashboard) endpointCall(w http.ResponseWriter, r *http.Request, v *visit, what string, call func(id string) (string, error)) {
	id := r.PathValue("id")
	note, err := call(id)
	back := cameFrom(r)
	if err != nil {
		if isNotFound(err) {
			d.notFound(w, r, v, "There is no webhook endpoint "+id+" for this merchant, so nothing was changed.")
			return
		}
		if msg, ok := refusal(err); ok {
			d.refuse(w, r, v, back, msg+". Nothing was changed.", "")
			return
		}
		d.failed(r.Context(), w, r, v, what, err)
		return
	}
	d.log.InfoContext(r.Context(), "dashboard webhook endpoint: "+what, "merchant", v.m.ID, "endpoint", id)
	if back == Prefix+"/webhooks/"+url.PathEscape(id) && strings.HasSuffix(r.URL.Path, "/delete") {
		back = Prefix + "/webhooks"
	}
	d.done(w, r, v, back, func(n *notes) { n.Flash = note })
}

// cameFrom is the page a form of the webhooks came from (its "next"
// field), the webhooks list when it names none of the dashboard's.
func cameFrom(r *http.Request) string {
	if to := localPath(r.PostForm.Get("next")); to != "" {
		return to
	}
	return Prefix + "/webhooks"
}

// masked reports a secret that comes masked ("whsec_…a1b2"): the
// operator's, of a --webhook-url endpoint, shared by every merchant.
func masked(secret string) bool { return strings.Contains(secret, "…") }

// handleRevealSecret handles POST /dashboard/webhooks/{id}/reveal: the
// secret is shown on the next page only, and never logged. Which secrets
// come masked is known only once one is asked for, so the button is on
// every endpoint, and the note says when the secret stays masked.
func (d *Dashboard) handleRevealSecret(w http.ResponseWriter, r *http.Request, v *visit) {
	d.endpointCall(w, r, v, "reveal the secret", func(id string) (string, error) {
		secret, err := d.cfg.Endpoints.EndpointSecret(r.Context(), v.m, id)
		if err != nil {
			return "", err
		}
		d.sessions.note(v.token, func(n *notes) { n.SecretFor, n.Secret = id, secret })
		if masked(secret) {
			return "This endpoint's secret is the operator's, shared by every merchant, so it stays masked: ask the operator of this sandbox for it.", nil
		}
		return "Secret revealed below. Keep it out of source control.", nil
	})
}

func (d *Dashboard) handleSetDisabled(disabled bool) func(http.ResponseWriter, *http.Request, *visit) {
	what, note := "enable the endpoint", "Endpoint enabled: it receives events again."
	if disabled {
		what, note = "disable the endpoint", "Endpoint disabled: it receives no events until enabled."
	}
	return func(w http.ResponseWriter, r *http.Request, v *visit) {
		d.endpointCall(w, r, v, what, func(id string) (string, error) {
			return note, d.cfg.Endpoints.SetEndpointDisabled(r.Context(), v.m, id, disabled)
		})
	}
}

func (d *Dashboard) handleDeleteEndpoint(w http.ResponseWriter, r *http.Request, v *visit) {
	d.endpointCall(w, r, v, "delete the endpoint", func(id string) (string, error) {
		return "Endpoint deleted.", d.cfg.Endpoints.DeleteEndpoint(r.Context(), v.m, id)
	})
}

func (d *Dashboard) handleSendTest(w http.ResponseWriter, r *http.Request, v *visit) {
	d.endpointCall(w, r, v, "send a test event", func(id string) (string, error) {
		evID, err := d.cfg.Endpoints.SendTest(r.Context(), v.m, id)
		return "Test event " + evID + " sent. Its delivery appears below.", err
	})
}

// handleRedeliver handles POST /dashboard/events/{id}/redeliver: a new
// round of the event to every endpoint it went to.
func (d *Dashboard) handleRedeliver(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	if err := d.cfg.Events.Redeliver(r.Context(), v.m, id); err != nil {
		if isNotFound(err) {
			d.notFound(w, r, v, "There is no event "+id+" for this merchant, so nothing was sent.")
			return
		}
		if msg, ok := refusal(err); ok {
			d.refuse(w, r, v, cameFrom(r), "Event "+id+" was not redelivered: "+msg+". Nothing was sent.", "")
			return
		}
		d.failed(r.Context(), w, r, v, "redeliver the event", err)
		return
	}
	d.log.InfoContext(r.Context(), "dashboard event redelivered", "merchant", v.m.ID, "event", id)
	d.done(w, r, v, cameFrom(r), func(n *notes) { n.Flash = "Event " + id + " sent again: a new delivery round has started." })
}
