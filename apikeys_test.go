// Tests of API keys made and revoked at run time, in both modes.

package paymock

import (
	"testing"
)

func TestMaskKey(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"sk_test_4eC39HqLyjWDarjtT1zdp7dcA1b2", "sk_test_…A1b2"},
		{"sk_test_alpha_0123456789", "sk_test_…6789"},
		{"sk_test_acme", "sk_test_…"},             // the tail would be the whole secret part
		{"sk_test_acme_2", "sk_test_…"},           // six hidden: still too short for a tail
		{"sk_test_123456789012", "sk_test_…9012"}, // exactly eight hidden
		{"sk_test_12345678901", "sk_test_…"},      // seven hidden
		{"sk_live_secret_part_here_long", "sk_live_…long"},
		{"eyJhbGciOiJIUzI1NiJ9.payload.sig", "….sig"},
		{"a", "…"},
		{"sk_", "…"},                        // all prefix: nothing of it shown
		{"sk_test_", "…"},                   // likewise
		{"ABC_DEF_0123456789abcd", "…abcd"}, // only lowercase words make a prefix
		{"verylongword_0123456789abcdef", "…cdef"},
		{"pk_x_y_0123456789abcdef", "pk_x_…cdef"}, // two words at most
	} {
		got := MaskKey(tc.key)
		if got != tc.want {
			t.Errorf("MaskKey(%q) = %q, want %q", tc.key, got, tc.want)
		}
		if len(got) > maxMaskLen {
			t.Errorf("MaskKey(%q) = %q is longer than %d bytes", tc.key, got, maxMaskLen)
		}
	}
}
