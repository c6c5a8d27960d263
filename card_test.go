// Card brands and the Luhn check.

package paymock

import "testing"

func TestCardBrand(t *testing.T) {
	for _, tc := range []struct {
		number, want string
	}{
		{"4242424242424242", "visa"},
		{"4000056655665556", "visa"},
		{"4", "visa"},
		{"5105105105105100", "mastercard"},
		{"5555555555554444", "mastercard"},
		{"2221000000000009", "mastercard"},
		{"2223003122003222", "mastercard"},
		{"2720990000000007", "mastercard"},
		{"5000000000000000", "unknown"}, // 50: below the 51-55 range
		{"5600000000000000", "unknown"}, // 56: above it
		{"2220990000000000", "unknown"}, // just below 2221
		{"2721000000000000", "unknown"}, // just above 2720
		{"378282246310005", "amex"},
		{"371449635398431", "amex"},
		{"3400000000000009", "amex"},
		{"3500000000000000", "unknown"},
		{"6011111111111117", "discover"},
		{"6500000000000002", "discover"},
		{"6440000000000000", "discover"},
		{"6490000000000000", "discover"},
		{"6430000000000000", "unknown"},
		{"6012000000000000", "unknown"},
		{"3056930009020004", "diners"},
		{"3000000000000000", "diners"},
		{"36227206271667", "diners"},
		{"3800000000000000", "diners"},
		{"3900000000000000", "diners"},
		{"3060000000000000", "unknown"},
		{"3530111333300000", "jcb"},
		{"3528000000000000", "jcb"},
		{"3589000000000000", "jcb"},
		{"3527000000000000", "unknown"},
		{"3590000000000000", "unknown"},
		{"6200000000000005", "unionpay"},
		{"6212345678901265", "unionpay"},
		{"1234567890123456", "unknown"},
		{"9999999999999995", "unknown"},
		{"", "unknown"},
		{"5", "unknown"},
		{"222", "unknown"},
	} {
		if got := CardBrand(tc.number); got != tc.want {
			t.Errorf("CardBrand(%q) = %q, want %q", tc.number, got, tc.want)
		}
	}
}

func TestLuhn(t *testing.T) {
	for _, tc := range []struct {
		number string
		want   bool
	}{
		{"4242424242424242", true},
		{"4242424242424241", false},
		{"4242424242424243", false},
		{"378282246310005", true},
		{"5555555555554444", true},
		{"79927398713", true},
		{"79927398710", false},
		{"18", true},
		{"00", true},
		{"19", false},
		{"0", false}, // too short to carry a check digit
		{"8", false},
		{"", false},
		{"4242-4242-4242-4242", false},
		{"4242 4242 4242 4242", false},
		{"424242424242424a", false},
		{"a242424242424242", false},
		{"4242424242424242\n", false},
		{"٤٢", false}, // Arabic-Indic digits are not ASCII digits
	} {
		if got := Luhn(tc.number); got != tc.want {
			t.Errorf("Luhn(%q) = %v, want %v", tc.number, got, tc.want)
		}
	}
}
