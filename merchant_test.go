package paymock

import (
	"errors"
	"strings"
	"sync"
	"testing"
)

func TestWellFormedKey(t *testing.T) {
	for _, tc := range []struct {
		key  string
		want bool
	}{
		{"sk_test_acme", true},
		{"a", true},
		{"abc==", true},
		{"abc=", true},
		{"A-Z.a_z~0+9/", true},
		{"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.abc-_", true},
		{strings.Repeat("k", 512), true},
		{strings.Repeat("k", 513), false},
		{strings.Repeat("k", 510) + "==", true},
		{strings.Repeat("k", 511) + "==", false},
		{"", false},
		{"=", false},
		{"==", false},
		{"a=b", false},
		{"=abc", false},
		{"a b", false},
		{" abc", false},
		{"abc ", false},
		{"abc\t", false},
		{"abc\n", false},
		{"clé", false},
		{"ключ", false},
		{"a,b", false},
		{"a\"b", false},
		{"a:b", false},
		{"a\x00b", false},
	} {
		if got := WellFormedKey(tc.key); got != tc.want {
			t.Errorf("WellFormedKey(%.40q) = %v, want %v", tc.key, got, tc.want)
		}
	}
}

func TestMerchants_OpenMode(t *testing.T) {
	ms, err := NewMerchants(nil)
	if err != nil {
		t.Fatal(err)
	}
	if !ms.Open() {
		t.Fatal("empty merchant list is not open mode")
	}
	if got := ms.Configured(); len(got) != 0 {
		t.Errorf("Configured() = %v in open mode, want none", got)
	}
	const keyA, keyB = "sk_test_alpha_0123456789", "sk_test_bravo_0123456789"
	a1, err := ms.Authenticate(keyA)
	if err != nil {
		t.Fatalf("Authenticate(keyA): %v", err)
	}
	a2, err := ms.Authenticate(keyA)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ms.Authenticate(keyB)
	if err != nil {
		t.Fatal(err)
	}
	if a1 != a2 {
		t.Error("the same key gave two different merchants")
	}
	if a1 == b || a1.ID == b.ID {
		t.Errorf("different keys share a merchant: %q and %q", a1.ID, b.ID)
	}
	for _, m := range []*Merchant{a1, b} {
		if m.ID == "" {
			t.Error("open merchant has no ID")
		}
		if !m.PCIApproved {
			t.Errorf("open merchant %s is not PCI-approved", m.ID)
		}
		if a, ok := m.Account(SandboxActiveAccount); !ok || !a.Active {
			t.Errorf("open merchant %s: %s = %+v, %v; want active", m.ID, SandboxActiveAccount, a, ok)
		}
		if a, ok := m.Account(SandboxInactiveAccount); !ok || a.Active {
			t.Errorf("open merchant %s: %s = %+v, %v; want inactive", m.ID, SandboxInactiveAccount, a, ok)
		}
		if _, ok := m.Account("acct_other"); ok {
			t.Errorf("open merchant %s has an unexpected account", m.ID)
		}
		if strings.Contains(m.ID, keyA) || strings.Contains(m.ID, keyB) || strings.Contains(m.Name, keyA) || strings.Contains(m.Name, keyB) {
			t.Errorf("open merchant ID/name %q/%q contains the key", m.ID, m.Name)
		}
		if len(m.APIKeys) != 0 {
			t.Errorf("open merchant keeps its keys: %v", m.APIKeys)
		}
	}
	if got := SandboxActiveAccount + "," + SandboxInactiveAccount; got != "acct_sandbox_active,acct_sandbox_inactive" {
		t.Errorf("sandbox accounts = %s", got)
	}
}

func TestMerchants_OpenModeRejectsMalformedKeys(t *testing.T) {
	ms, err := NewMerchants([]Merchant{})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", " ", "a b", "==", "ключ", strings.Repeat("k", 513)} {
		if m, err := ms.Authenticate(key); !errors.Is(err, ErrMalformedKey) || m != nil {
			t.Errorf("Authenticate(%.20q) = %v, %v; want nil, ErrMalformedKey", key, m, err)
		}
	}
}

