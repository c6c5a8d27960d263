// The open points of the spec: every choice paymock made where the spec
// says "not shown", in one table, each with how its answer is read from a
// run. The drift check and docs/verify.md are both made from this table.

package verify

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// Point is one open point of the spec that paymock answered.
type Point struct {
	// ID names the point in reports, e.g. "amount.form".
	ID string
	// Topic is what is compared, in words.
	Topic string
	// Spec is what the spec says of it.
	Spec string
	// Needs says what a run must see for the point to be compared.
	Needs string
	// Variant names the --variants setting that changes paymock's
	// answer, "" when no setting does.
	Variant string
	// answers reads paymock's and the deployment's answers; "" is not
	// observed.
	answers func(pm, dep *observations) (paymock, deployment string)
	// suggest maps paymock's and the deployment's answers to the
	// --variants setting that makes paymock give the deployment's (""
	// when none does).
	suggest func(paymock, deployment string) string
}

// errorCase is one error the suite provokes on purpose.
type errorCase struct {
	check string // the check that provokes it
	what  string // in words
}

func errorCases() []errorCase {
	return []errorCase{
		{checkUnknownID, "retrieve of an unknown id"},
		{checkMissingField, "create without customer.email"},
		{checkBoth, "create with both mcc and account_id"},
		{checkBadKey, "a key the deployment does not know"},
		{checkPerPage101, "list with per_page=101"},
		{checkPageTwice, "list with page given twice"},
		{checkNoKey, "a request without a key"},
		{checkTooLarge, "a create body of 1 MiB and one byte"},
	}
}

