// Tests of how far the clock page moves the clock.

package dashboard

import (
	"strings"
	"testing"
	"time"
)

func TestParseAdvance_TakesWhatTheControlAPITakes(t *testing.T) {
	tests := []struct {
		in      string
		want    time.Duration
		refusal string // part of the message; "" when taken
	}{
		{"3600", time.Hour, ""},
		{"90s", 90 * time.Second, ""},
		{"1h30m", 90 * time.Minute, ""},
		{"2d", 48 * time.Hour, ""},
		// The control API's bound: seconds at most 31536000, a year.
		{"31536000", 365 * 24 * time.Hour, ""},
		{"365d", 365 * 24 * time.Hour, ""},
		{"31536001", 0, "at most 365 days"},
		{"366d", 0, "at most 365 days"},
		{"8761h", 0, "at most 365 days"},
		{"3650d", 0, "at most 365 days"},
		{"0", 0, "at least one second"},
		{"1.5s", 0, "whole seconds"},
		{"soon", 0, "not a length of time"},
		{"", 0, "Enter how far"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, msg := parseAdvance(tc.in)
			if tc.refusal == "" && (msg != "" || got != tc.want) {
				t.Errorf("parseAdvance(%q) = %v, %q; want %v", tc.in, got, msg, tc.want)
			}
			if tc.refusal != "" && !strings.Contains(msg, tc.refusal) {
				t.Errorf("parseAdvance(%q) = %v, %q; want a refusal with %q", tc.in, got, msg, tc.refusal)
			}
		})
	}
}
