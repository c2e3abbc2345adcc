package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"syscall"

	"github.com/mainguard/mainguard/shared/errs"
)

// Guard decides which addresses deliveries may reach (see the package
// documentation for the classes and why). The zero Guard is the deployed
// one: public addresses only.
type Guard struct {
	// LookupIP resolves a host name; nil uses the system resolver. Tests
	// inject names that resolve to refused addresses.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// AllowLoopback lets deliveries reach this machine: the local server
	// posts to its own receivers (mainguard webhook listen, the tests).
	// Deployed it is false: a function's loopback is its own sandbox.
	AllowLoopback bool
	// AllowPrivate lets deliveries reach private networks (10/8,
	// 172.16/12, 192.168/16, fc00::/7, and the shared 100.64/10 and
	// benchmark 198.18/15 spaces that clouds also hand out inside a
	// network): the deployment's switch WEBHOOK_INTERNAL_NETWORKS=allow, for
	// teams whose receivers live there. Metadata addresses stay refused.
	AllowPrivate bool
}

// The classes of addresses a delivery may not reach by default, as the
// refusals name them.
const (
	ClassPublic        = ""
	ClassLoopback      = "loopback"
	ClassPrivate       = "private"
	ClassShared        = "shared (100.64.0.0/10)"
	ClassBenchmark     = "benchmark (198.18.0.0/15)"
	ClassLinkLocal     = "link-local"
	ClassMetadata      = "cloud metadata"
	ClassUnspecified   = "unspecified"
	ClassMulticast     = "multicast"
	ClassDocumentation = "documentation"
	ClassReserved      = "reserved"
)

type rangeClass struct {
	prefix netip.Prefix
	class  string
}

func ranges(class string, prefixes ...string) []rangeClass {
	out := make([]rangeClass, len(prefixes))
	for i, p := range prefixes {
		out[i] = rangeClass{netip.MustParsePrefix(p), class}
	}
	return out
}

// metadata are the clouds' instance metadata and credential services. Most
// sit in link-local space, refused anyway; these are named so that the
// private-network switch never opens them: AWS's IMDS, ECS and EKS Pod
// Identity agents and its IPv6 service prefix (fd00:ec2::254 IMDS, ::23
// Pod Identity, ::253 DNS), GCP's IPv6 metadata server, Azure's WireServer
// (a public address), Alibaba's and Oracle's metadata services.
var metadata = ranges(ClassMetadata, "169.254.169.254/32", "169.254.170.2/32", "169.254.170.23/32", "169.254.0.23/32",
	"fd00:ec2::/32", "fd20:ce::254/128", "168.63.129.16/32", "100.100.100.200/32", "192.0.0.192/32")

// v4Classes are IANA's special-purpose IPv4 ranges (RFC 6890 and its
// updates) that are not the public internet.
var v4Classes = slices.Concat(
	ranges(ClassUnspecified, "0.0.0.0/8"),
	ranges(ClassPrivate, "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"),
	ranges(ClassShared, "100.64.0.0/10"),
	ranges(ClassLoopback, "127.0.0.0/8"),
	ranges(ClassLinkLocal, "169.254.0.0/16"),
	ranges(ClassReserved, "192.0.0.0/24", "192.88.99.0/24", "240.0.0.0/4"),
	ranges(ClassDocumentation, "192.0.2.0/24", "198.51.100.0/24", "203.0.113.0/24"),
	ranges(ClassBenchmark, "198.18.0.0/15"),
	ranges(ClassMulticast, "224.0.0.0/4"),
)

// v6Classes are the IPv6 ranges that are not the public internet, beside
// those that carry an IPv4 address (classified by it, see embeddedV4).
// Anything outside 2000::/3 that is not named here is reserved.
var v6Classes = slices.Concat(
	ranges(ClassPrivate, "fc00::/7", "64:ff9b:1::/48"), // ULA, local-use NAT64
	ranges(ClassLinkLocal, "fe80::/10"),
	ranges(ClassMulticast, "ff00::/8"),
	ranges(ClassDocumentation, "2001:db8::/32", "3fff::/20"),
	ranges(ClassBenchmark, "2001:2::/48"),
	ranges(ClassReserved, "2001::/32", "2001:10::/28", "2001:20::/28", "100::/64", "fec0::/10"), // Teredo, ORCHID, discard, site-local
)

var (
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
	v4compat       = netip.MustParsePrefix("::/96")        // deprecated, still parsed
	nat64          = netip.MustParsePrefix("64:ff9b::/96") // RFC 6052 well-known prefix
	sixToFour      = netip.MustParsePrefix("2002::/16")    // the IPv4 address in bits 16–47
)

