// Tests of the bounds a shared sandbox puts on what a client sends: input
// sizes declared in the contract, and numbers in every form JSON allows.

package sandbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// metadataOf is a metadata object of n keys "k00".. with the value v.
func metadataOf(n int, v any) map[string]any {
	md := make(map[string]any, n)
	for i := range n {
		md[fmt.Sprintf("k%02d", i)] = v
	}
	return md
}

// emailOf is a valid address of exactly n characters: a short local part
// and a domain of labels up to 63 characters.
func emailOf(n int) string {
	domain := "example.com"
	for len("jane@")+len(domain) < n {
		label := min(n-len("jane@")-len(domain)-1, 63)
		if label < 1 {
			domain = "x" + domain
			continue
		}
		domain = strings.Repeat("d", label) + "." + domain
	}
	return "jane@" + domain
}

func TestCreate_BoundsOfFreeText(t *testing.T) {
	env := newEnv(t)
	tests := []struct {
		name      string
		edit      func(map[string]any)
		wantParam string // "" means the create succeeds
	}{
		{"description of 1000 characters", func(b map[string]any) { b["description"] = strings.Repeat("é", 1000) }, ""},
		{"description of 1001 characters", func(b map[string]any) { b["description"] = strings.Repeat("d", 1001) }, "description"},
		{"customer name of 255", func(b map[string]any) { b["customer"].(map[string]any)["name"] = strings.Repeat("n", 255) }, ""},
		{"customer name of 256", func(b map[string]any) { b["customer"].(map[string]any)["name"] = strings.Repeat("n", 256) }, "customer.name"},
		{"customer email of 254", func(b map[string]any) { b["customer"].(map[string]any)["email"] = emailOf(254) }, ""},
		{"customer email of 255", func(b map[string]any) { b["customer"].(map[string]any)["email"] = emailOf(255) }, "customer.email"},
		{"metadata of 50 keys", func(b map[string]any) { b["metadata"] = metadataOf(50, "v") }, ""},
		{"metadata of 51 keys", func(b map[string]any) { b["metadata"] = metadataOf(51, "v") }, "metadata"},
		{"metadata key of 40 characters", func(b map[string]any) { b["metadata"] = map[string]any{strings.Repeat("k", 40): "v"} }, ""},
		{"metadata key of 41 characters", func(b map[string]any) { b["metadata"] = map[string]any{strings.Repeat("k", 41): "v"} }, "metadata"},
		{"metadata value of 500 characters", func(b map[string]any) { b["metadata"] = metadataOf(1, strings.Repeat("ü", 500)) }, ""},
		{"metadata value of 501 characters", func(b map[string]any) { b["metadata"] = metadataOf(1, strings.Repeat("v", 501)) }, "metadata.k00"},
		{"metadata value of 900 kB", func(b map[string]any) { b["metadata"] = metadataOf(1, strings.Repeat("v", 900_000)) }, "metadata.k00"},
		{"metadata object value over 500 bytes", func(b map[string]any) {
			b["metadata"] = metadataOf(1, map[string]any{"list": strings.Split(strings.Repeat("ab,", 200), ",")})
		}, "metadata.k00"},
		{"metadata number value", func(b map[string]any) { b["metadata"] = metadataOf(1, 12.5) }, ""},
		{"metadata value 5 deep", func(b map[string]any) { b["metadata"] = metadataOf(50, json.RawMessage(`[{"a":[[{}]]}]`)) }, ""},
		{"metadata value 6 deep", func(b map[string]any) { b["metadata"] = metadataOf(1, json.RawMessage(`[{"a":[[{"b":[]}]]}]`)) }, "metadata.k00"},
		{"metadata value 249 deep", func(b map[string]any) {
			b["metadata"] = metadataOf(1, json.RawMessage(strings.Repeat("[", 249)+strings.Repeat("]", 249)))
		}, "metadata.k00"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := validCreate()
			tc.edit(body)
			st, out, _ := env.do("POST", "/api/v1/payments", keyA, body)
			if tc.wantParam == "" {
				if st != 201 {
					t.Fatalf("status %d, want 201: %v", st, out)
				}
				return
			}
			if st != 400 {
				t.Fatalf("status %d, want 400: %v", st, out)
			}
			if e := errorOf(t, out); e["param"] != tc.wantParam {
				t.Errorf("param %v, want %s: %v", e["param"], tc.wantParam, e)
			}
		})
	}
	// Nothing refused was stored.
	_, list, _ := env.do("GET", "/api/v1/payments?per_page=100", keyA, nil)
	if n := list["pagination"].(map[string]any)["total_items"].(float64); n != 8 {
		t.Errorf("%v payments stored, want the 8 accepted", n)
	}
}

