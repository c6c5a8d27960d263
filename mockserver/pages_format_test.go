// Unit tests of the page formatting helpers.

package mockserver

import (
	"testing"
	"time"

	"github.com/paymock/paymock"
)

func TestFormatMoney(t *testing.T) {
	tests := []struct {
		amount   paymock.Amount
		currency paymock.Currency
		want     string
	}{
		{123450, paymock.USD, "$1,234.50"},
		{123450, paymock.EUR, "€1,234.50"},
		{123450, paymock.GBP, "£1,234.50"},
		{123450, paymock.CAD, "CA$1,234.50"},
		{1, paymock.USD, "$0.01"},
		{10, paymock.USD, "$0.10"},
		{1050, paymock.USD, "$10.50"},
		{99999, paymock.USD, "$999.99"},
		{100000, paymock.USD, "$1,000.00"},
		{12345678901, paymock.USD, "$123,456,789.01"},
		{paymock.MaxAmount, paymock.EUR, "€999,999,999.99"},
		{-123450, paymock.USD, "-$1,234.50"},
		{500, "JPY", "JPY 5.00"},
	}
	for _, tc := range tests {
		if got := formatMoney(tc.amount, tc.currency); got != tc.want {
			t.Errorf("formatMoney(%d, %s) = %q, want %q", tc.amount, tc.currency, got, tc.want)
		}
	}
}

func TestFormatTimeLeft(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "less than a minute"},
		{59 * time.Second, "less than a minute"},
		{time.Minute, "1 min"},
		{59*time.Minute + 59*time.Second, "59 min"},
		{time.Hour, "60 min"},
		{2*time.Hour - time.Second, "119 min"},
		{2 * time.Hour, "2 h"},
		{5*time.Hour + 30*time.Minute + 59*time.Second, "5 h 30 min"},
		{47*time.Hour + 59*time.Minute, "47 h 59 min"},
		{48 * time.Hour, "2 days"},
		{30 * 24 * time.Hour, "30 days"},
		{3*24*time.Hour + 2*time.Hour + 5*time.Minute, "3 days 2 h"},
	}
	for _, tc := range tests {
		if got := formatTimeLeft(tc.d); got != tc.want {
			t.Errorf("formatTimeLeft(%s) = %q, want %q", tc.d, got, tc.want)
		}
	}
}
