// Every example of both documents: valid against its own schema, and each
// request example accepted by a running server with the documented status.

package interop

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/paymock/paymock/contract"
)

// documents are the two contracts, as paths in the checkout.
var documents = []string{"openapi.yaml", "sandbox/openapi.yaml"}

// loadDoc loads a document of the checkout with kin-openapi, resolving
// the references between the two.
func loadDoc(t *testing.T, name string) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = true
	doc, err := loader.LoadFromFile(docPath(name))
	if err != nil {
		t.Fatalf("load %s: %v", name, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("%s is not a valid OpenAPI document: %v", name, err)
	}
	return doc
}

// paymockDoc is the document as paymock itself loads and enforces it.
func paymockDoc(t *testing.T, name string) *contract.Document {
	t.Helper()
	d, err := contract.Load(os.DirFS(suite.root), name)
	if err != nil {
		t.Fatalf("paymock cannot load %s: %v", name, err)
	}
	return d
}

// example is one example of a document and where it stands.
type example struct {
	where  string // for messages: "POST /api/v1/payments 201 card"
	value  any
	schema *openapi3.Schema
	// For examples of media types: the operation, and the status (0 for a
	// request body).
	method, path string
	op           *openapi3.Operation
	status       int
	mediaType    string
}

// collectExamples lists every example of doc: of parameters, headers,
// request and response bodies (named or single), and the example keyword
// of every schema reachable from the document.
func collectExamples(doc *openapi3.T) []example {
	var out []example
	add := func(e example) { out = append(out, e) }
	seen := map[*openapi3.Schema]bool{}
	var walkSchema func(where string, s *openapi3.SchemaRef)
	walkSchema = func(where string, ref *openapi3.SchemaRef) {
		if ref == nil || ref.Value == nil || seen[ref.Value] {
			return
		}
		s := ref.Value
		seen[s] = true
		if s.Example != nil {
			add(example{where: where + " (schema example)", value: s.Example, schema: s})
		}
		for _, name := range sortedKeys(s.Properties) {
			walkSchema(where+"."+name, s.Properties[name])
		}
		walkSchema(where+"[]", s.Items)
		for i, sub := range slices.Concat(s.OneOf, s.AnyOf, s.AllOf) {
			walkSchema(fmt.Sprintf("%s#%d", where, i), sub)
		}
		if s.AdditionalProperties.Schema != nil {
			walkSchema(where+".*", s.AdditionalProperties.Schema)
		}
	}
	media := func(where string, content openapi3.Content, base example) {
		for _, mt := range sortedKeys(content) {
			m := content[mt]
			if m.Schema == nil {
				continue
			}
			walkSchema(where+" "+mt, m.Schema)
			e := base
			e.schema, e.mediaType = m.Schema.Value, mt
			if m.Example != nil {
				e.where, e.value = where+" "+mt+" example", m.Example
				add(e)
			}
			for _, name := range sortedKeys(m.Examples) {
				if ex := m.Examples[name]; ex != nil && ex.Value != nil {
					e.where, e.value = where+" "+mt+" "+name, ex.Value.Value
					add(e)
				}
			}
		}
	}
	param := func(where string, p *openapi3.Parameter) {
		if p.Schema == nil {
			return
		}
		if p.Example != nil {
			add(example{where: where + " parameter " + p.Name, value: p.Example, schema: p.Schema.Value})
		}
		for _, name := range sortedKeys(p.Examples) {
			add(example{where: where + " parameter " + p.Name + " " + name, value: p.Examples[name].Value.Value, schema: p.Schema.Value})
		}
		walkSchema(where+" parameter "+p.Name, p.Schema)
	}
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for _, method := range sortedKeys(item.Operations()) {
			op := item.Operations()[method]
			where := method + " " + path
			for _, p := range slices.Concat(item.Parameters, op.Parameters) {
				param(where, p.Value)
			}
			if op.RequestBody != nil {
				media(where+" request", op.RequestBody.Value.Content, example{method: method, path: path, op: op})
			}
			for _, code := range sortedKeys(op.Responses.Map()) {
				resp := op.Responses.Value(code).Value
				status, _ := strconv.Atoi(code)
				for _, h := range sortedKeys(resp.Headers) {
					hv := resp.Headers[h].Value
					if hv.Example != nil && hv.Schema != nil {
						add(example{where: where + " " + code + " header " + h, value: hv.Example, schema: hv.Schema.Value})
					}
				}
				media(where+" "+code, resp.Content, example{method: method, path: path, op: op, status: status})
			}
		}
	}
	for _, name := range sortedKeys(doc.Components.Schemas) {
		walkSchema("#/components/schemas/"+name, doc.Components.Schemas[name])
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// schemaOptions check an example as strictly as paymock checks traffic:
// formats too.
func schemaOptions(request bool) []openapi3.SchemaValidationOption {
	opts := []openapi3.SchemaValidationOption{openapi3.MultiErrors(), openapi3.EnableFormatValidation()}
	if request {
		return append(opts, openapi3.VisitAsRequest())
	}
	return append(opts, openapi3.VisitAsResponse())
}

func TestExamples_ValidAgainstTheirOwnSchemas(t *testing.T) {
	needInterop(t)
	for _, name := range documents {
		t.Run(name, func(t *testing.T) {
			doc := loadDoc(t, name)
			pd := paymockDoc(t, name)
			examples := collectExamples(doc)
			var requests, responses int
			for _, e := range examples {
				if e.op != nil && e.status == 0 {
					requests++
				} else if e.op != nil {
					responses++
				}
				if e.mediaType == "application/xml" {
					s, ok := e.value.(string)
					if !ok {
						t.Errorf("%s: not a string", e.where)
					} else if err := xml.Unmarshal([]byte(s), new(struct{})); err != nil {
						t.Errorf("%s: not well-formed XML: %v", e.where, err)
					}
					continue
				}
				if err := e.schema.VisitJSON(e.value, schemaOptions(e.op != nil && e.status == 0)...); err != nil {
					t.Errorf("%s does not match its schema:\n%v", e.where, err)
				}
				if e.op != nil && e.status != 0 {
					// And as paymock checks its own answers, formats and all.
					if err := checkResponseExample(t, pd, e); err != nil {
						t.Errorf("%s: paymock's response validation refuses it: %v", e.where, err)
					}
				}
			}
			t.Logf("%d examples: %d request bodies, %d responses", len(examples), requests, responses)
			if requests == 0 || responses == 0 {
				t.Errorf("no request or no response examples found in %s", name)
			}
		})
	}
}

// checkResponseExample runs a response example through paymock's own
// response validation for its operation and status.
func checkResponseExample(t *testing.T, pd *contract.Document, e example) error {
	t.Helper()
	body, err := json.Marshal(e.value)
	if err != nil {
		return err
	}
	req := httptest.NewRequest(e.method, fillPath(e.path, e.op), nil)
	route, err := pd.Match(req)
	if err != nil {
		return fmt.Errorf("no route: %w", err)
	}
	header := http.Header{"Content-Type": {e.mediaType}}
	return pd.ValidateResponse(t.Context(), req, route, e.status, header, body)
}

// fillPath puts each path parameter's example into a templated path.
func fillPath(path string, op *openapi3.Operation) string {
	for _, p := range op.Parameters {
		if p.Value.In == "path" {
			path = strings.ReplaceAll(path, "{"+p.Value.Name+"}", fmt.Sprint(p.Value.Example))
		}
	}
	return path
}

func TestExamples_RequestsGetTheDocumentedStatus(t *testing.T) {
	srv := startServer(t)
	sent := 0
	for _, name := range documents {
		doc := loadDoc(t, name)
		for _, e := range collectExamples(doc) {
			if e.op == nil || e.status != 0 {
				continue
			}
			want := successStatus(e.op)
			t.Run(e.where, func(t *testing.T) {
				c := do(t, e.method, srv.URL+fillPath(e.path, e.op), token(t), e.value)
				if c.status != want {
					t.Errorf("status %d, want %d (the operation's documented success): %s", c.status, want, c.body)
				}
			})
			sent++
		}
	}
	if sent < 3 {
		t.Errorf("%d request examples sent; the create examples (with mcc, with a card) and the clock's are expected", sent)
	}
}

// successStatus is the operation's documented 2xx status.
func successStatus(op *openapi3.Operation) int {
	for _, code := range sortedKeys(op.Responses.Map()) {
		if n, err := strconv.Atoi(code); err == nil && n >= 200 && n < 300 {
			return n
		}
	}
	return 0
}

func TestExamples_EveryStatusOfEveryOperationHasOne(t *testing.T) {
	needInterop(t)
	for _, name := range documents {
		doc := loadDoc(t, name)
		have := map[string]bool{}
		for _, e := range collectExamples(doc) {
			if e.op != nil && e.status != 0 {
				have[e.method+" "+e.path+" "+strconv.Itoa(e.status)] = true
			}
		}
		for _, path := range doc.Paths.InMatchingOrder() {
			for method, op := range doc.Paths.Value(path).Operations() {
				for code, resp := range op.Responses.Map() {
					if len(resp.Value.Content) == 0 {
						continue // no body to show, as for a 204
					}
					if key := method + " " + path + " " + code; !have[key] {
						t.Errorf("%s: %s has no response example", name, key)
					}
				}
			}
		}
	}
}
