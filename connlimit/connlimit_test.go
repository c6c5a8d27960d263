// Tests of the bound taken from the file limit; the limiter itself is
// tested over real connections to the binary (cmd/paymock/conns_test.go).

package connlimit

import "testing"

func TestForFileLimit_KeepsAnEighthForOtherFilesAndStopsAtDefaultMax(t *testing.T) {
	tests := []struct {
		nofile uint64
		want   int
	}{
		{1 << 20, DefaultMax}, // Docker's usual limit: memory, not descriptors, bounds it
		{20_000, DefaultMax},  // 17,500 would fit: the default is lower
		{8_192, 7_168},        // an eighth kept
		{1_024, 896},          // the usual soft limit of a shell
		{256, 192},            // at least 64 kept
		{64, 1},               // nothing left but the one connection
	}
	for _, tt := range tests {
		if got := ForFileLimit(tt.nofile); got != tt.want {
			t.Errorf("ForFileLimit(%d) = %d, want %d", tt.nofile, got, tt.want)
		}
	}
}
