// Developers -> API keys: the masked list, a new key shown once, revoking.

package dashboard

import (
	"net/http"
)

func (d *Dashboard) registerKeyRoutes() {
	d.mux.HandleFunc("GET "+Prefix+"/api-keys", d.page(d.handleKeys))
	d.mux.HandleFunc("POST "+Prefix+"/api-keys", d.action(d.handleCreateKey))
	d.mux.HandleFunc("POST "+Prefix+"/api-keys/{id}/revoke", d.action(d.handleRevokeKey))
}

// keysData is what the API keys page shows.
type keysData struct {
	Keys   []APIKey
	NewKey string // only on the page right after creating it
}

// handleKeys handles GET /dashboard/api-keys.
func (d *Dashboard) handleKeys(w http.ResponseWriter, r *http.Request, v *visit) {
	keys, err := d.cfg.Keys.ListKeys(r.Context(), v.m)
	if err != nil {
		d.failed(r.Context(), w, r, v, "list the API keys", err)
		return
	}
	pv := v.view("API keys", "api-keys")
	pv.Data = keysData{Keys: keys, NewKey: v.notes.NewKey}
	d.render(w, r, http.StatusOK, "api-keys", pv)
}

// handleCreateKey handles POST /dashboard/api-keys. The key goes to the
// next page through the session, never through a URL or the log.
func (d *Dashboard) handleCreateKey(w http.ResponseWriter, r *http.Request, v *visit) {
	k, secret, err := d.cfg.Keys.CreateKey(r.Context(), v.m)
	if err != nil {
		if msg, ok := refusal(err); ok {
			d.refuse(w, r, v, Prefix+"/api-keys", msg+". No key was created.", "")
			return
		}
		d.failed(r.Context(), w, r, v, "create an API key", err)
		return
	}
	d.log.InfoContext(r.Context(), "dashboard api key created", "merchant", v.m.ID, "key_id", k.ID)
	d.done(w, r, v, Prefix+"/api-keys", func(n *notes) {
		n.Flash = "API key " + k.Masked + " created. Copy it now: it will not be shown again."
		n.NewKey = secret
	})
}

// handleRevokeKey handles POST /dashboard/api-keys/{id}/revoke.
func (d *Dashboard) handleRevokeKey(w http.ResponseWriter, r *http.Request, v *visit) {
	id := r.PathValue("id")
	if err := d.cfg.Keys.RevokeKey(r.Context(), v.m, id); err != nil {
		if isNotFound(err) {
			d.notFound(w, r, v, "There is no API key "+id+" for this merchant, so nothing was revoked.")
			return
		}
		if msg, ok := refusal(err); ok {
			d.refuse(w, r, v, Prefix+"/api-keys", msg+". Nothing was revoked.", "")
			return
		}
		d.failed(r.Context(), w, r, v, "revoke the API key", err)
		return
	}
	d.log.InfoContext(r.Context(), "dashboard api key revoked", "merchant", v.m.ID, "key_id", id)
	d.done(w, r, v, Prefix+"/api-keys", func(n *notes) {
		n.Flash = "API key " + id + " revoked: it is refused from now on."
	})
}
