package webhooks

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"syscall"

	"github.com/mainguard/mainguard/shared/errs"
)

// Guard keeps deliveries away from link-local and cloud metadata addresses
// (see the package documentation for what it allows and why).
type Guard struct {
	// LookupIP resolves a host name; nil uses the system resolver. Tests
	// inject names that resolve to refused addresses.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
}

var (
	linkLocal4 = netip.MustParsePrefix("169.254.0.0/16")
	linkLocal6 = netip.MustParsePrefix("fe80::/10")
	awsIMDS6   = netip.MustParseAddr("fd00:ec2::254")
	// IPv6 forms that carry an IPv4 address in their last 32 bits and reach
	// it: IPv4-compatible (deprecated, still parsed) and NAT64.
	v4compat = netip.MustParsePrefix("::/96")
	nat64    = netip.MustParsePrefix("64:ff9b::/96")
)

// Refused reports whether a delivery may not go to ip.
func Refused(ip netip.Addr) bool {
	ip = ip.WithZone("").Unmap()
	if ip.Is6() && (v4compat.Contains(ip) || nat64.Contains(ip)) {
		b := ip.As16()
		if v4 := netip.AddrFrom4([4]byte(b[12:])); v4 != netip.IPv4Unspecified() {
			ip = v4
		}
	}
	return linkLocal4.Contains(ip) || linkLocal6.Contains(ip) || ip == awsIMDS6
}

// errRefused marks a dial the guard stopped.
var errRefused = errors.New("address is link-local or a cloud metadata address")

// numericHost matches hosts made of numbers only (decimal, octal or hex
// parts) that are not a standard dotted quad: some resolvers read
// "2852039166" or "0xa9fea9fe" as 169.254.169.254, and no real name looks so.
var numericHost = regexp.MustCompile(`(?i)^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+))*\.?$`)

// CheckURL checks an endpoint URL when it is added, with the system
// resolver: see Guard.CheckURL.
func CheckURL(raw string) error { return Guard{}.CheckURL(context.Background(), raw) }

// CheckURL refuses (Invalid) a URL that is not http or https, has no host,
// or whose host is, or resolves to, a refused address; also a name that
// does not resolve at all.
func (g Guard) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return errs.E(errs.Invalid, "endpoint url is not a valid URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return errs.E(errs.Invalid, "endpoint url must be http or https")
	}
	host := u.Hostname()
	if host == "" {
		return errs.E(errs.Invalid, "endpoint url must name a host")
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if Refused(ip) {
			return errs.E(errs.Invalid, "endpoint url must not point at a link-local or metadata address")
		}
		return nil
	}
	if numericHost.MatchString(host) {
		return errs.E(errs.Invalid, "endpoint url host is a number in a non-standard form; write the address as a dotted quad")
	}
	ips, err := g.lookup(ctx, host)
	if err != nil || len(ips) == 0 {
		return errs.Wrap(errs.Invalid, err, "endpoint url host %s does not resolve", host)
	}
	for _, ip := range ips {
		if Refused(ip) {
			return errs.E(errs.Invalid, "endpoint url host %s resolves to a link-local or metadata address", host)
		}
	}
	return nil
}

func (g Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if g.LookupIP != nil {
		return g.LookupIP(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// Control is a net.Dialer Control function: it runs after resolution, on
// the very address about to be dialled, and refuses a refused one.
func (g Guard) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return errRefused // not an IP: nothing we can vouch for
	}
	if Refused(ap.Addr()) {
		return errRefused
	}
	return nil
}

// DialContext dials with Control in place; with LookupIP set it resolves
// names through it first (and Control still checks every address).
func (g Guard) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d := &net.Dialer{Control: g.Control}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || g.LookupIP == nil {
		return d.DialContext(ctx, network, addr)
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return d.DialContext(ctx, network, addr)
	}
	ips, err := g.LookupIP(ctx, host)
	if err != nil {
		return nil, err
	}
	errAll := errors.New("no address for " + host)
	for _, ip := range ips {
		c, err := d.DialContext(ctx, network, net.JoinHostPort(ip.String(), port))
		if err == nil {
			return c, nil
		}
		errAll = err
	}
	return nil, errAll
}
