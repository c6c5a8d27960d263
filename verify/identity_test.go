// Tests of the identity checks: a real paymock behind a layer that answers
// about the wrong payment, as a broken cache or Prism's examples would.

package verify

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/paymock/paymock/internal/upstreamtest"
	"github.com/paymock/paymock/paymocktest"
)

func isCreate(r *http.Request) bool {
	return r.Method == http.MethodPost && r.URL.Path == "/api/v1/payments"
}

func isList(r *http.Request) bool {
	return r.Method == http.MethodGet && r.URL.Path == "/api/v1/payments"
}

// withoutRunPayments drops from a list the payments verify made (those
// with metadata paymock_verify), as a stale cache would.
func withoutRunPayments(t *testing.T, body []byte) []byte {
	var l map[string]any
	if err := json.Unmarshal(body, &l); err != nil || l["items"] == nil {
		return body // an error answer
	}
	items, _ := l["items"].([]any)
	kept := []any{}
	for _, it := range items {
		md, _ := it.(map[string]any)["metadata"].(map[string]any)
		if _, ok := md["paymock_verify"]; !ok {
			kept = append(kept, it)
		}
	}
	l["items"] = kept
	out, err := json.Marshal(l)
	if err != nil {
		t.Error(err)
	}
	return out
}

// firstID gives every create's answer the id of the first.
type firstID struct {
	mu    sync.Mutex
	first []byte
}

var (
	topID  = regexp.MustCompile(`^\{"id":"pay_[0-9A-Za-z]+"`)
	amount = regexp.MustCompile(`"amount":[0-9.]+,`)
)

