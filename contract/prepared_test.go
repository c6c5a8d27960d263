// Tests that the prepared JSON the binary embeds is the YAML's document,
// and that the control API's document waits for its first use.

package contract

import (
	"bytes"
	"io/fs"
	"net/http/httptest"
	"os"
	"reflect"
	"slices"
	"testing"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/contract/internal/prepared"
)

// onDisk holds every prepared file, the embedded ones and those only the
// tests read.
var onDisk = os.DirFS(".")

func TestPreparedDocuments_MatchTheYAML(t *testing.T) {
	for _, f := range prepared.Files {
		t.Run(f.YAML, func(t *testing.T) {
			// FromYAML validates the document: a start does not.
			want, err := prepared.FromYAML(paymock.Documents, f.YAML)
			if err != nil {
				t.Fatal(err)
			}
			packed, err := fs.ReadFile(onDisk, "prepared/"+f.JSON)
			if err != nil {
				t.Fatal(err)
			}
			got, err := prepared.Unpack(packed)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("contract/prepared/%s is not %s as it is now: run go generate ./contract", f.JSON, f.YAML)
			}
		})
	}
}

func TestPreparedDocuments_LoadAsTheYAMLDoes(t *testing.T) {
	// The JSON must load to the very document the YAML loads to, refs
	// resolved the same way, or validation would differ from the YAML's.
	for _, f := range prepared.Files {
		t.Run(f.YAML, func(t *testing.T) {
			fromYAML, err := Load(paymock.Documents, f.YAML)
			if err != nil {
				t.Fatal(err)
			}
			fromJSON := &Document{}
			if err := fromJSON.loadPrepared(onDisk, f); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(fromJSON.doc, fromYAML.doc) {
				t.Fatalf("the prepared %s loads to a different document than %s", f.JSON, f.YAML)
			}
			if !reflect.DeepEqual(fromJSON.ops, fromYAML.ops) {
				t.Fatalf("the prepared %s lists different operations than %s", f.JSON, f.YAML)
			}
		})
	}
}

func TestBuiltDocument_IsTheYAMLs(t *testing.T) {
	// The built form must be what gen writes from the YAML now.
	data, err := prepared.FromYAML(paymock.Documents, prepared.Files[0].YAML)
	if err != nil {
		t.Fatal(err)
	}
	want, err := prepared.Build(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := preparedDocs.ReadFile("prepared/" + prepared.BuiltService)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("contract/prepared/%s is not %s as it is now: run go generate ./contract", prepared.BuiltService, prepared.Files[0].YAML)
	}
}

func TestBuiltDocument_LoadsAsTheYAMLDoes(t *testing.T) {
	// What a start loads: the document, resolved, kin's own state
	// included, and the operations must be the YAML's.
	fromYAML, err := Load(paymock.Documents, prepared.Files[0].YAML)
	if err != nil {
		t.Fatal(err)
	}
	fromBuilt := &Document{}
	if err := fromBuilt.loadBuilt(); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(fromBuilt.doc, fromYAML.doc) {
		t.Fatal("the built form loads to a different document than openapi.yaml")
	}
	if !reflect.DeepEqual(fromBuilt.ops, fromYAML.ops) {
		t.Fatal("the built form lists different operations than openapi.yaml")
	}
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(docs.Service.doc, fromYAML.doc) {
		t.Fatal("Embedded's service contract is not openapi.yaml's")
	}
}

func TestRebuild_RefusesACorruptStream(t *testing.T) {
	data, err := prepared.FromYAML(paymock.Documents, prepared.Files[0].YAML)
	if err != nil {
		t.Fatal(err)
	}
	built, err := prepared.Build(data)
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range map[string][]byte{
		"cut short":   built[:len(built)/2],
		"with a tail": append(slices.Clone(built), 0),
		"empty":       {},
	} {
		if _, err := prepared.Rebuild(b); err == nil {
			t.Errorf("%s: rebuilt without an error", name)
		}
	}
}

func TestEmbedded_LoadsTheSandboxDocumentOnFirstUse(t *testing.T) {
	docs, err := Embedded()
	if err != nil {
		t.Fatal(err)
	}
	sb := &Document{prepare: docs.Sandbox.prepare}
	if sb.doc != nil {
		t.Fatal("the control API's document was loaded before its first use")
	}
	rt, err := sb.Match(httptest.NewRequest("GET", "/_sandbox/events", nil))
	if err != nil {
		t.Fatalf("first use: %v", err)
	}
	if rt.OperationID() == "" || sb.doc == nil {
		t.Fatal("the first Match did not load the document")
	}
}

// BenchmarkStart_Embedded is what the first Embedded of a process costs:
// the service contract from its built form (the control API's document
// waits for its first use, BenchmarkStart_SandboxOnFirstUse).
func BenchmarkStart_Embedded(b *testing.B) {
	benchLoad(b, func() error { return (&Document{}).loadBuilt() })
}

// BenchmarkStart_ServiceFromJSON is what the service contract cost when
// a start decoded its prepared JSON.
func BenchmarkStart_ServiceFromJSON(b *testing.B) {
	benchLoad(b, func() error { return (&Document{}).loadPrepared(onDisk, prepared.Files[0]) })
}

func BenchmarkStart_SandboxOnFirstUse(b *testing.B) {
	benchLoad(b, func() error { return (&Document{}).loadPrepared(preparedDocs, prepared.Files[1]) })
}

// BenchmarkStart_FromYAML is what a start cost before the documents were
// prepared at build time: both YAML documents loaded and validated.
func BenchmarkStart_FromYAML(b *testing.B) {
	benchLoad(b, func() error {
		for _, f := range prepared.Files {
			if _, err := Load(paymock.Documents, f.YAML); err != nil {
				return err
			}
		}
		return nil
	})
}

// benchLoad reports CPU time per load besides wall time: on a shared
// machine the CPU is the figure that means something.
func benchLoad(b *testing.B, load func() error) {
	cpu0 := cpuTime()
	for b.Loop() {
		if err := load(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N)/1e6, "cpu-ms/op")
}
