// Tests of what a payment's page weighs when its metadata is large or
// deep.

package dashboard_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/paymock/paymock"
)

// codeBlocks is the raw text of each code block of a page: the metadata
// first, then each event's body.
func codeBlocks(p page) []string {
	var out []string
	for _, n := range findAll(p.doc, "class", "code-block") {
		var b strings.Builder
		walk(n, func(c *html.Node) {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		})
		out = append(out, b.String())
	}
	return out
}

func TestPaymentPage_WeighsAboutWhatThePaymentDoes(t *testing.T) {
	numbers := "[" + strings.Repeat("0,", 248) + "0]" // 499 bytes, 249 values
	var largest strings.Builder                       // the largest metadata a create accepts
	largest.WriteByte('{')
	for i := range 50 {
		if i > 0 {
			largest.WriteByte(',')
		}
		largest.WriteString(`"k` + strings.Repeat("x", 36) + string(rune('a'+i/10)) + string(rune('0'+i%10)) + `":` + numbers)
	}
	largest.WriteByte('}')
	tests := []struct {
		name     string
		metadata string
		indented bool // shown indented, or as stored
	}{
		{"small metadata is indented", `{"order":"1234","lines":[{"sku":"a","qty":2}]}`, true},
		{"the largest metadata allowed is shown as stored", largest.String(), false},
		{"metadata 249 deep, stored before depth was bounded, is shown as stored",
			`{"k":` + strings.Repeat("[", 249) + strings.Repeat("]", 249) + `}`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, nil)
			pay := h.fake.addPayment(t, "acme", "ada@example.com", 1050, 0)
			if _, err := h.fake.store.Update(context.Background(), "acme", pay.ID, func(p *paymock.Payment) error {
				p.Metadata = json.RawMessage(tc.metadata)
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			b := h.browser()
			b.signIn(acmeKey)
			done := b.click(b.get("/dashboard/payments/"+pay.ID), "", "", "complete", nil)
			p := done
			if done.status == http.StatusSeeOther {
				p = b.follow(done)
			}
			if p.status != http.StatusOK {
				t.Fatalf("payment page: %d %q", p.status, p.text())
			}
			blocks := codeBlocks(p)
			if len(blocks) != 2 {
				t.Fatalf("%d code blocks, want the metadata and the completion's body", len(blocks))
			}
			var want bytes.Buffer
			if err := json.Indent(&want, []byte(tc.metadata), "", "  "); err != nil {
				t.Fatal(err)
			}
			if !tc.indented {
				want.Reset()
				want.WriteString(tc.metadata)
			}
			if blocks[0] != want.String() {
				t.Errorf("metadata shown as %.200q..., want %.200q...", blocks[0], want.String())
			}
			// Whatever the metadata, the page is a few times what it
			// shows (the metadata and the event's body, which carries
			// it again), not its indented form: 10 times as much for
			// the largest, 500 times for the deepest.
			var body bytes.Buffer
			if err := json.Compact(&body, []byte(blocks[1])); err != nil {
				t.Fatalf("event body %.200q: %v", blocks[1], err)
			}
			stored := len(tc.metadata) + body.Len()
			if limit := 3*stored + 16<<10; len(p.body) > limit {
				t.Errorf("page of %d bytes for %d bytes of metadata and event body, want at most %d", len(p.body), stored, limit)
			}
			if !strings.Contains(blocks[1], `"payment.completed"`) {
				t.Errorf("event body %.200q, want the completion's JSON", blocks[1])
			}
		})
	}
}