func TestMerchants_OpenModeConcurrentFirstUse(t *testing.T) {
	ms, err := NewMerchants(nil)
	if err != nil {
		t.Fatal(err)
	}
	const workers = 16
	got := make([]*Merchant, workers)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for j := range 50 {
				if _, err := ms.Authenticate("sk_other_" + string(rune('a'+j%26))); err != nil {
					t.Error(err)
				}
			}
			m, err := ms.Authenticate("sk_shared_key")
			if err != nil {
				t.Error(err)
			}
			got[i] = m
		})
	}
	wg.Wait()
	for i := range got {
		if got[i] != got[0] {
			t.Fatalf("concurrent first use of one key made more than one merchant")
		}
	}
}

func configured(t *testing.T) *Merchants {
	t.Helper()
	ms, err := NewMerchants([]Merchant{
		{Name: "acme", APIKeys: []string{"sk_test_acme", "sk_test_acme_2"}, PCIApproved: false,
			Accounts: []Account{{ID: "acct_acme_main", Active: true}, {ID: "acct_acme_old", Active: false}}},
		{Name: "globex", APIKeys: []string{"sk_test_globex=="}, PCIApproved: true},
	})
	if err != nil {
		t.Fatalf("NewMerchants: %v", err)
	}
	return ms
}

func TestMerchants_ConfiguredMode(t *testing.T) {
	ms := configured(t)
	if ms.Open() {
		t.Fatal("configured merchants run in open mode")
	}
	if got := ms.Configured(); len(got) != 2 || got[0].Name != "acme" || got[1].Name != "globex" {
		t.Fatalf("Configured() = %v", got)
	}
	for _, tc := range []struct {
		key     string
		want    string // merchant name; "" for an error
		wantErr error
	}{
		{"sk_test_acme", "acme", nil},
		{"sk_test_acme_2", "acme", nil},
		{"sk_test_globex==", "globex", nil},
		{"sk_test_globex", "", ErrUnknownKey},
		{"sk_test_acm", "", ErrUnknownKey},
		{"sk_test_acme_", "", ErrUnknownKey},
		{"SK_TEST_ACME", "", ErrUnknownKey},
		{"sk_test_unknown", "", ErrUnknownKey},
		{"", "", ErrMalformedKey},
		{" ", "", ErrMalformedKey},
		{"a b", "", ErrMalformedKey},
		{"sk_test_acme ", "", ErrMalformedKey},
		{"sk_tést", "", ErrMalformedKey},
		{strings.Repeat("k", 513), "", ErrMalformedKey},
	} {
		m, err := ms.Authenticate(tc.key)
		if !errors.Is(err, tc.wantErr) {
			t.Errorf("Authenticate(%.20q) error = %v, want %v", tc.key, err, tc.wantErr)
			continue
		}
		if tc.want == "" {
			if m != nil {
				t.Errorf("Authenticate(%.20q) = %v with an error", tc.key, m.Name)
			}
			continue
		}
		if m == nil || m.Name != tc.want {
			t.Errorf("Authenticate(%q) = %v, want merchant %s", tc.key, m, tc.want)
		}
	}

	// Both keys of one merchant give the same *Merchant, with its settings.
	a1, _ := ms.Authenticate("sk_test_acme")
	a2, _ := ms.Authenticate("sk_test_acme_2")
	g, _ := ms.Authenticate("sk_test_globex==")
	if a1 != a2 {
		t.Error("two keys of acme gave different *Merchant values")
	}
	if a1.ID == g.ID || a1.ID == "" {
		t.Errorf("merchant ids %q and %q", a1.ID, g.ID)
	}
	if a1.PCIApproved || !g.PCIApproved {
		t.Errorf("PCI approval lost: acme %v, globex %v", a1.PCIApproved, g.PCIApproved)
	}
	if a, ok := a1.Account("acct_acme_old"); !ok || a.Active {
		t.Errorf("acme account acct_acme_old = %+v, %v", a, ok)
	}
	for _, m := range []*Merchant{a1, g} {
		for _, k := range m.APIKeys {
			if strings.Contains(m.ID, k) {
				t.Errorf("merchant ID %q contains its key", m.ID)
			}
		}
	}
}

