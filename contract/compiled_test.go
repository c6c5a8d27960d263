// Tests that the compiled checks never pass what kin-openapi refuses.

package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
)

// bodySchema is one JSON body schema of a document with its examples.
type bodySchema struct {
	name     string
	schema   *openapi3.Schema
	response bool
	examples [][]byte
}

func bodySchemas(t testing.TB) []bodySchema {
	t.Helper()
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	var out []bodySchema
	for _, d := range []*Document{docs.Service, docs.Sandbox} {
		d.ready() // the control API's document loads on first use
		add := func(name string, ct openapi3.Content, response bool) {
			mt := ct.Get("application/json")
			if mt == nil || mt.Schema == nil {
				return
			}
			b := bodySchema{name: name, schema: mt.Schema.Value, response: response}
			if mt.Example != nil {
				raw, _ := json.Marshal(mt.Example)
				b.examples = append(b.examples, raw)
			}
			for _, ex := range mt.Examples {
				if ex != nil && ex.Value != nil {
					raw, _ := json.Marshal(ex.Value.Value)
					b.examples = append(b.examples, raw)
				}
			}
			out = append(out, b)
		}
		for _, p := range d.doc.Paths.InMatchingOrder() {
			for m, op := range d.doc.Paths.Value(p).Operations() {
				if op.RequestBody != nil {
					add(m+" "+p+" request", op.RequestBody.Value.Content, false)
				}
				for code, r := range op.Responses.Map() {
					add(m+" "+p+" "+code, r.Value.Content, true)
				}
			}
		}
	}
	return out
}

// kinVerdict is kin-openapi's own judgement of a body, decoded the way
// its JSON body decoder does.
func kinVerdict(t testing.TB, b bodySchema, body []byte) error {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return err
	}
	docs, _ := Embedded()
	opts := slices.Clone(docs.Service.respOpts.SchemaValidationOptions)
	opts = append(opts, openapi3.MultiErrors())
	if b.response {
		opts = append(opts, openapi3.VisitAsResponse())
	} else {
		opts = append(opts, openapi3.VisitAsRequest())
	}
	return b.schema.VisitJSON(v, opts...)
}

func compiledVerdict(t testing.TB, schema *openapi3.Schema, body []byte) verdict {
	t.Helper()
	docs, _ := Embedded()
	k := docs.Service.checks[schema]
	if k == nil {
		k = docs.Sandbox.checks[schema]
	}
	if k == nil {
		t.Fatalf("no compiled check for the schema")
	}
	tr, ok := parseTree(body)
	if !ok {
		return unsure
	}
	defer tr.release()
	return k.validate(tr, 0)
}

func TestCompiledChecks_CoverEveryBodyOfTheDocuments(t *testing.T) {
	// A keyword the checks do not model sends every body of its schema
	// back to the slow path: this test names it instead of letting the
	// speed go quietly.
	for _, b := range bodySchemas(t) {
		docs, _ := Embedded()
		k := docs.Service.checks[b.schema]
		if k == nil {
			k = docs.Sandbox.checks[b.schema]
		}
		if k == nil || k.unsupported {
			t.Errorf("%s: its schema is not compiled; every body of it goes to kin-openapi", b.name)
		}
	}
}

// mutations are values put in place of each value of an example, chosen
// to sit on the edges of the documents' keywords.
var mutations = []any{
	nil, true, false, "", "x", "USD", "usd", "card", "pending", "succeeded",
	json.Number("0"), json.Number("-1"), json.Number("0.01"), json.Number("0.009"), json.Number("1.5"),
	json.Number("9999"), json.Number("10000"), json.Number("2147483648"), json.Number("1e400"),
	json.Number("999999999.99"), json.Number("1000000000"), json.Number("12"), json.Number("13"),
	"2026-11-21T12:00:00Z", "2026-13-21T12:00:00Z", "2026-11-21T12:00:00+01:00",
	"https://shop.example.com/ok", "http://user@shop.example.com/", "ftp://x.example/", "not a url",
	"jane@example.com", "jane@localhost", "Jane <jane@example.com>",
	"pay_eX4wfP3t53uWYeLytOXuTdQK", "cus_IwedGhNUwYReemdqbSIibeTf", "pay_short", "4242", "42a2",
	"10.50", "10.505", "4242424242424242", "42424242424242424242", "123", "12345", "IE", "ie",
	"é", strings.Repeat("a", 255), strings.Repeat("a", 256), strings.Repeat("é", 201),
	[]any{}, []any{"x"}, map[string]any{}, map[string]any{"k": "v"},
}

// variants are an example's mutations: each value replaced by each
// mutation, each member removed, an unknown member added.
func variants(v any, emit func(any)) {
	switch v := v.(type) {
	case map[string]any:
		for k, old := range v {
			delete(v, k)
			emit(v)
			v[k] = old
			for _, m := range mutations {
				v[k] = m
				emit(v)
			}
			v[k] = old
			variants(old, func(any) { emit(v) })
		}
		v["unknown_field"] = "x"
		emit(v)
		delete(v, "unknown_field")
	case []any:
		for i, old := range v {
			for _, m := range mutations {
				v[i] = m
				emit(v)
			}
			v[i] = old
			variants(old, func(any) { emit(v) })
		}
		emit(append(slices.Clone(v), v...))
	}
}