// Points is the table of open points, in the order reports list them.
func Points() []Point {
	ps := []Point{
		{ID: "status.list", Topic: "success status of list", Spec: "Success status code for list and retrieve: not shown.",
			Needs: "the list check", answers: same(func(o *observations) string { return o.status(checkList) })},
		{ID: "status.retrieve", Topic: "success status of retrieve", Spec: "Success status code for list and retrieve: not shown.",
			Needs: "a created payment to retrieve", answers: same(func(o *observations) string { return o.status(checkRetrieve) })},
	}
	for _, ec := range errorCases() {
		check := ec.check
		ps = append(ps,
			Point{ID: "error." + check + ".status", Topic: "status of " + ec.what, Spec: "Error status codes: not shown.",
				Needs: "the " + check + " check", answers: same(func(o *observations) string { return o.status(check) })},
			Point{ID: "error." + check + ".code", Topic: "error type and code of " + ec.what, Spec: "Error codes: not shown.",
				Needs: "the " + check + " check", answers: same(func(o *observations) string { return o.errorCode(check) })},
			Point{ID: "error." + check + ".shape", Topic: "error body shape of " + ec.what, Spec: "Error response body shape: not shown.",
				Needs: "the " + check + " check", answers: same(func(o *observations) string { return o.shape(check) })},
		)
	}
	ps = append(ps,
		Point{ID: "amount.form", Topic: "JSON form of amount in answers", Variant: "amount",
			Spec:  "Appears as a JSON number in some responses and as a decimal string in others.",
			Needs: "a payment in an answer", answers: same((*observations).amountForms),
			suggest: variantFor(map[string]string{"string": "amount=string", "number, string": "all"})},
		Point{ID: "status.success_name", Topic: "status name of the successful outcome", Variant: "status",
			Spec:  "completed, or succeeded (\"an alternative name\"); clients treat both as success.",
			Needs: "a payment in its successful status in the deployment's list (pay one there before the run: verify pays none)", answers: same((*observations).successNames),
			suggest: variantFor(map[string]string{"succeeded": "status=succeeded", "completed, succeeded": "all"})},
		Point{ID: "payment_link.checkout", Topic: "payment_link on a create without a card", Variant: "payment_link",
			Spec:  "Present in some create responses.",
			Needs: "a create without a card", answers: same(func(o *observations) string { return o.linkPresence(false) }),
			suggest: variantFor(map[string]string{"absent": "payment_link=omit", "absent, present": "all"})},
		Point{ID: "payment_link.card", Topic: "payment_link on a create with a card",
			Spec:  "Present in some create responses.",
			Needs: "a create with a card (--card)", answers: same(func(o *observations) string { return o.linkPresence(true) })},
		Point{ID: "payment_link.retrieve", Topic: "payment_link on a payment without a card in retrieve and list answers", Variant: "payment_link",
			Spec:  "Retrieve returns all fields of the payment model; payment_link is present in some create responses.",
			Needs: "a payment the run created without a card, retrieved or listed", answers: same(func(o *observations) string { return o.laterLinkPresence(false) }),
			suggest: variantFor(map[string]string{"absent": "payment_link=omit", "absent, present": "all"})},
		Point{ID: "payment_link.retrieve_card", Topic: "payment_link on a payment with a card in retrieve and list answers",
			Spec:  "Retrieve returns all fields of the payment model; payment_link is present in some create responses.",
			Needs: "a payment the run created with a card (--card), listed", answers: same(func(o *observations) string { return o.laterLinkPresence(true) })},
		Point{ID: "next_action.checkout", Topic: "target of next_action.url without a card",
			Spec:  "The hosted checkout page (payment_link has the same purpose).",
			Needs: "a create without a card answered with payment_link", answers: same((*observations).checkoutTarget)},
		Point{ID: "next_action.card", Topic: "target of next_action.url with a card",
			Spec:  "The 3DS authentication page when card details were supplied.",
			Needs: "creates with and without a card (--card)", answers: same((*observations).cardTarget)},
		Point{ID: "id.payment", Topic: "form of payment ids",
			Spec:  "Unique identifier of the payment (a string; no form shown).",
			Needs: "a payment in an answer", answers: same(func(o *observations) string { return o.idForms(seenPayment.id) })},
		Point{ID: "id.customer", Topic: "form of customer ids",
			Spec:  "Identifier of the customer, assigned by the service (no form shown).",
			Needs: "a payment in an answer", answers: same(func(o *observations) string { return o.idForms(seenPayment.customerID) })},
		Point{ID: "customer.fields", Topic: "fields of the customer beyond id, email and name",
			Spec:  "Fields of the customer resource beyond id, name and email: not shown.",
			Needs: "a payment in an answer", answers: same((*observations).customerExtras)},
		Point{ID: "cancel_url.retrieve_list", Topic: "cancel_url on payments in retrieve and list answers",
			Spec:  "Returned in create responses (other answers: not shown).",
			Needs: "a payment in a retrieve or list answer", answers: same(func(o *observations) string { return o.presence("cancel_url", false) })},
		Point{ID: "auth.www_authenticate", Topic: "WWW-Authenticate on a refused key",
			Spec:  "The response to a missing or invalid key: not shown.",
			Needs: "the " + checkBadKey + " check", answers: same(func(o *observations) string { return o.wwwAuthenticate(checkBadKey) })},
		Point{ID: "auth.www_authenticate_no_key", Topic: "WWW-Authenticate on a request without a key",
			Spec:  "The response to a missing or invalid key: not shown.",
			Needs: "the " + checkNoKey + " check", answers: same(func(o *observations) string { return o.wwwAuthenticate(checkNoKey) })},
		Point{ID: "headers.paymock_only", Topic: "response headers paymock sends that the deployment does not",
			Spec: "Not shown.", Needs: "answers from both", answers: headerDiff((*observations).headerNames, true)},
		Point{ID: "headers.deployment_only", Topic: "response headers the deployment sends that paymock does not",
			Spec: "Not shown.", Needs: "answers from both", answers: headerDiff((*observations).headerNames, false)},
		Point{ID: "webhook.signature", Topic: "webhook signature scheme",
			Spec:  "Signing: not shown (paymock: Standard Webhooks).",
			Needs: "a webhook delivery (--listen)", answers: same((*observations).signatureScheme)},
		Point{ID: "webhook.event_type", Topic: "event type of an expired payment",
			Spec:  "Event type names: not shown.",
			Needs: "the expiry webhook of the payment verify makes expire (--listen)", answers: same((*observations).expiryType)},
		Point{ID: "webhook.unknown_types", Topic: "event types paymock never sends",
			Spec:  "Event type names: not shown.",
			Needs: "a webhook delivery (--listen)", answers: same((*observations).unknownTypes)},
		Point{ID: "webhook.headers.paymock_only", Topic: "delivery headers paymock sends that the deployment does not",
			Spec: "Delivery headers: not shown.", Needs: "a webhook delivery (--listen)", answers: headerDiff((*observations).webhookHeaderNames, true)},
		Point{ID: "webhook.headers.deployment_only", Topic: "delivery headers the deployment sends that paymock does not",
			Spec: "Delivery headers: not shown.", Needs: "a webhook delivery (--listen)", answers: headerDiff((*observations).webhookHeaderNames, false)},
		Point{ID: "webhook.payload", Topic: "fields of an event's body that one side sends and the other does not", Variant: "payment_link",
			Spec:  "Payload shape: not shown.",
			Needs: "the expiry webhook of the payment verify makes expire (--listen)", answers: payloadFields,
			// The event's data is the payment as the answers write it:
			// payment_link=omit leaves it out of both.
			suggest: func(pm, dep string) string {
				if pm == "data.payment_link" && dep == "none" {
					return "payment_link=omit"
				}
				return ""
			}},
	)
	return ps
}

