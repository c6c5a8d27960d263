// Country codes: the spec's billing country is a "two-letter ISO 3166-1
// country code", and only the codes ISO has assigned are one.

package paymock

import (
	"sort"
	"strings"
)

// assignedCountries are the 249 officially assigned ISO 3166-1 alpha-2
// codes, sorted, three bytes apart. It is data, not golang.org/x/text's
// region table: that one also takes codes ISO reserves or never assigned
// (UK, XK, EA, AN, SU...) as countries. TestAssignedCountries_* check the
// list, and compare it with Debian's iso-codes where that is installed.
const assignedCountries = "" +
	"AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE " +
	"BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ CA CC CD " +
	"CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM " +
	"DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF " +
	"GG GH GI GL GM GN GP GQ GR GS GT GU GW GY HK HM HN HR HT HU " +
	"ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN " +
	"KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME " +
	"MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ NA " +
	"NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM " +
	"PN PR PS PT PW PY QA RE RO RS RU RW SA SB SC SD SE SG SH SI " +
	"SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG TH TJ TK " +
	"TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI " +
	"VN VU WF WS YE YT ZA ZM ZW"

// assignedCountry reports whether s is an officially assigned ISO 3166-1
// alpha-2 code, in upper case.
func assignedCountry(s string) bool {
	n := (len(assignedCountries) + 1) / 3
	i := sort.Search(n, func(i int) bool { return assignedCountries[3*i:3*i+2] >= s })
	return len(s) == 2 && i < n && assignedCountries[3*i:3*i+2] == s
}

// countryHints say, of a two-letter code that is often taken for an
// assigned one, what to send instead.
var countryHints = map[string]string{
	"UK": "the United Kingdom's is GB",
	"EL": "Greece's is GR",
	"EU": "the European Union has none",
	"XK": "XK, used for Kosovo, is user-assigned, not assigned by ISO",
}

// countryViolation is why s, two upper-case letters, is no country code,
// for the message of param.
func countryViolation(param, s string) string {
	msg := param + " must be an assigned ISO 3166-1 alpha-2 code: " + s + " is not one"
	if hint, ok := countryHints[s]; ok {
		msg += " (" + hint + ")"
	}
	return msg
}

// countryCode reports whether s has the form of a country code: two
// upper-case letters.
func countryCode(s string) bool {
	return len(s) == 2 && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}
