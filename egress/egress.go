// Package egress is the policy of where the sandbox may send webhooks:
// address ranges it refuses to reach, checked when an endpoint is
// registered and again at every connection, on the address actually
// dialled, so that a name which resolves elsewhere later (DNS rebinding)
// cannot reach a denied address either.
package egress

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// DefaultDeny is the deny list when none is configured: link-local
// addresses, where cloud metadata services answer (169.254.169.254,
// fe80::/10), and the unspecified addresses, which reach the host itself
// (0.0.0.0/8, ::). Loopback and private ranges stay allowed: local
// development and compose networks deliver there.
func DefaultDeny() []netip.Prefix {
	return []netip.Prefix{
		netip.MustParsePrefix("169.254.0.0/16"),
		netip.MustParsePrefix("fe80::/10"),
		netip.MustParsePrefix("0.0.0.0/8"),
		netip.MustParsePrefix("::/128"),
	}
}

// ParseDeny reads a deny list: CIDR prefixes or single addresses,
// comma-separated ("169.254.0.0/16,10.0.0.0/8,::1"). An empty list is
// none denied.
func ParseDeny(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		if f == "" {
			continue
		}
		if p, err := netip.ParsePrefix(f); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR prefix (10.0.0.0/8) nor an address", f)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}

// Resolver finds the addresses of a host name; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures New. The zero value denies DefaultDeny and resolves
// with net.DefaultResolver.
type Config struct {
	// Deny are the ranges refused; nil means DefaultDeny, an empty
	// non-nil slice none.
	Deny []netip.Prefix
	// Resolver resolves endpoint hosts, at registration and at each
	// connection; nil means net.DefaultResolver. Tests give their own.
	Resolver Resolver
}

// Policy says which destinations webhooks may reach. It is safe for
// concurrent use.
type Policy struct {
	deny     []netip.Prefix
	resolver Resolver
}

// New builds a policy.
func New(cfg Config) *Policy {
	p := &Policy{deny: cfg.Deny, resolver: cfg.Resolver}
	if p.deny == nil {
		p.deny = DefaultDeny()
	}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	return p
}

// Deny is the ranges refused.
func (p *Policy) Deny() []netip.Prefix { return append([]netip.Prefix(nil), p.deny...) }

// DeniedError is a destination the policy refuses.
type DeniedError struct {
	Host   string       // as given: a name or an address
	Addr   netip.Addr   // the address refused
	Prefix netip.Prefix // the deny list's range it is in
}

func (e *DeniedError) Error() string {
	if e.Host != "" && e.Host != e.Addr.String() {
		return fmt.Sprintf("%s resolves to %s, in %s, which webhooks may not reach (--webhook-deny)", e.Host, e.Addr, e.Prefix)
	}
	return fmt.Sprintf("%s is in %s, which webhooks may not reach (--webhook-deny)", e.Addr, e.Prefix)
}

// denied returns the deny range addr is in.
func (p *Policy) denied(addr netip.Addr) (netip.Prefix, bool) {
	// ::ffff:169.254.169.254 is 169.254.169.254, and a zoned address
	// (fe80::1%eth0) is contained in no prefix until its zone goes.
	addr = addr.WithZone("").Unmap()
	for _, pre := range p.deny {
		if pre.Contains(addr) {
			return pre, true
		}
	}
	return netip.Prefix{}, false
}

// CheckAddr refuses an address in a denied range with a *DeniedError.
func (p *Policy) CheckAddr(addr netip.Addr) error {
	if pre, ok := p.denied(addr); ok {
		return &DeniedError{Addr: addr.Unmap(), Prefix: pre}
	}
	return nil
}

// CheckURL checks an endpoint URL when it is registered: its host, an
// address or every address its name resolves to now, must be allowed. A
// name that does not resolve passes (a compose service may not be up
// yet); each connection is checked again anyway.
func (p *Policy) CheckURL(ctx context.Context, rawURL string) error {
	host, isAddr, err := p.checkLiteral(rawURL)
	if err != nil || isAddr {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := p.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, a := range addrs {
		if pre, ok := p.denied(a); ok {
			return &DeniedError{Host: host, Addr: a.Unmap(), Prefix: pre}
		}
	}
	return nil
}

// CheckLiteral checks what can be judged of an endpoint URL without
// looking anything up: a host that is an address (0.0.0.0,
// [::ffff:169.254.169.254]) must be allowed. A host name, localhost
// included, passes: what it resolves to is checked at each connection.
// paymock checks its configured endpoints so at start, where a lookup
// could wait on DNS or find a compose service not up yet.
func (p *Policy) CheckLiteral(rawURL string) error {
	_, _, err := p.checkLiteral(rawURL)
	return err
}

// checkLiteral is CheckLiteral, also returning the URL's host and
// whether it is an address (and so was judged).
func (p *Policy) checkLiteral(rawURL string) (host string, isAddr bool, err error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return "", false, fmt.Errorf("not a URL: %w", err)
	}
	host = u.Hostname()
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host, false, nil
	}
	return host, true, p.CheckAddr(a)
}

// DialContext dials address ("host:port") the way net.Dialer does, but
// resolves the host itself and dials only allowed addresses, each of them
// checked again as it is connected to: a name that resolves to a denied
// address at delivery time fails the attempt with a *DeniedError.
func (p *Policy) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = p.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Control: p.control}
	var first error
	for _, a := range addrs {
		if pre, ok := p.denied(a); ok {
			if first == nil {
				first = &DeniedError{Host: host, Addr: a.Unmap(), Prefix: pre}
			}
			continue
		}
		c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return c, nil
		}
		if first == nil || errors.As(first, new(*DeniedError)) {
			first = err
		}
	}
	if first == nil {
		first = fmt.Errorf("%s resolves to no address", host)
	}
	return nil, first
}

// control checks the address a socket is about to connect to, whatever
// dialled it: the last word before any packet leaves.
func (p *Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("connecting to %s: %w", address, err)
	}
	return p.CheckAddr(ap.Addr())
}

// Client is an HTTP client for webhook deliveries under the policy: every
// connection goes through DialContext, no proxy from the environment
// (which would dial the proxy, not the destination), and no redirect is
// followed (a 3xx is a failed attempt). conns bounds the idle connections
// kept per host.
func (p *Policy) Client(conns int) *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil
	tr.DialContext = p.DialContext
	if conns > 0 {
		tr.MaxIdleConnsPerHost = conns
	}
	return &http.Client{
		Transport:     tr,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}