// same reads both answers the same way.
func same(f func(*observations) string) func(pm, dep *observations) (string, string) {
	return func(pm, dep *observations) (string, string) { return f(pm), f(dep) }
}

// variantFor maps the deployment's answers to the --variants settings
// that give them.
func variantFor(m map[string]string) func(paymock, deployment string) string {
	return func(_, answer string) string { return m[answer] }
}

// headerDiff compares two sets of header names: ours is true for the
// names paymock sends and the deployment does not. Both answers are
// "none" when nothing differs, so the point is equal.
func headerDiff(names func(*observations) []string, ours bool) func(pm, dep *observations) (string, string) {
	return func(pm, dep *observations) (string, string) {
		a, b := names(pm), names(dep)
		if a == nil || b == nil {
			return "", ""
		}
		from, other := a, b
		if !ours {
			from, other = b, a
		}
		var diff []string
		for _, n := range from {
			if !slices.Contains(other, n) {
				diff = append(diff, n)
			}
		}
		if len(diff) == 0 {
			return "none", "none"
		}
		if ours {
			return strings.Join(diff, ", "), "absent"
		}
		return "absent", strings.Join(diff, ", ")
	}
}

// ignoredHeaders are headers that say nothing of the service: hop-by-hop
// ones, and those that carry a time or a length.
func ignoredHeaders() []string {
	return []string{"Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Te", "Trailer",
		"Transfer-Encoding", "Upgrade", "Content-Length", "Date", "Expires", "Last-Modified", "Age",
		"Accept-Encoding", "User-Agent"}
}

// compared is the exchange of a check whose answer is compared with
// paymock's; nil when the check got none, or when its answer was the
// problem that stopped the run (an expired key must not read as the
// service having changed its list's status).
func (o *observations) compared(check string) *Exchange {
	x := o.exchanges[check]
	if x == nil || x.problem {
		return nil
	}
	return x
}

// headerNames is every header name of the answers to the suite's
// successful calls, without the ignored ones.
func (o *observations) headerNames() []string {
	var hs []http.Header
	for _, c := range []string{checkCreate, checkRetrieve, checkList} {
		if x := o.compared(c); x != nil && x.Status >= 200 && x.Status < 300 {
			hs = append(hs, x.header)
		}
	}
	return namesOf(hs)
}

func (o *observations) webhookHeaderNames() []string {
	var hs []http.Header
	for _, d := range o.webhooks {
		hs = append(hs, d.header)
	}
	return namesOf(hs)
}

func namesOf(hs []http.Header) []string {
	if len(hs) == 0 {
		return nil
	}
	names := []string{}
	for _, h := range hs {
		for k := range h {
			k = http.CanonicalHeaderKey(k)
			if !slices.Contains(ignoredHeaders(), k) && !slices.Contains(names, k) {
				names = append(names, k)
			}
		}
	}
	slices.Sort(names)
	return names
}

func (o *observations) status(check string) string {
	x := o.compared(check)
	if x == nil || x.Status == 0 {
		return ""
	}
	return itoa(x.Status)
}

