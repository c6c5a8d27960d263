// Names, products and addresses drawn as gofakeit v7 draws them, from the
// extract of its data in fakedata.txt, so that the binary does not link
// gofakeit, whose package initialisation builds all of its tables.

package fakepayments

import (
	_ "embed"
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"strings"
	"unicode"
)

//go:generate go run ./internal/gofakeitdata/gen -out fakedata.txt

// fakeDataText is gofakeitdata.Extract's text of the lists below, written
// at build time; TestFakeData_IsGofakeitsData fails when gofakeit's data
// says otherwise.
//
//go:embed fakedata.txt
var fakeDataText string

// fakeData holds the lists, as gofakeit's data.Data holds them.
type fakeData struct {
	firstNames, lastNames                                                      []string
	productNames, productAdjectives, productSuffixes                           []string
	productMaterials, productFeatures, productCategories                       []string
	streetNumbers, streetPrefixes, streetNames, streetSuffixes, cities, states []string
	zips                                                                       []string
}

// parseFakeData reads the text gofakeitdata.Extract writes: a header line,
// then each list as "@ name length" and its values, one a line. The values
// are substrings of text: nothing is copied.
func parseFakeData(text string) (*fakeData, error) {
	d := &fakeData{}
	lists := map[string]*[]string{
		"person.first":          &d.firstNames,
		"person.last":           &d.lastNames,
		"product.name":          &d.productNames,
		"product.adjective":     &d.productAdjectives,
		"product.suffix":        &d.productSuffixes,
		"product.material":      &d.productMaterials,
		"product.feature":       &d.productFeatures,
		"product.category":      &d.productCategories,
		"address.number":        &d.streetNumbers,
		"address.street_prefix": &d.streetPrefixes,
		"address.street_name":   &d.streetNames,
		"address.street_suffix": &d.streetSuffixes,
		"address.city":          &d.cities,
		"address.state_abr":     &d.states,
		"address.zip":           &d.zips,
	}
	_, rest, ok := strings.Cut(text, "\n")
	if !ok || !strings.HasPrefix(text, "#") {
		return nil, fmt.Errorf("fake data: no header line")
	}
	for rest != "" {
		var line string
		line, rest, _ = strings.Cut(rest, "\n")
		name, length, ok := strings.Cut(strings.TrimPrefix(line, "@ "), " ")
		n, err := strconv.Atoi(length)
		list := lists[name]
		if !ok || !strings.HasPrefix(line, "@ ") || err != nil || n <= 0 || list == nil || *list != nil {
			return nil, fmt.Errorf("fake data: %q is not the start of a list", line)
		}
		values := make([]string, n)
		for i := range values {
			if values[i], rest, ok = strings.Cut(rest, "\n"); !ok {
				return nil, fmt.Errorf("fake data: list %s ends after %d of its %d values", name, i, n)
			}
		}
		*list = values
	}
	for name, list := range lists {
		if *list == nil {
			return nil, fmt.Errorf("fake data: no list %s", name)
		}
	}
	return d, nil
}

// faker draws from the lists exactly as a gofakeit.Faker on the same
// source does (gofakeit v7's helpers.go, number.go, weighted.go, person.go,
// product.go, address.go): the same calls on the source, in the same
// order, give the same strings, so a seed gives the payments it gave when
// fakepayments used gofakeit itself (TestGenerate_IsWhatGofakeitMade).
type faker struct {
	src rand.Source
	d   *fakeData
}

func (f *faker) FirstName() string       { return f.value(f.d.firstNames) }
func (f *faker) LastName() string        { return f.value(f.d.lastNames) }
func (f *faker) ProductCategory() string { return f.value(f.d.productCategories) }
func (f *faker) City() string            { return f.value(f.d.cities) }
func (f *faker) StateAbr() string        { return f.value(f.d.states) }
func (f *faker) Zip() string             { return f.numbers(f.value(f.d.zips)) }

// Street is gofakeit's street: a number, sometimes a direction, a name and
// a suffix.
func (f *faker) Street() string {
	if f.intN(2)+1 == 1 {
		return f.streetNumber() + " " + f.value(f.d.streetPrefixes) + " " + f.value(f.d.streetNames) + f.value(f.d.streetSuffixes)
	}
	return f.streetNumber() + " " + f.value(f.d.streetNames) + f.value(f.d.streetSuffixes)
}

func (f *faker) streetNumber() string {
	return strings.TrimLeft(f.numbers(f.value(f.d.streetNumbers)), "0")
}

