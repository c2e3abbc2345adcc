package webhooks_test

import (
	"context"
	"errors"
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

var dns = fakeDNS(map[string][]string{
	"hooks.example.com":  {"93.184.216.34", "2606:2800:220:1::1"},
	"metadata.internal":  {"169.254.169.254"},
	"half.example.com":   {"93.184.216.34", "fe80::1"},
	"imds6.example.com":  {"fd00:ec2::254"},
	"localhost.test":     {"127.0.0.1"},
	"internal.corp.test": {"10.1.2.3"},
})

func TestCheckURL(t *testing.T) {
	t.Parallel()
	g := webhooks.Guard{LookupIP: dns}
	cases := []struct {
		url string
		ok  bool
	}{
		{"https://hooks.example.com/in", true},
		{"http://127.0.0.1:8080/hook", true}, // loopback allowed: self-hosted and tests
		{"http://10.0.0.5/hook", true},       // private ranges allowed
		{"http://localhost.test/x", true},
		{"http://internal.corp.test/x", true},
		{"http://[::1]:9000/x", true},
		{"ftp://hooks.example.com/in", false},
		{"file:///etc/passwd", false},
		{"javascript:alert(1)", false},
		{"hooks.example.com/in", false}, // no scheme
		{"http:///path", false},         // no host
		{"http://169.254.169.254/latest/meta-data/", false},
		{"http://169.254.1.1:8080/", false},
		{"http://[fd00:ec2::254]/latest/meta-data/", false},
		{"http://[fe80::1]/", false},
		{"http://[fe80::1%25eth0]/", false},
		{"http://[::ffff:169.254.169.254]/", false}, // IPv4-mapped
		{"http://[::ffff:a9fe:a9fe]/", false},       // the same, in hex
		{"http://[64:ff9b::a9fe:a9fe]/", false},     // NAT64
		{"http://2852039166/", false},               // 169.254.169.254 as one number
		{"http://0xa9fea9fe/", false},
		{"http://0251.0376.0251.0376/", false}, // octal
		{"http://169.254.43518/", false},
		{"http://metadata.internal/computeMetadata/v1/", false}, // name resolving to link-local
		{"http://imds6.example.com/", false},
		{"http://half.example.com/", false}, // any refused address refuses the name
		{"http://nowhere.invalid/", false},  // does not resolve
		{"http://%zz/", false},
	}
	for _, c := range cases {
		err := g.CheckURL(context.Background(), c.url)
		if c.ok && err != nil {
			t.Errorf("%s: got %v, want accepted", c.url, err)
		}
		if !c.ok && !errs.Is(err, errs.Invalid) {
			t.Errorf("%s: got %v, want invalid", c.url, err)
		}
	}
	// The package function uses the system resolver; IP literals need none.
	if err := webhooks.CheckURL("http://169.254.169.254/"); !errs.Is(err, errs.Invalid) {
		t.Errorf("CheckURL metadata: %v", err)
	}
	if err := webhooks.CheckURL("http://127.0.0.1:1/"); err != nil {
		t.Errorf("CheckURL loopback: %v", err)
	}
}

func TestControlRefusesAfterResolution(t *testing.T) {
	t.Parallel()
	g := webhooks.Guard{}
	cases := map[string]bool{ // address as the dialer hands it → refused
		"169.254.169.254:80":          true,
		"[fd00:ec2::254]:80":          true,
		"[fe80::1%eth0]:443":          true,
		"[::ffff:169.254.169.254]:80": true,
		"127.0.0.1:8080":              false,
		"10.0.0.1:443":                false,
		"[::1]:80":                    false,
		"[fd00:ec2::253]:80":          false,
	}
	for addr, refused := range cases {
		if err := g.Control("tcp", addr, nil); (err != nil) != refused {
			t.Errorf("Control(%s) = %v, want refused=%v", addr, err, refused)
		}
	}
}

// TestSenderRefusesAtSendTime sends to refused addresses with no check at
// add time (a stored URL, or DNS that changed since): the dialer refuses.
func TestSenderRefusesAtSendTime(t *testing.T) {
	t.Parallel()
	secret := webhooks.NewSecret()
	rc := newReceiver(t, secret, always(200))
	u, _ := url.Parse(rc.srv.URL)
	rebinding := fakeDNS(map[string][]string{
		"rebind.test": {"169.254.169.254"},
		"good.test":   {"127.0.0.1"},
	})
	s := &webhooks.Sender{Client: webhooks.NewClient(webhooks.Guard{LookupIP: rebinding})}
	cases := []struct {
		url       string
		delivered bool
	}{
		{"http://169.254.169.254/latest/meta-data/", false},
		{"http://[fd00:ec2::254]/latest/meta-data/", false},
		{"http://[::ffff:169.254.169.254]/", false},
		{"http://rebind.test:" + u.Port() + "/", false},
		{"http://good.test:" + u.Port() + "/", true}, // the hook is what resolved it
		{rc.srv.URL, true},
	}
	for _, c := range cases {
		res := s.Send(context.Background(), c.url, []string{secret}, "evt_1", []byte(`{}`))
		if res.Delivered() != c.delivered {
			t.Errorf("%s: %+v, want delivered=%v", c.url, res, c.delivered)
		}
		if !c.delivered && (res.StatusCode != 0 || !strings.HasPrefix(res.Err, "refused")) {
			t.Errorf("%s: %+v, want refused without a status", c.url, res)
		}
	}
	if got := len(rc.received()); got != 2 {
		t.Errorf("receiver saw %d requests, want 2", got)
	}
}
