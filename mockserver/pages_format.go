// What the hosted pages show a person: amounts with their currency sign,
// the time left before a payment expires, card brands.

package mockserver

import (
	"strconv"
	"strings"
	"time"

	"github.com/paymock/paymock"
)

// currencySigns are the signs amounts are shown with, as an English-speaking
// customer expects them: CA$ tells Canadian dollars from US ones.
var currencySigns = map[paymock.Currency]string{
	paymock.USD: "$",
	paymock.EUR: "€",
	paymock.GBP: "£",
	paymock.CAD: "CA$",
}

// formatMoney writes an amount in minor units the way a checkout shows it:
// sign, thousands separated by commas, two decimals ("$1,234.50").
func formatMoney(a paymock.Amount, c paymock.Currency) string {
	var b strings.Builder
	if a < 0 {
		b.WriteByte('-')
		a = -a
	}
	sign, ok := currencySigns[c]
	if !ok {
		sign = string(c) + " "
	}
	b.WriteString(sign)
	units := strconv.FormatInt(int64(a/100), 10)
	for i, d := range units {
		if i > 0 && (len(units)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(d)
	}
	cents := int64(a % 100)
	b.WriteByte('.')
	b.WriteByte(byte('0' + cents/10))
	b.WriteByte(byte('0' + cents%10))
	return b.String()
}

// formatTimeLeft says how long is left, rounded down, in the largest units
// that still say something: "less than a minute", "59 min", "5 h 30 min",
// "3 days 2 h".
func formatTimeLeft(d time.Duration) string {
	switch {
	case d < time.Minute:
		return "less than a minute"
	case d < 2*time.Hour:
		return strconv.Itoa(int(d/time.Minute)) + " min"
	case d < 48*time.Hour:
		h, m := int(d/time.Hour), int(d%time.Hour/time.Minute)
		if m == 0 {
			return strconv.Itoa(h) + " h"
		}
		return strconv.Itoa(h) + " h " + strconv.Itoa(m) + " min"
	}
	days, h := int(d/(24*time.Hour)), int(d%(24*time.Hour)/time.Hour)
	if h == 0 {
		return strconv.Itoa(days) + " days"
	}
	return strconv.Itoa(days) + " days " + strconv.Itoa(h) + " h"
}

// brandNames are the card networks as customers know them.
var brandNames = map[string]string{
	"visa":       "Visa",
	"mastercard": "Mastercard",
	"amex":       "American Express",
	"discover":   "Discover",
	"jcb":        "JCB",
	"diners":     "Diners Club",
	"unionpay":   "UnionPay",
}

// brandName names a card brand for the page; an unknown one is "Card".
func brandName(brand string) string {
	if n, ok := brandNames[brand]; ok {
		return n
	}
	if brand == "" || brand == "unknown" {
		return "Card"
	}
	return strings.ToUpper(brand[:1]) + brand[1:]
}

// pageTime writes an instant for a person: "14 Mar 2026, 16:09 UTC".
func pageTime(t time.Time) string { return t.UTC().Format("2 Jan 2006, 15:04 MST") }