func TestCompiledChecks_NeverPassWhatKinRefuses(t *testing.T) {
	passed, refused, total := 0, 0, 0
	type key struct {
		schema  *openapi3.Schema
		example string
	}
	seen := map[key]bool{}
	for _, b := range bodySchemas(t) {
		for _, ex := range b.examples {
			if seen[key{b.schema, string(ex)}] {
				continue // the same schema shared by operations
			}
			seen[key{b.schema, string(ex)}] = true
			var root any
			dec := json.NewDecoder(bytes.NewReader(ex))
			dec.UseNumber()
			if err := dec.Decode(&root); err != nil {
				t.Fatal(err)
			}
			judge := func(body []byte) {
				total++
				got := compiledVerdict(t, b.schema, body)
				err := kinVerdict(t, b, body)
				switch {
				case got == valid && err != nil:
					t.Errorf("%s: compiled check passed what kin refuses (%v):\n%s", b.name, err, body)
				case got == invalid && err == nil:
					t.Errorf("%s: compiled check refused what kin passes:\n%s", b.name, body)
				case got == valid:
					passed++
				case got == invalid:
					refused++
				}
			}
			judge(ex)
			if compiledVerdict(t, b.schema, ex) != valid {
				t.Errorf("%s: the compiled check does not pass the document's own example:\n%s", b.name, ex)
			}
			variants(root, func(any) {
				body, err := json.Marshal(root)
				if err != nil {
					t.Fatal(err)
				}
				// A fixed quarter of the variants, picked by content, keeps
				// the run short; the fuzz target below goes further.
				h := fnv.New32a()
				h.Write(body)
				if h.Sum32()%4 == 0 {
					judge(body)
				}
			})
		}
	}
	t.Logf("%d bodies: %d passed and %d refused by the compiled checks, the rest left to kin", total, passed, refused)
	if passed == 0 || refused == 0 {
		t.Fatalf("the compiled checks judged nothing (%d passed, %d refused)", passed, refused)
	}
}

func TestParseTree_LeavesToKinWhatEncodingJSONWouldRewrite(t *testing.T) {
	for _, body := range []string{
		`{"a":1,"a":2}`,          // encoding/json keeps the last
		`{"\u0061":1}`,           // an escaped key
		"{\"a\":\"\xff\"}",       // invalid UTF-8, rewritten as U+FFFD
		`{"a":01}`,               // not JSON
		`{"a":1} x`,              // trailing data
		`{"a":1,}`,               // not JSON
		`{"a":"` + "\x01" + `"}`, // a control character
		strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2),
	} {
		if tr, ok := parseTree([]byte(body)); ok {
			tr.release()
			t.Errorf("%q parsed; want it left to kin", body)
		}
	}
	for _, body := range []string{`{}`, ` {"a" : [1, -2.5e+3, "\"é\u00e9", true, null, {}]} `, `"x"`, `0`} {
		tr, ok := parseTree([]byte(body))
		if !ok {
			t.Errorf("%q refused", body)
			continue
		}
		tr.release()
	}
}

func FuzzCompiledCheck_PaymentAgreesWithKin(f *testing.F) {
	var payment bodySchema
	for _, b := range bodySchemas(f) {
		if b.name == "GET /api/v1/payments/{id} 200" {
			payment = b
		}
	}
	if payment.schema == nil {
		f.Fatal("no Payment response")
	}
	for _, ex := range payment.examples {
		f.Add(ex)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := compiledVerdict(t, payment.schema, body)
		err := kinVerdict(t, payment, body)
		if got == valid && err != nil {
			t.Fatalf("compiled check passed what kin refuses (%v): %s", err, body)
		}
		if got == invalid && err == nil {
			t.Fatalf("compiled check refused what kin passes: %s", fmt.Sprintf("%q", body))
		}
	})
}

func TestBodyChecks_FoundOnceAreFoundAnew(t *testing.T) {
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range []*Document{docs.Service, docs.Sandbox} {
		d.ready()
		for key, resp := range d.responses {
			rt := &Route{Route: &routers.Route{Operation: key.op}}
			var want *check
			if len(resp.Headers) == 0 {
				want = d.contentCheck(resp.Content, "application/json")
			}
			if got := d.responseCheck(rt, key.status, http.Header{"Content-Type": {"application/json"}}); got != want {
				t.Errorf("%s %d: the check found at Load is not the one found anew", key.op.OperationID, key.status)
			}
		}
		for _, o := range d.ops {
			op := d.doc.Paths.Find(o.Path).GetOperation(o.Method)
			var want *check
			if rb := op.RequestBody; rb != nil && rb.Value != nil {
				want = d.contentCheck(rb.Value.Content, "application/json")
			}
			if got := d.jsonBodies[op]; got != want {
				t.Errorf("%s: the request body's check found at Load is not the one found anew", o.ID)
			}
		}
	}
}
