// The create request and every rule a payment must pass before it exists.

package paymock

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// CreateRequest is the body of POST /api/v1/payments. Pointers tell a field
// that was left out from one sent as zero.
type CreateRequest struct {
	Amount        json.Number         `json:"amount"`
	Currency      Currency            `json:"currency"`
	Customer      *CustomerInput      `json:"customer"`
	Description   string              `json:"description"`
	ExpiresIn     *Whole              `json:"expires_in"`
	Metadata      json.RawMessage     `json:"metadata"`
	SuccessURL    string              `json:"success_url"`
	CancelURL     string              `json:"cancel_url"`
	MCC           *Whole              `json:"mcc"`
	AccountID     *string             `json:"account_id"`
	PaymentMethod *PaymentMethodInput `json:"payment_method"`
}

// CustomerInput is the customer as the merchant sends it.
type CustomerInput struct {
	Email string `json:"email"`
	Name  string `json:"name"`
}

// PaymentMethodInput is a card as a PCI-approved merchant sends it.
type PaymentMethodInput struct {
	Type           string          `json:"type"`
	Card           *CardInput      `json:"card"`
	BillingDetails *BillingDetails `json:"billing_details"`
}

// CardInput holds the full card details; it is never stored or logged.
type CardInput struct {
	Number      string `json:"number"`
	ExpiryMonth Whole  `json:"expiry_month"`
	ExpiryYear  Whole  `json:"expiry_year"`
	CVC         string `json:"cvc"`
}

// String keeps card data out of any log line or error that formats it.
func (c CardInput) String() string { return "card{redacted}" }

// GoString keeps card data out of %#v as well.
func (c CardInput) GoString() string { return c.String() }

// Bounds of a create request that the spec leaves open (DESIGN.md).
const (
	MaxExpiresIn = 30 * 24 * 60 * 60 // 30 days, in seconds
	MaxMCC       = 9999
	// MinCardYear and MaxCardYear bound a card's four-digit expiry year,
	// as the contract does. The spec asks only "four digits", and a year
	// before 2000 is no card's (1486 is a client's bug); every later one
	// is taken, to 9999, the last of four digits, since no rule of the
	// spec or of paymock's design says how far ahead a card may expire.
	MinCardYear = 2000
	MaxCardYear = 9999
	// Metadata is bounded as most payment APIs bound it, so that no
	// merchant can make a page of payments weigh megabytes: keys, key
	// length, and each value's length (a string's characters, or any
	// other value's JSON bytes).
	MaxMetadataKeys     = 50
	MaxMetadataKeyLen   = 40
	MaxMetadataValueLen = 500
	// MaxMetadataValueDepth bounds how deep a value nests: arrays and
	// objects, the value itself counted (the metadata object is not), so
	// [[[[[1]]]]] is the deepest value. Within 500 bytes a value could
	// nest 249 deep, and every answer, event and dashboard page that
	// carries it then cost hundreds of times a flat one (past 64 levels
	// the contract's own check hands the answer to kin-openapi).
	MaxMetadataValueDepth = 5
)

// ValidatedCreate is a create request that passed every rule, with its
// values parsed.
type ValidatedCreate struct {
	Request CreateRequest
	Amount  Amount
	Expires time.Duration
}

