// The deny list as the flag gives it, and what it refuses.

package egress

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestParseDeny_ReadsPrefixesAndAddresses(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr string
	}{
		{"169.254.0.0/16,fe80::/10,0.0.0.0/8,::", "169.254.0.0/16 fe80::/10 0.0.0.0/8 ::/128", ""},
		{" 10.1.2.3/8 , 127.0.0.1", "10.0.0.0/8 127.0.0.1/32", ""},
		{"", "", ""},
		{"10.0.0.0/33", "", "neither a CIDR prefix"},
		{"localhost", "", "neither a CIDR prefix"},
	}
	for _, tc := range tests {
		got, err := ParseDeny(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("ParseDeny(%q) error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		var s []string
		for _, p := range got {
			s = append(s, p.String())
		}
		if err != nil || strings.Join(s, " ") != tc.want {
			t.Errorf("ParseDeny(%q) = %v, %v; want %s", tc.in, s, err, tc.want)
		}
	}
}

func TestCheckURL_RefusesWhatTheDefaultDenies(t *testing.T) {
	p := New(Config{Resolver: nil})
	for u, denied := range map[string]bool{
		"http://169.254.169.254/":          true,
		"http://[fe80::1%25eth0]/":         true,
		"http://0.0.0.0/":                  true,
		"http://[::]/":                     true,
		"http://[::ffff:169.254.1.1]:80/":  true,
		"http://127.0.0.1:8080/":           false,
		"http://10.0.0.1/":                 false,
		"http://[::1]/":                    false,
		"https://hooks.invalid.example./x": false, // does not resolve: checked at connect
	} {
		err := p.CheckURL(context.Background(), u)
		var de *DeniedError
		if got := errors.As(err, &de); got != denied {
			t.Errorf("CheckURL(%s) = %v, want denied %v", u, err, denied)
		}
	}
	if err := New(Config{Deny: []netip.Prefix{}}).CheckURL(context.Background(), "http://169.254.169.254/"); err != nil {
		t.Errorf("an empty deny list refuses %v", err)
	}
}

func TestCheckLiteral_JudgesAddressesAndLeavesNamesToTheConnection(t *testing.T) {
	p := New(Config{Resolver: refusingResolver{t}})
	for u, denied := range map[string]bool{
		"http://0.0.0.0:19000/hooks":       true,
		"http://169.254.169.254/latest":    true,
		"http://[::ffff:169.254.1.1]:80/":  true,
		"http://[::]/":                     true,
		"http://127.0.0.1:9000/hooks":      false,
		"http://localhost:9000/hooks":      false, // a name: checked at each connection
		"http://metadata.google.internal/": false,
	} {
		err := p.CheckLiteral(u)
		var de *DeniedError
		if got := errors.As(err, &de); got != denied {
			t.Errorf("CheckLiteral(%s) = %v, want denied %v", u, err, denied)
		}
	}
	loopback := New(Config{Deny: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, Resolver: refusingResolver{t}})
	if err := loopback.CheckLiteral("http://127.0.0.1:9000/"); err == nil || !strings.Contains(err.Error(), "127.0.0.0/8") {
		t.Errorf("a deny list of 127.0.0.0/8 lets 127.0.0.1 pass: %v", err)
	}
}

// refusingResolver fails the test on any lookup.
type refusingResolver struct{ t *testing.T }

func (r refusingResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.t.Errorf("looked up %s", host)
	return nil, errors.New("no lookups here")
}
