// The identity checks: a retrieve answers the payment asked for, and every
// answer about a payment the run made shows it as made.

package verify

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"reflect"
	"strconv"
	"strings"

	"github.com/paymock/paymock"
)

// checkListCreated names, among the checks left out, the search of the
// list for the run's payments when the list is too long to search.
const checkListCreated = "list.created"

// sentPayment is what a create of the run sent, of the fields the spec
// fixes for the payment it makes.
type sentPayment struct {
	check    string          // the create
	amount   json.RawMessage // as sent
	currency string
	metadata json.RawMessage
}

// identity holds the payments a side's run created, by id, in the order
// of their creates. The contract cannot check an answer against them (any
// payment fits its schema), and the spec's words make each difference a
// violation, not drift.
type identity struct {
	sent map[string]sentPayment
	ids  []string
	// at is each check's place in the run: an answer is compared only
	// with the creates before it.
	at map[string]int
	// before are the ids the first list showed, before the run created
	// anything.
	before map[string]bool
}

// newIdentity reads the creates of a run's observations: every create
// answered 2xx with a payment id.
func newIdentity(o *observations) *identity {
	id := &identity{sent: map[string]sentPayment{}, at: map[string]int{}, before: map[string]bool{}}
	if x := o.exchanges[checkList]; answeredJSON(x) {
		var l struct {
			Items []struct {
				ID string `json:"id"`
			} `json:"items"`
		}
		_ = json.Unmarshal(x.body, &l)
		for _, it := range l.Items {
			id.before[it.ID] = true
		}
	}
	for i, c := range o.order {
		id.at[c] = i
		x := o.exchanges[c]
		if !strings.HasPrefix(c, "create.") || !answeredJSON(x) {
			continue
		}
		var req struct {
			Amount   json.RawMessage `json:"amount"`
			Currency string          `json:"currency"`
			Metadata json.RawMessage `json:"metadata"`
		}
		var ans struct {
			ID string `json:"id"`
		}
		if json.Unmarshal(x.reqBody, &req) != nil || json.Unmarshal(x.body, &ans) != nil || ans.ID == "" {
			continue
		}
		if _, dup := id.sent[ans.ID]; dup || id.before[ans.ID] {
			continue // not a payment of the run's, or of an earlier create
		}
		id.sent[ans.ID] = sentPayment{check: c, amount: req.Amount, currency: req.Currency, metadata: req.Metadata}
		id.ids = append(id.ids, ans.ID)
	}
	return id
}

func answeredJSON(x *Exchange) bool {
	return x != nil && x.Status >= 200 && x.Status <= 299 && isJSON(x.header)
}

// violations are the identity violations of one check's answer.
func (id *identity) violations(x *Exchange) []Violation {
	if !answeredJSON(x) {
		return nil
	}
	var out []Violation
	add := func(param, code, msg string) {
		out = append(out, Violation{Check: x.Check, Method: x.Method, Path: x.Path, Status: x.Status, Param: param, Code: code, Message: msg})
	}
	switch {
	case strings.HasPrefix(x.Check, "create."):
		var p map[string]json.RawMessage
		if json.Unmarshal(x.body, &p) != nil {
			return nil
		}
		got := rawString(p["id"])
		if sent, ok := id.sent[got]; ok && sent.check != x.Check {
			add("id", "id_reused", fmt.Sprintf("the create answered %s, the id %s answered first: an id is a payment's own (the spec: unique identifier)", got, sent.check))
			return out
		}
		if id.before[got] {
			add("id", "id_reused", fmt.Sprintf("the create answered %s, a payment the list showed before the run created any: an id is a payment's own (the spec: unique identifier)", got))
			return out
		}
		if s := rawString(p["status"]); s != "" && s != "pending" {
			add("status", "not_as_created", fmt.Sprintf("status is %s, not pending: the spec makes pending the initial status on creation", s))
		}
		for _, v := range asSent(p, id.sent[got], "") {
			add(v[0], "not_as_created", v[1])
		}
	case x.Check == checkRetrieve || x.Check == checkUnknownID:
		var p map[string]json.RawMessage
		if json.Unmarshal(x.body, &p) != nil {
			return nil
		}
		asked, err := url.PathUnescape(strings.TrimPrefix(x.Path, "/api/v1/payments/"))
		if err != nil {
			return nil
		}
		got := rawString(p["id"])
		switch {
		case got != asked && x.Check == checkUnknownID:
			add("id", "wrong_payment", fmt.Sprintf("a retrieve of %s, an id never created, answered %d with another payment, %s: a retrieve answers the payment asked for, or an error",
				asked, x.Status, orNone(got)))
		case got != asked:
			add("id", "wrong_payment", fmt.Sprintf("a retrieve of %s, which the run created, answered another payment, %s", asked, orNone(got)))
		default:
			if sent, ok := id.madeBefore(asked, x.Check); ok {
				for _, v := range asSent(p, sent, "") {
					add(v[0], "not_as_created", v[1])
				}
			}
		}
	case strings.HasPrefix(x.Check, "list"):
		var l struct {
			Items      []map[string]json.RawMessage `json:"items"`
			Pagination struct {
				TotalPages int `json:"total_pages"`
			} `json:"pagination"`
		}
		if json.Unmarshal(x.body, &l) != nil {
			return nil
		}
		listed := map[string]bool{}
		for i, it := range l.Items {
			got := rawString(it["id"])
			listed[got] = true
			if sent, ok := id.madeBefore(got, x.Check); ok {
				for _, v := range asSent(it, sent, "items."+strconv.Itoa(i)+".") {
					add(v[0], "not_as_created", v[1])
				}
			}
		}
		if x.Check != checkPerPage100 || !listComplete(len(l.Items), l.Pagination.TotalPages) {
			return out
		}
		var missing []string
		for _, want := range id.ids {
			if _, made := id.madeBefore(want, x.Check); made && !listed[want] {
				missing = append(missing, want)
			}
		}
		if len(missing) > 0 {
			add("items", "missing_from_list", fmt.Sprintf("the list holds all %d of the merchant's payments (one page of per_page 100) but not %s, which the run created",
				len(l.Items), strings.Join(missing, ", ")))
		}
	}
	return out
}

