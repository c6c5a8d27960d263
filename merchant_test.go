// Tests of merchants: validation, authentication in both modes, the
// open-mode cap, forgetting idle merchants and what one of them costs.

package paymock

import (
	"fmt"
	"strings"
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

func TestAccount_Validate(t *testing.T) {
	for _, tc := range []struct {
		name      string
		account   Account
		wantCode  string // "" means valid
		wantInMsg string
	}{
		{"valid", Account{ID: "acct_main", Active: true}, "", ""},
		{"inactive is valid", Account{ID: "acct_old"}, "", ""},
		{"longest id", Account{ID: strings.Repeat("a", 255)}, "", ""},
		{"missing id", Account{Active: true}, "parameter_missing", "id is required"},
		{"id longer than account_id allows", Account{ID: strings.Repeat("a", 256)}, "parameter_invalid", "longer than 255"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vs := tc.account.Validate()
			if tc.wantCode == "" {
				if len(vs) != 0 {
					t.Fatalf("Validate() = %+v, want none", vs)
				}
				return
			}
			if len(vs) != 1 || vs[0].Param != "id" || vs[0].Code != tc.wantCode || !strings.Contains(vs[0].Message, tc.wantInMsg) {
				t.Fatalf("Validate() = %+v, want one %s on id mentioning %q", vs, tc.wantCode, tc.wantInMsg)
			}
		})
	}
}

func TestMerchant_Validate(t *testing.T) {
	good := func() Merchant {
		return Merchant{Name: "acme", APIKeys: []string{"sk_test_acme"}, PCIApproved: true,
			Accounts: []Account{{ID: "acct_1", Active: true}, {ID: "acct_2"}},
			Webhooks: []WebhookEndpoint{{URL: "http://localhost:9000/hooks", Secret: testWebhookSecret}}}
	}
	type want struct{ param, code, msg string }
	for _, tc := range []struct {
		name   string
		change func(*Merchant)
		want   []want // every violation, in order
	}{
		{"valid", func(*Merchant) {}, nil},
		{"no accounts or webhooks", func(m *Merchant) { m.Accounts, m.Webhooks = nil, nil }, nil},
		{"missing name", func(m *Merchant) { m.Name = "" }, []want{{"name", "parameter_missing", "name is required"}}},
		{"name too long", func(m *Merchant) { m.Name = strings.Repeat("n", 101) }, []want{{"name", "parameter_invalid", "longer than 100"}}},
		{"name with a newline", func(m *Merchant) { m.Name = "ac\nme" }, []want{{"name", "parameter_invalid", "control characters"}}},
		{"name not UTF-8", func(m *Merchant) { m.Name = "ac\xffme" }, []want{{"name", "parameter_invalid", "readable text"}}},
		{"no keys", func(m *Merchant) { m.APIKeys = nil }, []want{{"api_keys", "parameter_missing", "at least one key"}}},
		{"malformed key", func(m *Merchant) { m.APIKeys = []string{"sk_ok", "sk k3y"} },
			[]want{{"api_keys.1", "parameter_invalid", "api key 2 is not a valid bearer token"}}},
		{"key twice", func(m *Merchant) { m.APIKeys = []string{"sk_k3y", "sk_other", "sk_k3y"} },
			[]want{{"api_keys.2", "parameter_invalid", "api key 3 is used twice: it is the same as api key 1"}}},
		{"account without id", func(m *Merchant) { m.Accounts[1].ID = "" },
			[]want{{"accounts.1.id", "parameter_missing", "account 2: id is required"}}},
		{"account twice", func(m *Merchant) { m.Accounts[1].ID = "acct_1" },
			[]want{{"accounts.1.id", "parameter_invalid", `account "acct_1" is listed twice`}}},
		{"relative webhook url", func(m *Merchant) { m.Webhooks[0].URL = "/hooks" },
			[]want{{"webhooks.0.url", "parameter_invalid", `webhook 1: url "/hooks" is not an absolute http:// or https:// URL`}}},
		{"webhook without secret", func(m *Merchant) { m.Webhooks[0].Secret = "" },
			[]want{{"webhooks.0.secret", "parameter_missing", "webhook 1: secret is required"}}},
		{"everything wrong at once", func(m *Merchant) {
			m.Name, m.APIKeys = "", []string{""}
			m.Accounts = []Account{{}}
			m.Webhooks = []WebhookEndpoint{{URL: "ftp://h.example", Secret: "abc"}}
		}, []want{
			{"name", "parameter_missing", "name is required"},
			{"api_keys.0", "parameter_invalid", "api key 1 is not a valid bearer token"},
			{"accounts.0.id", "parameter_missing", "account 1: id is required"},
			{"webhooks.0.url", "parameter_invalid", "webhook 1: url"},
			{"webhooks.0.secret", "parameter_invalid", "webhook 1: the secret must start with whsec_"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := good()
			tc.change(&m)
			vs := m.Validate()
			if len(vs) != len(tc.want) {
				t.Fatalf("Validate() = %+v, want %d violations", vs, len(tc.want))
			}
			for i, w := range tc.want {
				if vs[i].Param != w.param || vs[i].Code != w.code || !strings.Contains(vs[i].Message, w.msg) {
					t.Errorf("violation %d = %+v, want %s %s mentioning %q", i, vs[i], w.param, w.code, w.msg)
				}
			}
			for _, v := range vs {
				if strings.Contains(v.Message, "k3y") || strings.Contains(v.Message, "whsec_MfK") {
					t.Errorf("message %q repeats a key or secret", v.Message)
				}
			}
		})
	}
}

func TestMerchant_StringNeverShowsKeysOrSecrets(t *testing.T) {
	m := Merchant{ID: "acme", Name: "acme", APIKeys: []string{"sk_test_S3CRETKEY"},
		Webhooks: []WebhookEndpoint{{URL: "https://user:pa55word@h.example/x", Secret: testWebhookSecret}}}
	for _, s := range []string{fmt.Sprint(m), fmt.Sprintf("%+v", m), fmt.Sprintf("%#v", m), fmt.Sprintf("%v", &m), m.LogValue().String()} {
		for _, secret := range []string{"S3CRETKEY", testWebhookSecret, "pa55word"} {
			if strings.Contains(s, secret) {
				t.Errorf("%q shows %q", s, secret)
			}
		}
	}
	if s := m.String(); !strings.Contains(s, "acme") || !strings.Contains(s, "1 api keys") || !strings.Contains(s, "h.example") {
		t.Errorf("String() = %q, want the name, the key count and the webhook host", s)
	}
}