// ProductName is gofakeit's productName: two words mostly, three
// sometimes, in one of five patterns each. Go evaluates the operands of a
// concatenation left to right, as gofakeit's Sprintf arguments are.
func (f *faker) ProductName() string {
	name := f.value(f.d.productNames)
	adj := func() string { return f.value(f.d.productAdjectives) }
	suf := func() string { return f.value(f.d.productSuffixes) }
	mat := func() string { return f.value(f.d.productMaterials) }
	feat := func() string { return f.value(f.d.productFeatures) }
	compoundAdj := func() string {
		if f.intN(5)+1 == 1 {
			return adj() + "-" + adj()
		}
		return adj()
	}
	switch f.weighted([]float32{70, 30}) {
	case 0:
		switch f.intN(5) {
		case 0, 1:
			return title(compoundAdj() + " " + name)
		case 2:
			return title(name + " " + suf())
		case 3:
			return title(mat() + " " + name)
		default:
			return title(feat() + " " + name)
		}
	case 1:
		switch f.intN(5) {
		case 0, 1:
			return title(compoundAdj() + " " + name + " " + suf())
		case 2:
			return title(name + " " + feat() + " " + suf())
		case 3:
			return title(compoundAdj() + " " + feat() + " " + name)
		default:
			return title(name + " " + mat() + " " + suf())
		}
	}
	return title(compoundAdj() + " " + name)
}

// value is gofakeit's getRandValue.
func (f *faker) value(list []string) string { return list[f.intN(len(list))] }

// numbers is gofakeit's replaceWithNumbers: each # a digit, and never a
// leading 0.
func (f *faker) numbers(s string) string {
	if s == "" {
		return s
	}
	b := []byte(s)
	for i := range b {
		if b[i] == '#' {
			b[i] = byte(f.intN(10)) + '0'
		}
	}
	if b[0] == '0' {
		b[0] = byte(f.intN(8)+1) + '0'
	}
	return string(b)
}

// intN is gofakeit's IntN (its uint64NFunc), which on 64-bit platforms
// draws as math/rand/v2's does, and on 32-bit ones differently.
func (f *faker) intN(n int) int {
	if n <= 0 {
		return 0
	}
	u := uint64(n)
	if bits.UintSize == 32 && uint64(uint32(u)) == u {
		return int(f.uint32N(uint32(u)))
	}
	if u&(u-1) == 0 {
		return int(f.src.Uint64() & (u - 1))
	}
	hi, lo := bits.Mul64(f.src.Uint64(), u)
	if lo < u {
		thresh := -u % u
		for lo < thresh {
			hi, lo = bits.Mul64(f.src.Uint64(), u)
		}
	}
	return int(hi)
}

func (f *faker) uint32N(n uint32) uint32 {
	if n&(n-1) == 0 {
		return uint32(f.src.Uint64()) & (n - 1)
	}
	x := f.src.Uint64()
	lo1a, lo0 := bits.Mul32(uint32(x), n)
	hi, lo1b := bits.Mul32(uint32(x>>32), n)
	lo1, c := bits.Add32(lo1a, lo1b, 0)
	hi += c
	if lo1 == 0 && lo0 < n {
		n64 := uint64(n)
		thresh := uint32(-n64 % n64)
		for lo1 == 0 && lo0 < thresh {
			x := f.src.Uint64()
			lo1a, lo0 = bits.Mul32(uint32(x), n)
			hi, lo1b = bits.Mul32(uint32(x>>32), n)
			lo1, c = bits.Add32(lo1a, lo1b, 0)
			hi += c
		}
	}
	return hi
}

// weighted is gofakeit's weighted: the index of the option drawn, each
// as likely as its weight, found in the cumulative weights by bisection.
func (f *faker) weighted(weights []float32) int {
	cdf := make([]float32, len(weights))
	var sum float32
	for i, w := range weights {
		if i > 0 {
			cdf[i] = cdf[i-1] + w
		} else {
			cdf[i] = w
		}
		sum += w
	}
	// gofakeit's Float32: 24 random bits of the top half of a draw.
	r := float32(uint32(f.src.Uint64()>>32)<<8>>8) / (1 << 24) * sum
	for l, h := 0, len(weights)-1; l <= h; {
		m := l + (h-l)/2
		if r <= cdf[m] {
			if m == 0 || r > cdf[m-1] {
				return m
			}
			h = m - 1
		} else {
			l = m + 1
		}
	}
	// No option, as gofakeit's error; r < sum, so it is not reached.
	return -1
}

// title is gofakeit's title: the first letter of every word in title case.
func title(s string) string {
	isSeparator := func(r rune) bool {
		if r <= 0x7F {
			switch {
			case '0' <= r && r <= '9', 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', r == '_':
				return false
			}
			return true
		}
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return false
		}
		return unicode.IsSpace(r)
	}
	prev := ' '
	return strings.Map(func(r rune) rune {
		if isSeparator(prev) {
			prev = r
			return unicode.ToTitle(r)
		}
		prev = r
		return r
	}, s)
}
