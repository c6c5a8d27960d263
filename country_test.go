// Tests of the billing country check: the codes ISO 3166-1 assigns, and
// no other.

package paymock

import (
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestAssignedCountries_Are249SortedDistinctCodes(t *testing.T) {
	codes := strings.Split(assignedCountries, " ")
	if len(codes) != 249 {
		t.Errorf("%d codes, want the 249 ISO 3166-1 assigns", len(codes))
	}
	for i, c := range codes {
		if !countryCode(c) {
			t.Errorf("%q is not two capitals", c)
		}
		if i > 0 && codes[i-1] >= c {
			t.Errorf("%s after %s: the list must be sorted, each code once, for the binary search", c, codes[i-1])
		}
	}
}

func TestAssignedCountry_TakesAssignedCodesOnly(t *testing.T) {
	tests := []struct {
		code string
		want bool
	}{
		{"GB", true}, {"US", true}, {"DE", true}, {"IE", true},
		{"AD", true}, {"ZW", true}, // the first and the last
		{"AQ", true}, {"BV", true}, {"SS", true}, {"AX", true},
		{"ZZ", false},                // unknown region in CLDR; never assigned
		{"UK", false},                // exceptionally reserved: the United Kingdom is GB
		{"EU", false},                // exceptionally reserved: no country
		{"XK", false},                // user-assigned (Kosovo)
		{"QO", false}, {"AA", false}, // user-assigned ranges
		{"AN", false}, {"CS", false}, {"YU", false}, // withdrawn
		{"EA", false}, {"IC", false}, {"TA", false}, // exceptionally reserved
		{"gb", false}, {"G", false}, {"GBR", false}, {"", false}, {"A", false}, {"ZZZ", false},
	}
	for _, tc := range tests {
		if got := assignedCountry(tc.code); got != tc.want {
			t.Errorf("assignedCountry(%q) = %v, want %v", tc.code, got, tc.want)
		}
	}
}

func TestCountryViolation_SaysWhatToSendInstead(t *testing.T) {
	const p = "payment_method.billing_details.address.country"
	if got := countryViolation(p, "UK"); got != p+" must be an assigned ISO 3166-1 alpha-2 code: UK is not one (the United Kingdom's is GB)" {
		t.Errorf("UK: %q", got)
	}
	if got := countryViolation(p, "ZZ"); got != p+" must be an assigned ISO 3166-1 alpha-2 code: ZZ is not one" {
		t.Errorf("ZZ: %q", got)
	}
}

// TestAssignedCountries_AreDebiansISOCodes compares the list with the one
// Debian's iso-codes package keeps from ISO's own, where it is installed.
func TestAssignedCountries_AreDebiansISOCodes(t *testing.T) {
	data, err := os.ReadFile("/usr/share/iso-codes/json/iso_3166-1.json")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no /usr/share/iso-codes/json/iso_3166-1.json (apt-get install iso-codes) to compare with")
	}
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Countries []struct {
			Alpha2 string `json:"alpha_2"`
		} `json:"3166-1"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	var theirs []string
	for _, c := range doc.Countries {
		theirs = append(theirs, c.Alpha2)
	}
	slices.Sort(theirs)
	if got := strings.Join(theirs, " "); got != assignedCountries {
		t.Errorf("iso-codes lists\n%s\nwant the same as assignedCountries\n%s", got, assignedCountries)
	}
}