// ValidateCreate applies the create rules for merchant m at time now. It
// returns a permission error when a merchant without PCI approval sends card
// details, and otherwise an invalid_request_error listing every violation.
func ValidateCreate(r CreateRequest, m *Merchant, now time.Time) (ValidatedCreate, error) {
	if r.PaymentMethod != nil && !m.PCIApproved {
		return ValidatedCreate{}, &Error{
			Type:    Permission,
			Code:    "pci_approval_required",
			Message: "payment_method is accepted only from merchants approved for PCI DSS direct card processing",
			Param:   "payment_method",
		}
	}
	var vs []Violation
	add := func(param, code, msg string) { vs = append(vs, Violation{Param: param, Code: code, Message: msg}) }
	missing := func(param string) { add(param, "parameter_missing", param+" is required") }

	v := ValidatedCreate{Request: r}
	if r.Amount == "" {
		missing("amount")
	} else if a, err := ParseAmount(string(r.Amount)); err != nil {
		add("amount", "parameter_invalid", "amount "+err.Error())
	} else {
		v.Amount = a
	}
	switch {
	case r.Currency == "":
		missing("currency")
	case !r.Currency.Valid():
		add("currency", "parameter_invalid", "currency must be one of USD, EUR, GBP, CAD")
	}
	if r.Customer == nil {
		missing("customer")
	} else {
		switch {
		case r.Customer.Email == "":
			missing("customer.email")
		case !ValidEmail(r.Customer.Email):
			add("customer.email", "parameter_invalid", "customer.email must be a valid email address")
		}
		if strings.TrimSpace(r.Customer.Name) == "" {
			missing("customer.name")
		}
	}
	if strings.TrimSpace(r.Description) == "" {
		missing("description")
	}
	switch {
	case r.ExpiresIn == nil:
		missing("expires_in")
	case *r.ExpiresIn < 1 || *r.ExpiresIn > MaxExpiresIn:
		add("expires_in", "parameter_invalid", "expires_in must be between 1 and 2592000 seconds")
	case now.UTC().Truncate(time.Second).Add(time.Duration(*r.ExpiresIn) * time.Second).After(LastInstant()):
		// A clock advanced to its last month: the payment would expire in
		// a year no answer can write.
		add("expires_in", "parameter_invalid", "expires_in would put expires_at past "+
			LastInstant().Format(time.RFC3339)+", the last instant the sandbox's clock shows")
	default:
		v.Expires = time.Duration(*r.ExpiresIn) * time.Second
	}
	switch t := bytes.TrimSpace(r.Metadata); {
	case len(t) == 0 || string(t) == "null":
		missing("metadata")
	case t[0] != '{':
		add("metadata", "parameter_invalid", "metadata must be an object")
	default:
		vs = append(vs, validateMetadata(t)...)
	}
	for _, u := range []struct{ param, value string }{{"success_url", r.SuccessURL}, {"cancel_url", r.CancelURL}} {
		switch {
		case u.value == "":
			missing(u.param)
		case !ValidRedirectURL(u.value):
			add(u.param, "parameter_invalid", u.param+" must be an absolute http or https URL")
		}
	}
	switch {
	case r.MCC != nil && r.AccountID != nil:
		add("mcc", "parameter_conflict", "give exactly one of mcc or account_id, not both")
	case r.MCC == nil && r.AccountID == nil:
		add("mcc", "parameter_missing", "one of mcc or account_id is required")
	case r.MCC != nil && (*r.MCC < 0 || *r.MCC > MaxMCC):
		add("mcc", "parameter_invalid", "mcc must be between 0 and 9999")
	case r.AccountID != nil:
		a, ok := m.Account(*r.AccountID)
		switch {
		case !ok:
			add("account_id", "account_unknown", "account_id is not an account of this merchant")
		case !a.Active:
			add("account_id", "account_inactive", "account_id names an inactive account")
		}
	}
	if r.PaymentMethod != nil {
		vs = append(vs, validatePaymentMethod(r.PaymentMethod, now)...)
	}
	if len(vs) > 0 {
		return ValidatedCreate{}, Invalid(vs...)
	}
	return v, nil
}

func validatePaymentMethod(pm *PaymentMethodInput, now time.Time) []Violation {
	var vs []Violation
	add := func(param, code, msg string) { vs = append(vs, Violation{Param: param, Code: code, Message: msg}) }
	// An empty required string is missing, as the contract words it too.
	missing := func(param string) { add(param, "parameter_missing", param+" is required") }
	switch pm.Type {
	case "card":
	case "":
		missing("payment_method.type")
	default:
		add("payment_method.type", "parameter_invalid", "payment_method.type must be card")
	}
	if c := pm.Card; c == nil {
		missing("payment_method.card")
	} else {
		if c.Number == "" {
			missing("payment_method.card.number")
		} else if !Luhn(c.Number) || len(c.Number) < 12 || len(c.Number) > 19 {
			add("payment_method.card.number", "card_number_invalid", "payment_method.card.number must be 12 to 19 digits and pass the Luhn check")
		}
		monthOK := c.ExpiryMonth >= 1 && c.ExpiryMonth <= 12
		yearOK := c.ExpiryYear >= MinCardYear && c.ExpiryYear <= MaxCardYear
		if !monthOK {
			add("payment_method.card.expiry_month", "parameter_invalid", "payment_method.card.expiry_month must be 1 to 12")
		}
		if !yearOK {
			add("payment_method.card.expiry_year", "parameter_invalid", fmt.Sprintf("payment_method.card.expiry_year must be a four-digit year from %d to %d", MinCardYear, MaxCardYear))
		}
		// A card is valid through the last day of its expiry month.
		if monthOK && yearOK {
			y, m, _ := now.UTC().Date()
			if int(c.ExpiryYear) < y || int(c.ExpiryYear) == y && time.Month(c.ExpiryMonth) < m {
				add("payment_method.card.expiry_year", "card_expired", "the card has expired")
			}
		}
		if c.CVC == "" {
			missing("payment_method.card.cvc")
		} else if !digits(c.CVC, 3, 4) {
			add("payment_method.card.cvc", "parameter_invalid", "payment_method.card.cvc must be 3 or 4 digits")
		}
	}
	if b := pm.BillingDetails; b != nil && b.Address != nil && b.Address.Country != "" {
		const param = "payment_method.billing_details.address.country"
		switch c := b.Address.Country; {
		case !countryCode(c):
			add(param, "parameter_invalid", param+" must be a two-letter ISO 3166-1 code")
		case !assignedCountry(c):
			// Two capitals ISO has not assigned (UK, EU, ZZ): the form the
			// contract's pattern checks, and no country.
			add(param, "parameter_invalid", countryViolation(param, c))
		}
	}
	return vs
}