func TestNewMerchants_CopiesItsInput(t *testing.T) {
	list := []Merchant{{Name: "acme", APIKeys: []string{"sk_test_acme"}}}
	ms, err := NewMerchants(list)
	if err != nil {
		t.Fatal(err)
	}
	list[0].Name = "changed"
	list[0].APIKeys[0] = "sk_changed"
	m, err := ms.Authenticate("sk_test_acme")
	if err != nil {
		t.Fatalf("key stopped working after the caller changed its slice: %v", err)
	}
	if m.Name != "acme" || m.APIKeys[0] != "sk_test_acme" {
		t.Errorf("merchant follows the caller's slice: %+v", m)
	}
	if _, err := ms.Authenticate("sk_changed"); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("a key the caller wrote later authenticates: %v", err)
	}
}

func TestNewMerchants_RejectsBadConfigurations(t *testing.T) {
	for _, tc := range []struct {
		name    string
		list    []Merchant
		wantErr string // substring of the error; "" means accepted
	}{
		{"one merchant", []Merchant{{Name: "a", APIKeys: []string{"k1"}}}, ""},
		{"two merchants", []Merchant{{Name: "a", APIKeys: []string{"k1"}}, {Name: "b", APIKeys: []string{"k2"}}}, ""},
		{"duplicate names", []Merchant{{Name: "a", APIKeys: []string{"k1"}}, {Name: "a", APIKeys: []string{"k2"}}}, "name used twice"},
		{"duplicate keys across merchants", []Merchant{{Name: "a", APIKeys: []string{"k1"}}, {Name: "b", APIKeys: []string{"k1"}}}, "used twice"},
		{"duplicate keys in one merchant", []Merchant{{Name: "a", APIKeys: []string{"k1", "k1"}}}, "used twice"},
		{"missing name", []Merchant{{APIKeys: []string{"k1"}}}, "name is required"},
		{"no keys", []Merchant{{Name: "a"}}, "at least one api key"},
		{"empty key list", []Merchant{{Name: "a", APIKeys: []string{}}}, "at least one api key"},
		{"empty key", []Merchant{{Name: "a", APIKeys: []string{""}}}, "not a valid bearer token"},
		{"key with space", []Merchant{{Name: "a", APIKeys: []string{"k 1"}}}, "not a valid bearer token"},
		{"non-ASCII key", []Merchant{{Name: "a", APIKeys: []string{"clé"}}}, "not a valid bearer token"},
		{"over-long key", []Merchant{{Name: "a", APIKeys: []string{strings.Repeat("k", 513)}}}, "not a valid bearer token"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := NewMerchants(tc.list)
			if tc.wantErr == "" {
				if err != nil || ms == nil {
					t.Fatalf("NewMerchants = %v, %v; want accepted", ms, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("NewMerchants error = %v, want one mentioning %q", err, tc.wantErr)
			}
			if ms != nil {
				t.Errorf("NewMerchants returned merchants with an error")
			}
			for _, m := range tc.list {
				for _, k := range m.APIKeys {
					if len(k) > 2 && strings.Contains(err.Error(), k) {
						t.Errorf("error %q contains a key", err)
					}
				}
			}
		})
	}
}

func TestMerchant_Account(t *testing.T) {
	m := pciMerchant()
	for _, tc := range []struct {
		id         string
		ok, active bool
	}{
		{"acct_acme_main", true, true},
		{"acct_acme_old", true, false},
		{"acct_nope", false, false},
		{"", false, false},
		{"ACCT_ACME_MAIN", false, false},
	} {
		a, ok := m.Account(tc.id)
		if ok != tc.ok || a.Active != tc.active || ok && a.ID != tc.id {
			t.Errorf("Account(%q) = %+v, %v; want ok=%v active=%v", tc.id, a, ok, tc.ok, tc.active)
		}
	}
}

func TestMerchants_ByIDFindsConfiguredAndOpenMerchants(t *testing.T) {
	conf, err := NewMerchants([]Merchant{{Name: "acme", APIKeys: []string{"sk_acme"}}})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := conf.ByID("acme"); !ok || m.Name != "acme" {
		t.Errorf("configured: %v %v", m, ok)
	}
	if _, ok := conf.ByID("nobody"); ok {
		t.Error("found an unknown merchant")
	}
	open, _ := NewMerchants(nil)
	m, err := open.Authenticate("sk_open")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := open.ByID(m.ID); !ok || got != m {
		t.Errorf("open: %v %v", got, ok)
	}
}