// madeBefore is what the create of payment pid sent, when the run made it
// before check.
func (id *identity) madeBefore(pid, check string) (sentPayment, bool) {
	sent, ok := id.sent[pid]
	return sent, ok && id.at[sent.check] < id.at[check]
}

// listComplete says a first page of per_page 100 holds every payment:
// fewer than 100 came and it says it is the only page.
func listComplete(items, totalPages int) bool {
	return items < 100 && totalPages <= 1
}

// listTooLong says the list of 100 could not be searched for the run's
// payments: it is one page of more, and the spec shows no order.
func (id *identity) listTooLong(o *observations) bool {
	x := o.exchanges[checkPerPage100]
	if len(id.ids) == 0 || !answeredJSON(x) {
		return false
	}
	var l struct {
		Items      []json.RawMessage `json:"items"`
		Pagination struct {
			TotalPages int `json:"total_pages"`
		} `json:"pagination"`
	}
	return json.Unmarshal(x.body, &l) == nil && !listComplete(len(l.Items), l.Pagination.TotalPages)
}

// asSent compares a payment with what its create sent: the amount, the
// currency, and the metadata (the spec: "returned as sent"). Each
// difference is its param (after prefix) and a message.
func asSent(p map[string]json.RawMessage, sent sentPayment, prefix string) [][2]string {
	if sent.check == "" {
		return nil
	}
	var out [][2]string
	// The amount in either of its forms, 10.5 or "10.50": the same amount.
	if want, err := amountOf(sent.amount); err == nil {
		if got, err := amountOf(p["amount"]); err == nil && got != want {
			out = append(out, [2]string{prefix + "amount", fmt.Sprintf("%samount is %s, not the %s the run created the payment with", prefix, got, want)})
		}
	}
	if got := rawString(p["currency"]); got != "" && got != sent.currency {
		out = append(out, [2]string{prefix + "currency", fmt.Sprintf("%scurrency is %s, not the %s the run created the payment with", prefix, got, sent.currency)})
	}
	if got, ok := p["metadata"]; ok && !sameJSON(got, sent.metadata) {
		out = append(out, [2]string{prefix + "metadata", fmt.Sprintf("%smetadata is %s, not the %s the run sent: the spec returns it as sent",
			prefix, firstLine(compact(got)), firstLine(compact(sent.metadata)))})
	}
	return out
}

// amountOf reads an amount in either wire form.
func amountOf(raw json.RawMessage) (paymock.Amount, error) {
	s := string(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, fmt.Errorf("amount: %w", err)
		}
	}
	a, err := paymock.ParseAmount(s)
	if err != nil {
		return 0, fmt.Errorf("amount %s: %w", raw, err)
	}
	return a, nil
}

func rawString(raw json.RawMessage) string {
	var s string
	_ = json.Unmarshal(raw, &s)
	return s
}

func sameJSON(a, b json.RawMessage) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func orNone(id string) string {
	if id == "" {
		return "one without an id"
	}
	return id
}