func (f *firstID) rewrite(r *http.Request, _ http.Header, body []byte) []byte {
	if !isCreate(r) {
		return body
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := topID.Find(body)
	if id == nil {
		return body
	}
	if f.first == nil {
		f.first = id
		return body
	}
	return topID.ReplaceAll(body, f.first)
}

func TestRun_AnAnswerAboutAnotherPaymentIsAViolation(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fakes  int
		layer  func(t *testing.T, s *paymocktest.Server) upstreamtest.Layer
		want   []string // check param code
		words  string   // in the text report
		skipLC bool     // the list is too long to look for the run's payments
	}{
		{name: "a faithful paymock", layer: func(*testing.T, *paymocktest.Server) upstreamtest.Layer { return upstreamtest.Layer{} }},
		{name: "a faithful paymock with more than 100 payments", fakes: 120, skipLC: true,
			layer: func(*testing.T, *paymocktest.Server) upstreamtest.Layer { return upstreamtest.Layer{} }},
		{name: "every retrieve answers one payment, as Prism answers its example",
			layer: func(t *testing.T, s *paymocktest.Server) upstreamtest.Layer {
				example := createPayment(t, s)
				return upstreamtest.Layer{Target: func(r *http.Request) string {
					if r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/payments/") {
						return "/api/v1/payments/" + example
					}
					return r.URL.RequestURI()
				}}
			},
			want:  []string{"retrieve id wrong_payment", "unknown_id id wrong_payment"},
			words: "unknown_id: GET /api/v1/payments/" + unknownID + " -> 200: id wrong_payment: a retrieve of " + unknownID + ", an id never created, answered 200 with another payment, pay_",
		},
		{name: "the list leaves out the run's payments, as a stale cache would",
			layer: func(t *testing.T, _ *paymocktest.Server) upstreamtest.Layer {
				return upstreamtest.Layer{Answer: func(r *http.Request, _ http.Header, body []byte) []byte {
					if isList(r) {
						return withoutRunPayments(t, body)
					}
					return body
				}}
			},
			want:  []string{"list.per_page_100 items missing_from_list"},
			words: "list.per_page_100: GET /api/v1/payments?per_page=100 -> 200: items missing_from_list: the list holds all 0 of the merchant's payments (one page of per_page 100) but not pay_",
		},
		{name: "the create answers another amount, currency and metadata",
			layer: func(*testing.T, *paymocktest.Server) upstreamtest.Layer {
				return upstreamtest.Layer{Answer: func(r *http.Request, _ http.Header, body []byte) []byte {
					if !isCreate(r) {
						return body
					}
					body = amount.ReplaceAll(body, []byte(`"amount":12.25,`))
					body = bytes.Replace(body, []byte(`"currency":"EUR"`), []byte(`"currency":"USD"`), 1)
					return bytes.Replace(body, []byte(`"paymock_verify":"vfy_`), []byte(`"paymock_verify":"other_`), 1)
				}}
			},
			want: []string{"create.account amount not_as_created", "create.account currency not_as_created", "create.account metadata not_as_created",
				"create.card amount not_as_created", "create.card currency not_as_created", "create.card metadata not_as_created",
				"create.checkout amount not_as_created", "create.checkout currency not_as_created", "create.checkout metadata not_as_created"},
			words: "create.checkout: POST /api/v1/payments -> 201: amount not_as_created: amount is 12.25, not the 10.50 the run created the payment with\n" +
				"  create.checkout: POST /api/v1/payments -> 201: currency not_as_created: currency is USD, not the EUR the run created the payment with\n" +
				`  create.checkout: POST /api/v1/payments -> 201: metadata not_as_created: metadata is {"paymock_verify":"other_`,
		},
		{name: "the retrieve and the lists answer another amount",
			layer: func(*testing.T, *paymocktest.Server) upstreamtest.Layer {
				return upstreamtest.Layer{Answer: func(r *http.Request, _ http.Header, body []byte) []byte {
					if r.Method == http.MethodGet {
						return amount.ReplaceAll(body, []byte(`"amount":12.25,`))
					}
					return body
				}}
			},
			want: []string{"list.per_page_1 items.0.amount not_as_created", "list.per_page_100 items.0.amount not_as_created",
				"list.per_page_100 items.1.amount not_as_created", "list.per_page_100 items.2.amount not_as_created", "retrieve amount not_as_created"},
			words: "list.per_page_100: GET /api/v1/payments?per_page=100 -> 200: items.*.amount not_as_created: items.*.amount is 12.25, not the 10.50 the run created the payment with (3×)",
		},
		{name: "the create answers the payment completed",
			layer: func(*testing.T, *paymocktest.Server) upstreamtest.Layer {
				return upstreamtest.Layer{Answer: func(r *http.Request, _ http.Header, body []byte) []byte {
					if isCreate(r) {
						return bytes.Replace(body, []byte(`"status":"pending"`), []byte(`"status":"completed"`), 1)
					}
					return body
				}}
			},
			want:  []string{"create.account status not_as_created", "create.card status not_as_created", "create.checkout status not_as_created"},
			words: "status not_as_created: status is completed, not pending: the spec makes pending the initial status on creation",
		},
		{name: "every create answers a payment that was there before, as Prism answers its example",
			layer: func(t *testing.T, s *paymocktest.Server) upstreamtest.Layer {
				example := []byte(`{"id":"` + createPayment(t, s) + `"`)
				return upstreamtest.Layer{Answer: func(r *http.Request, _ http.Header, body []byte) []byte {
					if isCreate(r) {
						return topID.ReplaceAll(body, example)
					}
					return body
				}}
			},
			want:  []string{"create.account id id_reused", "create.card id id_reused", "create.checkout id id_reused"},
			words: ", a payment the list showed before the run created any: an id is a payment's own (the spec: unique identifier)",
		},
		{name: "every create answers the first one's id",
			layer: func(*testing.T, *paymocktest.Server) upstreamtest.Layer {
				return upstreamtest.Layer{Answer: new(firstID).rewrite}
			},
			want:  []string{"create.account id id_reused", "create.card id id_reused"},
			words: ", the id create.checkout answered first: an id is a payment's own (the spec: unique identifier)",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := paymocktest.New(t, paymocktest.AllowViolations(), paymocktest.WithFakePayments(tc.fakes))
			srv := tc.layer(t, s).Serve(t, s.URL)
			rep := runAgainst(t, Config{BaseURL: srv.URL, APIKey: s.APIKey, Card: true, AccountID: "acct_sandbox_active"})
			out := text(t, rep)
			var got []string
			for _, v := range rep.Violations {
				got = append(got, v.Check+" "+v.Param+" "+v.Code)
			}
			slices.Sort(got)
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("violations %q, want %q:\n%s", got, tc.want, out)
			}
			if !strings.Contains(out, tc.words) {
				t.Errorf("the report does not say %q:\n%s", tc.words, out)
			}
			skipped := slices.ContainsFunc(rep.Skipped, func(s Skip) bool { return s.Check == checkListCreated })
			if skipped != tc.skipLC {
				t.Errorf("%s left out: %v, want %v:\n%s", checkListCreated, skipped, tc.skipLC, out)
			}
			if len(rep.Problems) > 0 {
				t.Errorf("problems: %q", rep.Problems)
			}
		})
	}
}
