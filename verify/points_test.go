// Tests of how the open points read an answer.

package verify

import "testing"

func TestIDForm_WordsTheFormNeverTheValue(t *testing.T) {
	tests := []struct {
		id, want string
	}{
		{"pay_eX4wfP3t53uWYeLytOXuTdQK", "pay_ and 24 base62 characters"},
		{"cus_IwedGhNUwYReemdqbSIibeTf", "cus_ and 24 base62 characters"},
		{"pay_abc", "pay_ and 3 base62 characters"},
		{"3f2c8a9e-5b1d-4c7a-9e0f-2a6b8c4d1e7f", "a UUID"},
		{"3F2C8A9E-5B1D-4C7A-9E0F-2A6B8C4D1E7F", "a UUID"},
		{"123456789012", "12 digits"},
		{"3f2c8a9e5b1d4c7a9e0f2a6b8c4d1e7f", "32 characters of another form"},
		{"pay-123", "7 characters of another form"},
		{"_abc", "4 characters of another form"},
		{"pay_", "4 characters of another form"},
		{"pay_é", "5 characters of another form"},
	}
	for _, tc := range tests {
		if got := idForm(tc.id); got != tc.want {
			t.Errorf("idForm(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}
