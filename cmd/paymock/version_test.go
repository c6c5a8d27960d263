package main

import (
	"context"
	"io"
	"runtime"
	"strings"
	"testing"
)

func TestRun_VersionPrintsVersion(t *testing.T) {
	tests := []struct {
		name    string
		version string
		want    string
	}{
		{"default build", "dev", "paymock "},
		{"set by -ldflags", "v1.2.3", "paymock v1.2.3"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			saved := version
			version = tt.version
			t.Cleanup(func() { version = saved })
			var out strings.Builder
			if err := run(context.Background(), []string{"version"}, envOf(nil), &out, io.Discard); err != nil {
				t.Fatal(err)
			}
			got := out.String()
			if !strings.HasPrefix(got, tt.want) || !strings.Contains(got, runtime.Version()) || !strings.HasSuffix(got, "\n") {
				t.Errorf("version printed %q, want it to start with %q and name %s", got, tt.want, runtime.Version())
			}
		})
	}
}