// errorCode is "type/code" of an error answer in paymock's shape, or what
// the body holds instead.
func (o *observations) errorCode(check string) string {
	x := o.compared(check)
	if x == nil || x.Status == 0 {
		return ""
	}
	var e struct {
		Error *struct {
			Type string `json:"type"`
			Code string `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(x.body, &e) != nil || e.Error == nil || (e.Error.Type == "" && e.Error.Code == "") {
		return "(no error.type or error.code)"
	}
	return e.Error.Type + "/" + e.Error.Code
}

func (o *observations) shape(check string) string {
	x := o.compared(check)
	if x == nil || x.Status == 0 {
		return ""
	}
	return shapeOf(x.body)
}

// shapeOf writes a JSON value's keys without its values, e.g.
// {error:{code,message,type}}; an array shows its first element.
func shapeOf(body []byte) string {
	var v any
	if json.Unmarshal(body, &v) != nil {
		return "(not JSON)"
	}
	var b strings.Builder
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			b.WriteByte('{')
			for i, k := range keys {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(k)
				switch t[k].(type) {
				case map[string]any, []any:
					b.WriteByte(':')
					walk(t[k])
				}
			}
			b.WriteByte('}')
		case []any:
			b.WriteByte('[')
			if len(t) > 0 {
				walk(t[0])
			}
			b.WriteByte(']')
		}
	}
	walk(v)
	if b.Len() == 0 {
		return "(a JSON scalar)"
	}
	return b.String()
}

// set joins the distinct values of vs, sorted; "" for none.
func set(vs []string) string {
	slices.Sort(vs)
	return strings.Join(slices.Compact(vs), ", ")
}

func (o *observations) amountForms() string {
	var forms []string
	for _, p := range o.payments {
		raw := p.fields["amount"]
		switch {
		case len(raw) == 0:
		case raw[0] == '"':
			forms = append(forms, "string")
		default:
			forms = append(forms, "number")
		}
	}
	return set(forms)
}

// successNames are the status names of payments that are neither pending
// nor expired nor failed: the successful outcome's name.
func (o *observations) successNames() string {
	var names []string
	for _, p := range o.payments {
		if s := p.str("status"); s != "" && s != "pending" && s != "expired" && s != "failed" {
			names = append(names, s)
		}
	}
	return set(names)
}

func (o *observations) linkPresence(card bool) string {
	var seen []string
	for _, p := range o.payments {
		if !p.created || p.card != card {
			continue
		}
		seen = append(seen, p.linkPresence())
	}
	return set(seen)
}

// idForms are the forms of an id of every payment in the answers
// (idForm), "" when none had one.
func (o *observations) idForms(id func(seenPayment) string) string {
	var forms []string
	for _, p := range o.payments {
		if v := id(p); v != "" {
			forms = append(forms, idForm(v))
		}
	}
	return set(forms)
}

// presence says whether the payments of create answers (created) or of
// the other answers carry field: "present", "absent", or both.
func (o *observations) presence(field string, created bool) string {
	var seen []string
	for _, p := range o.payments {
		if p.created != created {
			continue
		}
		if _, ok := p.fields[field]; ok {
			seen = append(seen, "present")
		} else {
			seen = append(seen, "absent")
		}
	}
	return set(seen)
}

// customerExtras are the names of the customer's fields beyond id,
// email and name in every payment of the answers, "none" when no
// customer has one.
func (o *observations) customerExtras() string {
	if len(o.payments) == 0 {
		return ""
	}
	names := []string{}
	for _, p := range o.payments {
		var c map[string]json.RawMessage
		_ = json.Unmarshal(p.fields["customer"], &c)
		for k := range c {
			if k != "id" && k != "email" && k != "name" {
				names = append(names, k)
			}
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return set(names)
}

// idForm words the form of an id, never its value: "pay_ and 24 base62
// characters" (paymock's), "a UUID", "12 digits", or "20 characters of
// another form". The contract takes any non-empty string (the spec
// fixes none); this is where paymock's own form is compared.
func idForm(id string) string {
	switch {
	case isUUID(id):
		return "a UUID"
	case strings.Trim(id, "0123456789") == "":
		return itoa(len(id)) + " digits"
	}
	if i := strings.IndexByte(id, '_'); i > 0 && isBase62(id[:i]) && isBase62(id[i+1:]) {
		return id[:i+1] + " and " + itoa(len(id)-i-1) + " base62 characters"
	}
	return itoa(utf8.RuneCountInString(id)) + " characters of another form"
}

// isUUID reports whether s is a UUID in its text form (RFC 9562), any
// version, either case.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}

func isBase62(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return s != ""
}

// laterLinkPresence is linkPresence of the payments the run created, as
// later answers (a retrieve, a list) show them.
func (o *observations) laterLinkPresence(card bool) string {
	withCard := map[string]bool{}
	for _, p := range o.payments {
		if p.created {
			withCard[p.id()] = p.card
		}
	}
	var seen []string
	for _, p := range o.payments {
		if c, ours := withCard[p.id()]; p.created || !ours || c != card {
			continue
		}
		seen = append(seen, p.linkPresence())
	}
	return set(seen)
}

// checkoutTarget says whether next_action.url of a create without a card
// is the payment_link page.
func (o *observations) checkoutTarget() string {
	var seen []string
	for _, p := range o.payments {
		if !p.created || p.card {
			continue
		}
		link := p.str("payment_link")
		next := p.nextURL()
		if link == "" || next == "" {
			continue
		}
		if link == next {
			seen = append(seen, "the payment_link page")
		} else {
			seen = append(seen, "not the payment_link page")
		}
	}
	return set(seen)
}

// cardTarget says whether next_action.url of a create with a card is a
// page of another kind than the checkout page: their paths, with the
// payment's id taken out, differ.
func (o *observations) cardTarget() string {
	var checkout, card []string
	for _, p := range o.payments {
		if !p.created || p.nextURL() == "" {
			continue
		}
		tmpl := pathTemplate(p.nextURL(), p.str("id"))
		if p.card {
			card = append(card, tmpl)
		} else {
			checkout = append(checkout, tmpl)
		}
	}
	if len(checkout) == 0 || len(card) == 0 {
		return ""
	}
	if slices.Contains(checkout, card[0]) {
		return "the checkout page"
	}
	return "a page of its own (3DS), not the checkout page"
}

// pathTemplate is a URL's path with the payment id replaced by {id}.
func pathTemplate(raw, id string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return raw
	}
	p := u.Path
	if id != "" {
		p = strings.ReplaceAll(p, id, "{id}")
	}
	return p
}

func (o *observations) wwwAuthenticate(check string) string {
	x := o.compared(check)
	if x == nil || x.Status == 0 {
		return ""
	}
	if v := x.header.Get("WWW-Authenticate"); v != "" {
		return v
	}
	return "absent"
}

func (o *observations) signatureScheme() string {
	var seen []string
	for _, d := range o.webhooks {
		switch {
		case d.sigErr == nil:
			seen = append(seen, "Standard Webhooks (webhook-signature v1 verifies)")
		case errors.Is(d.sigErr, errOtherSecret):
			seen = append(seen, "Standard Webhooks, "+d.sigErr.Error())
		default:
			seen = append(seen, "not Standard Webhooks: "+d.sigErr.Error())
		}
	}
	return set(seen)
}

// expiryType is the event type of the delivery about the payment the run
// made expire.
func (o *observations) expiryType() string {
	if d := o.expiryDelivery(); d != nil {
		return d.eventType
	}
	return ""
}

// payloadFields compares the bodies of the two sides' expiry webhooks:
// each side's answer is the fields its body has and the other's lacks,
// a whole object named once by its own path (data.payment_link, or data
// when the other has none), "none" when there is no such field. Both
// are "none" when the bodies have the same fields, so the point is
// equal; the values are not compared.
func payloadFields(pm, dep *observations) (string, string) {
	a, b := pm.expiryDelivery(), dep.expiryDelivery()
	if a == nil || b == nil {
		return "", ""
	}
	var x, y any
	errX, errY := json.Unmarshal(a.body, &x), json.Unmarshal(b.body, &y)
	if errX != nil || errY != nil {
		return jsonOrNot(errX), jsonOrNot(errY)
	}
	return listOrNone(fieldsOnlyIn(x, y, "")), listOrNone(fieldsOnlyIn(y, x, ""))
}

func jsonOrNot(err error) string {
	if err != nil {
		return "(not JSON)"
	}
	return "JSON"
}

func listOrNone(fields []string) string {
	if len(fields) == 0 {
		return "none"
	}
	return strings.Join(fields, ", ")
}

// fieldsOnlyIn is the dotted paths, below path, of the fields of x that
// y lacks, in key order; an array is compared by its first element, its
// index written "*". A field that is an object in x and something else
// in y is compared as if y had an empty object there.
func fieldsOnlyIn(x, y any, path string) []string {
	var out []string
	switch xt := x.(type) {
	case map[string]any:
		yt, _ := y.(map[string]any)
		keys := make([]string, 0, len(xt))
		for k := range xt {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			p := k
			if path != "" {
				p = path + "." + k
			}
			if yv, ok := yt[k]; ok {
				out = append(out, fieldsOnlyIn(xt[k], yv, p)...)
			} else {
				out = append(out, p)
			}
		}
	case []any:
		if len(xt) == 0 {
			return nil
		}
		var first any
		if yt, _ := y.([]any); len(yt) > 0 {
			first = yt[0]
		}
		p := "*"
		if path != "" {
			p = path + ".*"
		}
		out = fieldsOnlyIn(xt[0], first, p)
	}
	return out
}

func (o *observations) expiryDelivery() *delivery {
	if o.expiringID == "" {
		return nil
	}
	for i := range o.webhooks {
		if o.webhooks[i].paymentID == o.expiringID {
			return &o.webhooks[i]
		}
	}
	return nil
}

// unknownTypes are the event types of deliveries that are none of
// paymock's; "none" when every delivery's type is one of them.
func (o *observations) unknownTypes() string {
	if len(o.webhooks) == 0 {
		return ""
	}
	var out []string
	for _, d := range o.webhooks {
		if !slices.Contains(eventTypes(), d.eventType) {
			out = append(out, d.eventType)
		}
	}
	if len(out) == 0 {
		return "none"
	}
	return set(out)
}
