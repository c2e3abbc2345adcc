// Package webhooks owns outbound event delivery (contract 4): endpoint
// secrets and Svix-compatible signing, the guard against server-side request
// forgery, the HTTP sender, the retry schedule, and the Deliverer that drains
// an organization's outbox into its endpoints with every bit of state in the
// store.
//
// # Server-side request forgery
//
// An endpoint URL is chosen by a tenant and fetched by us, so it must not
// reach what only we can reach. CheckURL runs when an endpoint is added
// (http or https, a host, and neither the host nor any address it resolves
// to is link-local or a cloud metadata address); the Sender's dialer checks
// again after resolution, on the address actually dialled, so a name that
// resolves differently later (DNS rebinding) gets nowhere. The refused
// ranges are 169.254.0.0/16, fe80::/10 and fd00:ec2::254, also written as
// IPv4-mapped, IPv4-compatible or NAT64 IPv6 addresses, and numeric hosts in
// non-standard forms (2852039166, 0xa9fea9fe). Redirects are not followed
// and no proxy is used, since either would dial an address we did not check.
//
// Loopback and private ranges (127.0.0.0/8, 10/8, 172.16/12, 192.168/16,
// fc00::/7 but the metadata address) are allowed on purpose: self-hosted
// deployments post to services on their own network, and the tests post to
// 127.0.0.1. A multi-tenant deployment that must keep tenants out of its
// private network needs a network policy in front of the function as well.
//
// # Delivery
//
// At least once: an event is in the outbox from the transaction that caused
// it until every subscribed endpoint that existed when it happened (one
// added later never receives it, as with Svix) has acknowledged it (2xx) or been given
// up on after eight attempts (immediately, then 5 s, 5 min, 30 min, 2 h,
// 5 h, 10 h and 10 h after each failure). Every attempt carries the event
// id as webhook-id. An answer of 410 Gone is a failed attempt like any other
// non-2xx: contract 4 retries "on non-2xx" and says nothing of disabling
// endpoints, so the endpoint stays and retries continue.
package webhooks
