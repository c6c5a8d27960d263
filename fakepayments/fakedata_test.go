// Tests that the embedded extract is gofakeit's data, and that drawing
// from it gives what gofakeit itself gives: gofakeit stays the reference.

package fakepayments

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/brianvoe/gofakeit/v7"

	"github.com/paymock/paymock"
	"github.com/paymock/paymock/fakepayments/internal/gofakeitdata"
)

// gofakeitNames is how fakepayments drew its text before the extract: a
// gofakeit Faker on the generator's source, unlocked as the source is
// private to one call.
func gofakeitNames(src rand.Source) names { return gofakeit.NewFaker(src, false) }

func embeddedNames(t testing.TB) func(rand.Source) names {
	t.Helper()
	d, err := parseFakeData(fakeDataText)
	if err != nil {
		t.Fatal(err)
	}
	return func(src rand.Source) names { return &faker{src: src, d: d} }
}

func TestFakeData_IsGofakeitsData(t *testing.T) {
	want, err := gofakeitdata.Extract()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal([]byte(fakeDataText), want) {
		t.Fatal("fakepayments/fakedata.txt is not gofakeit's data as it is now: run go generate ./fakepayments")
	}
}

func TestFaker_DrawsWhatGofakeitDraws(t *testing.T) {
	// Every method, called in a random order, on the same source: each
	// must give gofakeit's string and leave the source where gofakeit
	// leaves it.
	embedded := embeddedNames(t)
	methods := []struct {
		name string
		call func(names) string
	}{
		{"FirstName", names.FirstName},
		{"LastName", names.LastName},
		{"ProductName", names.ProductName},
		{"ProductCategory", names.ProductCategory},
		{"Street", names.Street},
		{"City", names.City},
		{"StateAbr", names.StateAbr},
		{"Zip", names.Zip},
	}
	for seed := range uint64(300) {
		want := gofakeitNames(rand.NewPCG(seed, ^seed))
		got := embedded(rand.NewPCG(seed, ^seed))
		order := rand.New(rand.NewPCG(seed, 7))
		for i := range 200 {
			m := methods[order.IntN(len(methods))]
			if w, g := m.call(want), m.call(got); w != g {
				t.Fatalf("seed %d, draw %d, %s: got %q, gofakeit gives %q", seed, i, m.name, g, w)
			}
		}
	}
}

func TestGenerate_IsWhatGofakeitMade(t *testing.T) {
	// The payments, byte for byte, over many seeds and both kinds of
	// merchant (cards, with their American addresses, only for PCI ones).
	embedded := embeddedNames(t)
	seeds := 50
	if testing.Short() {
		seeds = 20
	}
	for seed := range uint64(seeds) {
		for _, m := range []*paymock.Merchant{merchant("acme", true), merchant("key_0123456789ab", false)} {
			cfg := config(seed*7919, m, 40+int(seed%5)*40)
			want, err := generateWith(cfg, gofakeitNames)
			if err != nil {
				t.Fatal(err)
			}
			got, err := generateWith(cfg, embedded)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(encodeAll(t, got), encodeAll(t, want)) {
				t.Fatalf("seed %d, merchant %s: the payments differ from those gofakeit makes", cfg.Seed, m.ID)
			}
		}
	}
}

func TestParseFakeData_RejectsBrokenText(t *testing.T) {
	good, err := gofakeitdata.Extract()
	if err != nil {
		t.Fatal(err)
	}
	text := string(good)
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", "no header line"},
		{"no header", strings.TrimPrefix(text, gofakeitdata.Header), "no header line"},
		{"a list cut short", text[:strings.Index(text, "\nAaron\n")+len("\nAaron\n")], "person.first ends after 2 of its"},
		{"a list missing", strings.Replace(text, "@ address.zip 1\n#####\n", "", 1), "no list address.zip"},
		{"a list twice", text + "@ address.zip 1\n#####\n", "is not the start of a list"},
		{"an unknown list", text + "@ person.middle 1\nJo\n", "is not the start of a list"},
		{"a bad length", strings.Replace(text, "@ address.zip 1\n", "@ address.zip x\n", 1), "is not the start of a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseFakeData(tc.text)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error saying %q", err, tc.want)
			}
		})
	}
	if _, err := parseFakeData(text); err != nil {
		t.Fatalf("the extract itself: %v", err)
	}
}

func BenchmarkParseFakeData(b *testing.B) {
	for b.Loop() {
		if _, err := parseFakeData(fakeDataText); err != nil {
			b.Fatal(err)
		}
	}
}