// NewPaymentInput is what a new payment is made of besides its validated
// request.
type NewPaymentInput struct {
	ID       string    // the payment's new id
	Merchant *Merchant // who creates it
	Customer Customer  // the merchant's customer of the request's email
	// PublicURL is the base of the hosted pages' URLs, without a trailing
	// slash.
	PublicURL string
	Now       time.Time // the merchant's clock at creation
}

// NewPayment builds the pending payment for a validated request. Its
// next action is the hosted page PagePath picks.
func NewPayment(v ValidatedCreate, in NewPaymentInput) Payment {
	r := v.Request
	now := in.Now.UTC().Truncate(time.Second)
	id, customer := in.ID, in.Customer
	checkoutURL := in.PublicURL + PagePath(r.PaymentMethod != nil) + id
	p := Payment{
		ID:          id,
		MerchantID:  in.Merchant.ID,
		Amount:      v.Amount,
		Currency:    r.Currency,
		Status:      StatusPending,
		Customer:    customer,
		Description: r.Description,
		Metadata:    compact(r.Metadata),
		SuccessURL:  r.SuccessURL,
		CancelURL:   r.CancelURL,
		CheckoutURL: checkoutURL,
		CreatedAt:   now,
		UpdatedAt:   now,
		ExpiresAt:   now.Add(v.Expires),
	}
	if pm := r.PaymentMethod; pm != nil && pm.Card != nil {
		p.PaymentMethod = &PaymentMethod{
			Type: pm.Type,
			Card: CardSummary{
				Brand:       CardBrand(pm.Card.Number),
				Last4:       pm.Card.Number[len(pm.Card.Number)-4:],
				ExpiryMonth: int(pm.Card.ExpiryMonth),
				ExpiryYear:  int(pm.Card.ExpiryYear),
			},
			BillingDetails: pm.BillingDetails,
		}
	}
	return p
}

// compact is raw as json.Compact writes it, in a buffer of its own; raw
// that json.Compact refuses is copied as it is. Raw with no space outside
// its strings is its own compact form, and is copied in one allocation of
// its size, not through json.Compact's growing buffer: every create's
// metadata goes through here, and is mostly sent compact.
func compact(raw json.RawMessage) json.RawMessage {
	if spaceless(raw) {
		return bytes.Clone(raw)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return append(json.RawMessage(nil), raw...)
	}
	return b.Bytes()
}

// spaceless reports whether raw, not empty, has no JSON space outside
// its strings: json.Compact would copy it unchanged, valid or not (what it
// refuses is copied as it is). An empty raw is left to json.Compact, which
// makes it nil.
func spaceless(raw []byte) bool {
	if len(raw) == 0 {
		return false
	}
	inString := false
	for i := 0; i < len(raw); i++ {
		switch c := raw[i]; {
		case inString:
			if c == '\\' {
				i++
			} else if c == '"' {
				inString = false
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			return false
		}
	}
	return true
}

// ValidEmail reports whether s is a bare address (no display name) with a
// domain that has a dot, which is what a payer's email must look like. It
// holds only the characters of a dot-atom (RFC 5321): the contract's email
// format is ASCII, and strict clients refuse a quoted local part, an
// address literal and non-ASCII (the idn-email format) in it.
func ValidEmail(s string) bool {
	if len(s) > 254 {
		return false
	}
	if plainEmail(s) {
		return true // every body's email passes here: spare it net/mail
	}
	if !emailChars(s) {
		return false
	}
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return false
	}
	return domainLabels(s[strings.LastIndexByte(s, '@')+1:])
}

// domainLabels reports whether s is a domain of two labels or more, each
// of 1 to 63 letters, digits and inner dashes (RFC 5321): net/mail takes
// "a@-x.co" and "a@x_y.co", which the contract's email format refuses.
func domainLabels(s string) bool {
	labels := 0
	for label := range strings.SplitSeq(s, ".") {
		if len(label) == 0 || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isAlpha(c) && !('0' <= c && c <= '9') && c != '-' {
				return false
			}
		}
		labels++
	}
	return labels >= 2
}