// embeddedV4 is the IPv4 address an IPv6 address reaches when it is one
// written in IPv6 (IPv4-mapped, IPv4-compatible, NAT64, 6to4).
func embeddedV4(ip netip.Addr) (netip.Addr, bool) {
	if ip.Is4In6() {
		return ip.Unmap(), true
	}
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:])), true
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	case v4compat.Contains(ip) && ip != netip.IPv6Unspecified() && ip != netip.IPv6Loopback():
		return netip.AddrFrom4([4]byte(b[12:])), true
	}
	return netip.Addr{}, false
}

// Class names the kind of address ip is: ClassPublic for the public
// internet, else the special-purpose class it belongs to.
func Class(ip netip.Addr) string {
	ip = ip.WithZone("")
	if v4, ok := embeddedV4(ip); ok {
		ip = v4
	}
	for _, r := range metadata {
		if r.prefix.Contains(ip) {
			return r.class
		}
	}
	if ip.Is4() {
		for _, r := range v4Classes {
			if r.prefix.Contains(ip) {
				return r.class
			}
		}
		return ClassPublic
	}
	switch ip {
	case netip.IPv6Unspecified():
		return ClassUnspecified
	case netip.IPv6Loopback():
		return ClassLoopback
	}
	for _, r := range v6Classes {
		if r.prefix.Contains(ip) {
			return r.class
		}
	}
	if !globalUnicast6.Contains(ip) {
		return ClassReserved
	}
	return ClassPublic
}

// Refused returns the class of ip when g keeps deliveries from it, "" when
// they may go there.
func (g Guard) Refused(ip netip.Addr) string {
	switch c := Class(ip); c {
	case ClassPublic:
		return ""
	case ClassLoopback:
		if g.AllowLoopback {
			return ""
		}
		return c
	case ClassPrivate, ClassShared, ClassBenchmark:
		if g.AllowPrivate {
			return ""
		}
		return c
	default:
		return c
	}
}

// metadataNames are the clouds' names for their metadata services, refused
// whatever they resolve to where the check runs (the administrator's
// machine resolves them differently from the function).
var metadataNames = map[string]bool{
	"metadata.google.internal": true, "metadata.goog": true, "metadata": true,
	"instance-data": true, "instance-data.ec2.internal": true, "metadata.tencentyun.com": true,
}

// ErrRefused marks a connection the guard stopped; the delivery log says
// "refused: private address" for it, whatever the class.
var ErrRefused = errors.New("private address")

// numericHost matches hosts made of numbers only (decimal, octal or hex
// parts) that are not a standard dotted quad: some resolvers read
// "2852039166" or "0xa9fea9fe" as 169.254.169.254, and no real name looks so.
var numericHost = regexp.MustCompile(`(?i)^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+))*\.?$`)

// privateSwitch is the sentence a refusal adds for the classes the
// deployment's switch opens.
const privateSwitch = "; a deployment whose receivers live on its private network sets WEBHOOK_INTERNAL_NETWORKS=allow"

// CheckURL refuses (Invalid) a URL that is not http or https, has no host,
// or whose host is, or resolves to, an address g refuses; also a name that
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
		if c := g.Refused(ip); c != "" {
			return refusal(fmt.Sprintf("endpoint url host %s is not a public address (%s); deliveries may not go there", host, c), c)
		}
		return nil
	}
	if numericHost.MatchString(host) {
		return errs.E(errs.Invalid, "endpoint url host is a number in a non-standard form; write the address as a dotted quad")
	}
	if metadataNames[strings.TrimSuffix(strings.ToLower(host), ".")] {
		return errs.E(errs.Invalid, "endpoint url host %s is a cloud metadata service; deliveries may not go there", host)
	}
	ips, err := g.lookup(ctx, host)
	if err != nil || len(ips) == 0 {
		return errs.Wrap(errs.Invalid, err, "endpoint url host %s does not resolve", host)
	}
	for _, ip := range ips {
		if c := g.Refused(ip); c != "" {
			return refusal(fmt.Sprintf("endpoint url host %s resolves to %s, not a public address (%s); deliveries may not go there", host, ip.WithZone(""), c), c)
		}
	}
	return nil
}

func refusal(sentence, class string) error {
	if class == ClassPrivate || class == ClassShared || class == ClassBenchmark {
		sentence += privateSwitch
	}
	return errs.E(errs.Invalid, "%s", sentence)
}

func (g Guard) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if g.LookupIP != nil {
		return g.LookupIP(ctx, host)
	}
	return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
}

// Control is a net.Dialer Control function: it runs after resolution, on
// the very address about to be dialled, so a name that resolved to a
// public address when it was added and to a private one now (DNS
// rebinding) is stopped here.
func (g Guard) Control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return ErrRefused // not an IP: nothing we can vouch for
	}
	if g.Refused(ap.Addr()) != "" {
		return ErrRefused
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
