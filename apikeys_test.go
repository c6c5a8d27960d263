// Tests of API keys made and revoked at run time, in both modes.

package paymock

import (
	"strings"
	"testing"
)

func TestMaskKey(t *testing.T) {
	for _, tc := range []struct{ key, want string }{
		{"sk_test_4eC39HqLyjWDarjtT1zdp7dcA1b2", "sk_test_…A1b2"},
		{"sk_test_alpha_0123456789", "sk_test_…6789"},
		{"sk_test_123456789012", "sk_test_…9012"}, // twelve hidden
		{"sk_test_merchant", "sk_test_…hant"},     // eight: the last four
		{"sk_test_12345678901", "sk_test_…8901"},
		{"sk_test_acme_2", "sk_test_…e_2"}, // six: the last half
		{"sk_test_acme", "sk_test_…me"},
		{"sk_test_ci", "sk_test_…i"},
		{"sk_test_x", "sk_test_…"}, // one: nothing of it
		{"sk_live_secret_part_here_long", "sk_live_…long"},
		{"eyJhbGciOiJIUzI1NiJ9.payload.sig", "….sig"},
		{"a", "…"},
		{"sk_", "…_"},                       // all prefix: all secret, shown as any other
		{"sk_test_", "…est_"},               // likewise
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
		prefix, tail, _ := strings.Cut(got, "…")
		if hidden := len(tc.key) - len(prefix) - len(tail); hidden < len(tail) {
			t.Errorf("MaskKey(%q) = %q shows %d characters and hides %d", tc.key, got, len(tail), hidden)
		}
	}
}

func TestMaskKey_KeysOfTheSameMerchantLookDifferent(t *testing.T) {
	// The keys a newcomer met, both once masked "sk_test_…", and keys
	// that differ only in their last character.
	for _, keys := range [][]string{
		{"sk_test_ci", "sk_test_merchant"},
		{"sk_test_ab", "sk_test_ac"},
		{"sk_test_acme_1", "sk_test_acme_2", "sk_test_acme_3"},
		{"sk_test_4eC39HqLyjWDarjtT1zdp7dcA1b2", "sk_test_4eC39HqLyjWDarjtT1zdp7dcA1b3"},
	} {
		seen := map[string]string{}
		for _, k := range keys {
			m := MaskKey(k)
			if other, dup := seen[m]; dup {
				t.Errorf("%q and %q are both masked %q", other, k, m)
			}
			seen[m] = k
		}
	}
}