// emailChars reports whether every byte of s is one of an address's
// dot-atoms (RFC 5322 atext), a dot or an at sign.
func emailChars(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+/=?^_`{|}~.@-", c) >= 0) {
			return false
		}
	}
	return true
}

// plainEmail reports whether s is an address of the plainest shape:
// dot-separated atoms of letters, digits and _+- before the one @, and
// domainLabels after it. net/mail takes every such address as it is.
// False is no verdict.
func plainEmail(s string) bool {
	at := strings.IndexByte(s, '@')
	return at > 0 && dotAtoms(s[:at], "_+-", 1) && domainLabels(s[at+1:])
}

// dotAtoms reports whether s is at least n non-empty runs of letters,
// digits and the bytes of extra, joined by single dots.
func dotAtoms(s, extra string, n int) bool {
	runs, run := 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte(extra, c) >= 0:
			run++
		case c == '.' && run > 0:
			runs, run = runs+1, 0
		default:
			return false
		}
	}
	return run > 0 && runs+1 >= n
}

// ValidRedirectURL reports whether s is an absolute http(s) URL with a
// host, written with the characters a URI may hold.
func ValidRedirectURL(s string) bool {
	if PlainHTTPURL(s) {
		return true // every create's two URLs, mostly: spare them url.Parse
	}
	if !AbsoluteURI(s) {
		return false
	}
	u, err := url.Parse(s)
	// A host of percent escapes (url.Parse takes "%25" and non-ASCII
	// ones, which it decodes) is no host a shop has: the contract's
	// pattern refuses it.
	if err != nil || u.Hostname() == "" || u.User != nil || strings.IndexFunc(u.Host, func(r rune) bool { return r == '%' || r >= 0x80 }) >= 0 {
		return false
	}
	return u.Scheme == "http" || u.Scheme == "https"
}

func digits(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validateMetadata checks the bounds of a metadata object; the contract
// declares the number of keys (maxProperties), and the rest is here
// because JSON Schema 3.0 cannot bound the length of keys or of values of
// any type.
func validateMetadata(raw []byte) []Violation {
	// One pass over the bytes clears every value's depth at once: the
	// metadata object adds one level.
	deep := jsonDepth(raw) > MaxMetadataValueDepth+1
	// No key, value or count of keys of an object this short can break a
	// bound (keys are longer escaped than decoded, and each takes at least
	// four bytes).
	if !deep && len(raw) <= min(MaxMetadataKeyLen, MaxMetadataValueLen, 4*MaxMetadataKeys) {
		return nil
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return nil // not an object: the contract has said so
	}
	var vs []Violation
	add := func(msg string) {
		vs = append(vs, Violation{Param: "metadata", Code: "parameter_invalid", Message: msg})
	}
	// A value's own violations name the value, as the contract names a
	// place inside metadata.
	addValue := func(k, msg string) {
		vs = append(vs, Violation{Param: "metadata." + k, Code: "parameter_invalid", Message: msg})
	}
	if len(fields) > MaxMetadataKeys {
		add(fmt.Sprintf("metadata must have at most %d keys, not %d", MaxMetadataKeys, len(fields)))
	}
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys) // one order of violations for one body
	for _, k := range keys {
		if utf8.RuneCountInString(k) > MaxMetadataKeyLen {
			add(fmt.Sprintf("metadata key %q is longer than %d characters", clip(k, 40), MaxMetadataKeyLen))
			continue
		}
		v := bytes.TrimSpace(fields[k])
		var str string
		if len(v) > 0 && v[0] == '"' && json.Unmarshal(v, &str) == nil {
			if utf8.RuneCountInString(str) > MaxMetadataValueLen {
				addValue(k, fmt.Sprintf("metadata.%s must be at most %d characters", k, MaxMetadataValueLen))
			}
			continue
		}
		if len(compact(v)) > MaxMetadataValueLen {
			addValue(k, fmt.Sprintf("metadata.%s must be at most %d bytes of JSON", k, MaxMetadataValueLen))
		}
		if deep {
			if d := jsonDepth(v); d > MaxMetadataValueDepth {
				addValue(k, fmt.Sprintf("metadata.%s nests %d arrays or objects deep; at most %d are allowed, the value itself counted", k, d, MaxMetadataValueDepth))
			}
		}
	}
	return vs
}

// jsonDepth is how deep raw's arrays and objects nest: 0 for a scalar,
// 1 for [] or {"a":1}, 2 for [[]]. It reads brackets outside strings
// and checks nothing else; raw that is not JSON gets a number, not a
// verdict.
func jsonDepth(raw []byte) int {
	depth, deepest := 0, 0
	for i := NextJSONStructural(raw, 0); i < len(raw); i = NextJSONStructural(raw, i+1) {
		switch raw[i] {
		case '[', '{':
			depth++
			deepest = max(deepest, depth)
		case ']', '}':
			depth--
		}
	}
	return deepest
}
