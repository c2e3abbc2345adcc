package webhooks_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/webhooks"
)

// fakeDNS resolves a fixed set of names; anything else does not resolve.
func fakeDNS(names map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		var out []netip.Addr
		for _, a := range names[host] {
			out = append(out, netip.MustParseAddr(a))
		}
		if len(out) == 0 {
			return nil, errors.New("no such host")
		}
		return out, nil
	}
}

// local is the local server's guard: loopback allowed, for the tests'
// receivers on 127.0.0.1.
var local = webhooks.Guard{AllowLoopback: true}

// refusedAddresses are, per class, addresses the deployed guard refuses:
// IPv4, IPv6 and the IPv6 spellings of the IPv4 ones (IPv4-mapped,
// IPv4-compatible, NAT64, 6to4).
var refusedAddresses = []struct {
	class string
	addrs []string
}{
	{webhooks.ClassUnspecified, []string{"0.0.0.0", "0.1.2.3", "::", "::ffff:0.0.0.0"}},
	{webhooks.ClassLoopback, []string{"127.0.0.1", "127.8.9.10", "::1", "::ffff:127.0.0.1", "::ffff:7f00:1", "64:ff9b::7f00:1", "2002:7f00:1::1"}},
	{webhooks.ClassPrivate, []string{"10.0.0.1", "172.16.0.1", "172.31.255.254", "192.168.1.1", "fc00::1", "fd12:3456::1",
		"::ffff:10.0.0.1", "::10.0.0.1", "64:ff9b::a00:1", "2002:c0a8:101::1", "64:ff9b:1::1"}},
	{webhooks.ClassShared, []string{"100.64.0.1", "100.127.255.254", "::ffff:100.64.0.1"}},
	{webhooks.ClassBenchmark, []string{"198.18.0.1", "198.19.255.254", "2001:2::1", "::ffff:198.18.0.1"}},
	{webhooks.ClassLinkLocal, []string{"169.254.1.1", "fe80::1", "fe80::1%eth0", "::ffff:169.254.1.1"}},
	{webhooks.ClassMetadata, []string{
		"169.254.169.254", "::ffff:169.254.169.254", "::ffff:a9fe:a9fe", "64:ff9b::a9fe:a9fe", "2002:a9fe:a9fe::1", // AWS, GCP, Azure, OCI, DigitalOcean
		"fd00:ec2::254", "fd00:ec2::23", // AWS IMDS and EKS Pod Identity, IPv6
		"169.254.170.2", "169.254.170.23", // ECS credentials, EKS Pod Identity
		"fd20:ce::254",    // GCP, IPv6
		"168.63.129.16",   // Azure WireServer
		"100.100.100.200", // Alibaba Cloud
		"192.0.0.192",     // Oracle Cloud
		"169.254.0.23",    // Tencent Cloud
		"::ffff:168.63.129.16",
	}},
	{webhooks.ClassMulticast, []string{"224.0.0.1", "239.255.255.250", "ff02::1"}},
	{webhooks.ClassReserved, []string{"240.0.0.1", "255.255.255.255", "192.0.0.8", "2001::1", "100::1", "fec0::1", "4000::1"}},
	{webhooks.ClassDocumentation, []string{"192.0.2.1", "198.51.100.1", "203.0.113.1", "2001:db8::1"}},
}

var publicAddresses = []string{"93.184.216.34", "2606:2800:220:1::1", "8.8.8.8", "::ffff:93.184.216.34", "64:ff9b::808:808", "1.1.1.1"}

func TestClass(t *testing.T) {
	t.Parallel()
	for _, c := range refusedAddresses {
		for _, a := range c.addrs {
			if got := webhooks.Class(netip.MustParseAddr(a)); got != c.class {
				t.Errorf("Class(%s) = %q, want %q", a, got, c.class)
			}
		}
	}
	for _, a := range publicAddresses {
		if got := webhooks.Class(netip.MustParseAddr(a)); got != webhooks.ClassPublic {
			t.Errorf("Class(%s) = %q, want public", a, got)
		}
	}
}

// toName is a test name that resolves to addr.
func toName(addr string) string {
	return "to-" + strings.NewReplacer(":", "-", ".", "-", "%", "-").Replace(addr) + ".test"
}

// hostOf writes an address as a URL's host.
func hostOf(addr string) string {
	if strings.Contains(addr, ":") {
		return "[" + strings.ReplaceAll(addr, "%", "%25") + "]"
	}
	return addr
}

// TestGuardSwitches: loopback opens only with AllowLoopback (the local
// server), the private, shared and benchmark spaces only with AllowPrivate
// (the deployment's switch); the rest never.
func TestGuardSwitches(t *testing.T) {
	t.Parallel()
	guards := map[string]webhooks.Guard{
		"deployed": {}, "local": local, "private switch": {AllowPrivate: true}, "both": {AllowLoopback: true, AllowPrivate: true},
	}
	opens := map[string][]string{
		webhooks.ClassLoopback:  {"local", "both"},
		webhooks.ClassPrivate:   {"private switch", "both"},
		webhooks.ClassShared:    {"private switch", "both"},
		webhooks.ClassBenchmark: {"private switch", "both"},
	}
	for _, c := range refusedAddresses {
		for name, g := range guards {
			want := c.class
			for _, o := range opens[c.class] {
				if o == name {
					want = ""
				}
			}
			for _, a := range c.addrs {
				if got := g.Refused(netip.MustParseAddr(a)); got != want {
					t.Errorf("%s guard, %s: refused %q, want %q", name, a, got, want)
				}
			}
		}
	}
}

