// A shared sandbox one tenant cannot read: what the public pages show of
// an open-mode merchant, and what the endpoint list shows of the
// operator's secret.

package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/paymock/paymock/merchants"
)

// digestWindows are every 8-character window of the hex SHA-256 of key:
// any 32 bits of the digest a page could carry.
func digestWindows(key string) []string {
	h := sha256.Sum256([]byte(key))
	x := hex.EncodeToString(h[:])
	var out []string
	for i := 0; i+8 <= len(x); i++ {
		out = append(out, x[i:i+8])
	}
	return out
}

func TestPublicPages_ShowNothingDerivedFromTheKey(t *testing.T) {
	const weakKey = "password1" // one a dictionary finds from any part of its digest
	env := newEnv(t)
	checkout, _, _ := env.openPage(weakKey, nil)
	threeDS, _, _ := env.openPage(weakKey, func(b map[string]any) { withCard(b) })
	pages := map[string]string{
		"checkout": env.pageURLOf(weakKey, checkout),
		"3ds":      env.pageURLOf(weakKey, threeDS),
	}
	for name, u := range pages {
		r := env.page(u)
		if r.status != http.StatusOK {
			t.Fatalf("%s page: %d", name, r.status)
		}
		if !strings.Contains(r.body, merchants.OpenMerchantName) {
			t.Errorf("%s page does not name the merchant %q:\n%s", name, merchants.OpenMerchantName, r.body)
		}
		var headers strings.Builder
		for k, vs := range r.header {
			headers.WriteString(k + ": " + strings.Join(vs, ", ") + "\n")
		}
		whole := strings.ToLower(r.body + "\n" + headers.String())
		for _, w := range digestWindows(weakKey) {
			if strings.Contains(whole, w) {
				t.Fatalf("%s page carries %q of the key's SHA-256 (%s)", name, w, merchantIDOf(weakKey))
			}
		}
		if strings.Contains(whole, weakKey) {
			t.Errorf("%s page carries the key itself", name)
		}
	}
}
