// Tests that the metadata scenario is read as encoding/json reads it.

package mockserver

import (
	"encoding/json"
	"testing"
)

// jsonScenario is metadataScenario without its short cut.
func jsonScenario(raw []byte) string {
	var md struct {
		Scenario any `json:"scenario"`
	}
	if json.Unmarshal(raw, &md) != nil {
		return ""
	}
	s, _ := md.Scenario.(string)
	return s
}

func TestMetadataScenario_ReadsAsEncodingJSON(t *testing.T) {
	for _, raw := range []string{`{"k":"v"}`, `{"scenario":"decline"}`, `{"SCENARIO":"decline"}`, `{"\u0073cenario":"decline"}`,
		"{\"\u017fcenario\":\"decline\"}", `{"scenario":1}`, `{"x":"scenario"}`, `not json`} {
		if got, want := metadataScenario([]byte(raw)), jsonScenario([]byte(raw)); got != want {
			t.Errorf("%s: %q, encoding/json reads %q", raw, got, want)
		}
	}
}

// FuzzMetadataScenario_ReadsAsEncodingJSON compares the two readings.
func FuzzMetadataScenario_ReadsAsEncodingJSON(f *testing.F) {
	f.Add([]byte(`{"scenario":"decline"}`))
	f.Add([]byte(`{"ScEnArIo":"x","k":"v"}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := metadataScenario(raw), jsonScenario(raw); got != want {
			t.Fatalf("%q: %q, encoding/json reads %q", raw, got, want)
		}
	})
}