// TestCheckURL is the check `mainguard webhook add` makes: every refused
// class as a literal, through a name that resolves to it, and in the
// numeric spellings some resolvers accept.
func TestCheckURL(t *testing.T) {
	t.Parallel()
	names := map[string][]string{
		"hooks.example.com": {"93.184.216.34", "2606:2800:220:1::1"},
		"half.example.com":  {"93.184.216.34", "fe80::1"}, // any refused address refuses the name
	}
	for _, c := range refusedAddresses {
		for _, a := range c.addrs {
			names[toName(a)] = []string{strings.Split(a, "%")[0]}
		}
	}
	g := webhooks.Guard{LookupIP: fakeDNS(names)}
	refused := func(raw, want string) {
		t.Helper()
		err := g.CheckURL(context.Background(), raw)
		if !errs.Is(err, errs.Invalid) || !strings.Contains(errs.MessageOf(err), want) {
			t.Errorf("%s: got %v, want invalid with %q", raw, err, want)
		}
	}
	for _, c := range refusedAddresses {
		for _, a := range c.addrs {
			refused("http://"+hostOf(a)+":8080/hook", "is not a public address ("+c.class+")")
			refused("https://"+toName(a)+"/hook", "not a public address ("+c.class+")")
		}
	}
	// The switch's classes say how to open them; the others do not.
	refused("http://10.0.0.5/", "WEBHOOK_INTERNAL_NETWORKS=allow")
	if err := g.CheckURL(context.Background(), "http://169.254.169.254/"); strings.Contains(err.Error(), "WEBHOOK_INTERNAL_NETWORKS") {
		t.Errorf("metadata refusal offers the switch: %v", err)
	}
	for raw, want := range map[string]string{
		"ftp://hooks.example.com/in":  "http or https",
		"file:///etc/passwd":          "http or https",
		"javascript:alert(1)":         "http or https",
		"hooks.example.com/in":        "http or https", // no scheme
		"http:///path":                "must name a host",
		"http://%zz/":                 "not a valid URL",
		"http://2852039166/":          "non-standard form", // 169.254.169.254 as one number
		"http://0xa9fea9fe/":          "non-standard form", // hex
		"http://0251.0376.0251.0376/": "non-standard form", // octal
		"http://169.254.43518/":       "non-standard form",
		"http://0x7f.1/":              "non-standard form",
		"http://017700000001/":        "non-standard form", // 127.0.0.1 in octal
		"http://0177.0.0.1/":          "non-standard form",
		"http://10.1/":                "non-standard form",
		"http://metadata.google.internal/computeMetadata/v1": "cloud metadata service",
		"http://METADATA.GOOGLE.INTERNAL./":                  "cloud metadata service",
		"http://metadata/":                                   "cloud metadata service",
		"http://half.example.com/":                           "resolves to fe80::1, not a public address (link-local)",
		"http://nowhere.invalid/":                            "does not resolve",
	} {
		refused(raw, want)
	}
	for _, raw := range []string{"https://hooks.example.com/in", "http://93.184.216.34:8080/x", "http://[2606:2800:220:1::1]/x", "http://[::ffff:93.184.216.34]/"} {
		if err := g.CheckURL(context.Background(), raw); err != nil {
			t.Errorf("%s: %v, want accepted", raw, err)
		}
	}
	// The local server's guard takes its own receivers, by address and by
	// name; a private address still needs the switch.
	lg := webhooks.Guard{AllowLoopback: true, LookupIP: g.LookupIP}
	for _, raw := range []string{"http://127.0.0.1:8080/hook", "http://[::1]:9000/x", "http://to-127-0-0-1.test:1/"} {
		if err := lg.CheckURL(context.Background(), raw); err != nil {
			t.Errorf("local server, %s: %v", raw, err)
		}
	}
	if err := lg.CheckURL(context.Background(), "http://10.0.0.5/"); !errs.Is(err, errs.Invalid) {
		t.Errorf("local server, private address: %v", err)
	}
	pg := webhooks.Guard{AllowPrivate: true, LookupIP: g.LookupIP}
	for raw, ok := range map[string]bool{"http://10.0.0.5/": true, "http://to-100-64-0-1.test/": true, "http://[fd12:3456::1]/": true,
		"http://100.100.100.200/": false, "http://[fd00:ec2::254]/": false, "http://127.0.0.1/": false} {
		if err := pg.CheckURL(context.Background(), raw); (err == nil) != ok {
			t.Errorf("private switch, %s: %v, want accepted=%v", raw, err, ok)
		}
	}
}