func TestCreate_WholeNumbersInEveryJSONForm(t *testing.T) {
	env := newEnv(t)
	for _, form := range []string{"60", "60.0", "6e1", "6E+1", "600e-1", "60.000"} {
		t.Run("expires_in "+form, func(t *testing.T) {
			body := validCreate()
			body["expires_in"] = json.RawMessage(form)
			body["mcc"] = json.RawMessage("5732.0")
			st, out, _ := env.do("POST", "/api/v1/payments", keyA, body)
			if st != 201 {
				t.Fatalf("status %d, want 201: %v", st, out)
			}
			created, _ := time.Parse(time.RFC3339, out["created_at"].(string))
			expires, _ := time.Parse(time.RFC3339, out["expires_at"].(string))
			if d := expires.Sub(created); d != time.Minute {
				t.Errorf("expires %v after creation, want 1m", d)
			}
		})
	}
	t.Run("card expiry month 12.0", func(t *testing.T) {
		body := withCard(validCreate())
		delete(body, "mcc")
		body["account_id"] = "acct_sandbox_active"
		card := body["payment_method"].(map[string]any)["card"].(map[string]any)
		card["expiry_month"], card["expiry_year"] = json.RawMessage("12.0"), json.RawMessage("2.03e3")
		st, out, _ := env.do("POST", "/api/v1/payments", keyA, body)
		if st != 201 {
			t.Fatalf("status %d, want 201: %v", st, out)
		}
		got := out["payment_method"].(map[string]any)["card"].(map[string]any)
		if got["expiry_month"] != 12.0 || got["expiry_year"] != 2030.0 {
			t.Errorf("card %v, want 12/2030", got)
		}
	})
	t.Run("not whole is 400 naming the field", func(t *testing.T) {
		body := validCreate()
		body["expires_in"] = json.RawMessage("60.5")
		st, out, _ := env.do("POST", "/api/v1/payments", keyA, body)
		if st != 400 || errorOf(t, out)["param"] != "expires_in" {
			t.Errorf("status %d, %v; want 400 naming expires_in", st, out)
		}
	})
	t.Run("clock advance seconds 60.0", func(t *testing.T) {
		_, before, _ := env.do("GET", "/_sandbox/clock", keyA, nil)
		st, out, _ := env.do("POST", "/_sandbox/clock/advance", keyA, `{"seconds": 6.0e1}`)
		if st != 200 {
			t.Fatalf("status %d, want 200: %v", st, out)
		}
		b, _ := time.Parse(time.RFC3339, before["now"].(string))
		a, _ := time.Parse(time.RFC3339, out["now"].(string))
		if a.Sub(b) != time.Minute {
			t.Errorf("the clock moved %v, want 1m", a.Sub(b))
		}
	})
}

func TestAnswers_AreNeitherSniffedNorCached(t *testing.T) {
	env := newEnv(t)
	id := env.create(keyA, nil)
	for _, c := range []struct{ method, path, key string }{
		{"GET", "/api/v1/payments/" + id, keyA},
		{"GET", "/api/v1/payments", keyA},
		{"GET", "/api/v1/payments/" + id, ""}, // a 401
		{"GET", "/api/v1/nothing", keyA},      // a 404
		{"GET", "/_sandbox/clock", keyA},
		{"GET", "/checkout/" + id, ""},
		{"GET", "/healthz", ""},
		{"GET", "/readyz", ""},
	} {
		_, _, h := env.do(c.method, c.path, c.key, nil)
		if got := h.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s: X-Content-Type-Options %q, want nosniff", c.method, c.path, got)
		}
		if got := h.Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s %s: Cache-Control %q, want no-store", c.method, c.path, got)
		}
	}
}

func TestReadyz_AnswersWhenTheBackendServes(t *testing.T) {
	env := newEnv(t)
	st, body, _ := env.do("GET", "/readyz", "", nil)
	if st != 200 || body["status"] != "ok" {
		t.Errorf("readyz: %d %v", st, body)
	}
}

func TestFaultRules_WholeNumbersInEveryJSONForm(t *testing.T) {
	env := newEnv(t)
	st, out, _ := env.do("POST", "/_sandbox/faults", keyA,
		`{"operation": "retrievePayment", "status": 429.0, "times": 2e0, "delay_ms": 1.0e1, "retry_after": 3.00}`)
	if st != 201 {
		t.Fatalf("status %d, want 201: %v", st, out)
	}
	if out["status"] != 429.0 || out["remaining"] != 2.0 || out["delay_ms"] != 10.0 || out["retry_after"] != 3.0 {
		t.Errorf("rule %v, want status 429, remaining 2, delay 10 ms, retry after 3", out)
	}
	st, out, _ = env.do("POST", "/_sandbox/faults", keyA, `{"target": "webhooks", "duplicate": 2.5}`)
	if st != 400 || errorOf(t, out)["param"] != "duplicate" {
		t.Errorf("duplicate 2.5: %d %v, want 400 naming duplicate", st, out)
	}
}

// TestCreate_RefusesABodyOfTooManyValues: a body of more JSON values than
// any request needs is refused before it costs schema validation, and the
// largest create the metadata rules allow still passes.
func TestCreate_RefusesABodyOfTooManyValues(t *testing.T) {
	env := newEnv(t)
	zeros := make([]int, 249) // 499 bytes of JSON: within a metadata value's 500
	largest := validCreate()
	largest["metadata"] = metadataOf(50, zeros)
	tooMany := validCreate()
	tooMany["metadata"] = map[string]any{"a": make([]map[string]any, 20_000)} // 20,000 nulls, 100 kB
	raw, err := json.Marshal(validCreate())
	if err != nil {
		t.Fatal(err)
	}
	// encoding/json writes no nesting this deep: the body is spliced.
	deep := strings.Replace(string(raw), `"metadata":{`, `"metadata":{"a":`+strings.Repeat("[", 17_000)+strings.Repeat("]", 17_000)+`,`, 1)

	if st, body, _ := env.do("POST", "/api/v1/payments", keyA, largest); st != 201 {
		t.Fatalf("the largest valid create: %d %v", st, body)
	}
	for name, body := range map[string]any{"many items": tooMany, "deep nesting": deep} {
		t.Run(name, func(t *testing.T) {
			st, answer, _ := env.do("POST", "/api/v1/payments", keyA, body)
			e := errorOf(t, answer)
			if st != 400 || e["type"] != "invalid_request_error" || e["code"] != "body_too_complex" ||
				!strings.Contains(fmt.Sprint(e["message"]), "16384 JSON values") {
				t.Fatalf("%d %v, want 400 body_too_complex naming the bound", st, answer)
			}
		})
	}
	if st, list, _ := env.do("GET", "/api/v1/payments", keyA, nil); st != 200 || len(list["items"].([]any)) != 1 {
		t.Errorf("stored after the refusals: %d %v, want the one valid payment", st, list)
	}
}

// TestCreate_DeepMetadataIsListedWithTheContractsViolations: a body the
// contract refuses still goes through the create rules, so metadata
// nested too deep is named beside the contract's own violations.
func TestCreate_DeepMetadataIsListedWithTheContractsViolations(t *testing.T) {
	env := newEnv(t)
	body := validCreate()
	delete(body, "description")
	body["metadata"] = map[string]any{"order_id": "ord_1", "lines": json.RawMessage(`[[[[[["sku_1"]]]]]]`)}
	st, out, _ := env.do("POST", "/api/v1/payments", keyA, body)
	if st != 400 {
		t.Fatalf("status %d, want 400: %v", st, out)
	}
	var params []string
	for _, v := range errorOf(t, out)["errors"].([]any) {
		params = append(params, fmt.Sprint(v.(map[string]any)["param"]))
	}
	if got := strings.Join(params, " "); got != "description metadata.lines" {
		t.Errorf("violations name %q, want description and metadata.lines", got)
	}
}