// TestControlRefusesAfterResolution: the dialer's check, on the address as
// the dialer hands it after resolution.
func TestControlRefusesAfterResolution(t *testing.T) {
	t.Parallel()
	for _, c := range refusedAddresses {
		for _, a := range c.addrs {
			addr := net.JoinHostPort(a, "443")
			if err := (webhooks.Guard{}).Control("tcp", addr, nil); !errors.Is(err, webhooks.ErrRefused) {
				t.Errorf("Control(%s) = %v, want refused", addr, err)
			}
		}
	}
	for _, a := range publicAddresses {
		if err := (webhooks.Guard{}).Control("tcp", net.JoinHostPort(a, "443"), nil); err != nil {
			t.Errorf("Control(%s) = %v", a, err)
		}
	}
	if err := local.Control("tcp", "127.0.0.1:8080", nil); err != nil {
		t.Errorf("local server, loopback: %v", err)
	}
	if err := local.Control("tcp", "not-an-address:80", nil); !errors.Is(err, webhooks.ErrRefused) {
		t.Errorf("a name at Control: %v", err)
	}
}

// TestSenderRefusesAtSendTime sends to refused addresses with no check at
// add time (a stored URL, or DNS that changed since): every class, through
// a name that resolves to it, is refused by the dialer, and the delivery
// log says so in the same words whatever the class.
func TestSenderRefusesAtSendTime(t *testing.T) {
	t.Parallel()
	secret := webhooks.NewSecret()
	rc := newReceiver(t, secret, always(200))
	u, _ := url.Parse(rc.srv.URL)
	names := map[string][]string{"good.test": {"127.0.0.1"}}
	var urls []string
	for _, c := range refusedAddresses {
		for _, a := range c.addrs {
			names[toName(a)] = []string{strings.Split(a, "%")[0]}
			urls = append(urls, "http://"+toName(a)+":"+u.Port()+"/", "http://"+hostOf(a)+":"+u.Port()+"/")
		}
	}
	// The deployed guard, resolving through the test's names: the receiver
	// on 127.0.0.1 is refused too, by address and by name.
	deployed := &webhooks.Sender{Client: webhooks.NewClient(webhooks.Guard{LookupIP: fakeDNS(names)})}
	for _, raw := range append(urls, rc.srv.URL, "http://good.test:"+u.Port()+"/") {
		res := deployed.Send(context.Background(), raw, []string{secret}, "evt_1", []byte(`{}`))
		if res.Delivered() || res.StatusCode != 0 || res.Err != "refused: private address" {
			t.Errorf("deployed, %s: %+v, want refused: private address", raw, res)
		}
	}
	// The system resolver's path: localhost resolves to loopback and the
	// dialer's Control refuses what it resolved to.
	sys := &webhooks.Sender{Client: webhooks.NewClient(webhooks.Guard{})}
	if res := sys.Send(context.Background(), "http://localhost:"+u.Port()+"/", []string{secret}, "evt_1", []byte(`{}`)); res.Err != "refused: private address" {
		t.Errorf("localhost, deployed: %+v", res)
	}
	if got := len(rc.received()); got != 0 {
		t.Fatalf("receiver saw %d requests through the deployed guard, want 0", got)
	}
	// The local server's guard reaches its own receiver, by address and
	// by name, and still refuses the other classes.
	localSender := &webhooks.Sender{Client: webhooks.NewClient(webhooks.Guard{AllowLoopback: true, LookupIP: fakeDNS(names)})}
	for _, raw := range []string{rc.srv.URL, "http://good.test:" + u.Port() + "/"} {
		if res := localSender.Send(context.Background(), raw, []string{secret}, "evt_1", []byte(`{}`)); !res.Delivered() {
			t.Errorf("local server, %s: %+v", raw, res)
		}
	}
	if res := localSender.Send(context.Background(), "http://"+toName("169.254.169.254")+":"+u.Port()+"/", []string{secret}, "evt_1", []byte(`{}`)); res.Err != "refused: private address" {
		t.Errorf("local server, metadata: %+v", res)
	}
	if got := len(rc.received()); got != 2 {
		t.Errorf("receiver saw %d requests, want 2", got)
	}
}

// TestSenderHidesDialErrors: a refused connection, a name that does not
// resolve and a receiver that hangs up are "connection failed" in the log,
// with none of the dial error's text.
func TestSenderHidesDialErrors(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedPort := ln.Addr().String()
	ln.Close() // nothing listens there now
	hangup, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { hangup.Close() })
	go func() {
		for {
			c, err := hangup.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	s := &webhooks.Sender{Client: webhooks.NewClient(webhooks.Guard{AllowLoopback: true, LookupIP: fakeDNS(nil)})}
	for _, raw := range []string{"http://" + closedPort + "/", "http://nowhere.test/", "http://" + hangup.Addr().String() + "/"} {
		res := s.Send(context.Background(), raw, []string{webhooks.NewSecret()}, "evt_1", []byte(`{}`))
		if res.Err != "connection failed" || res.StatusCode != 0 {
			t.Errorf("%s: %+v, want connection failed", raw, res)
		}
	}
}
