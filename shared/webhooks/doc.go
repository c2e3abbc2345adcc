// Package webhooks owns outbound event delivery (contract 4): endpoint
// secrets and Svix-compatible signing, the guard against server-side request
// forgery, the HTTP sender, the retry schedule, and the Deliverer that drains
// an organization's outbox into its endpoints with every bit of state in the
// store.
//
// # Server-side request forgery
//
// An endpoint URL is chosen by a tenant and fetched by us, so it must not
// reach what only we can reach. Guard.CheckURL runs when an endpoint is
// added (http or https, a host, and neither the host nor any address it
// resolves to is refused); the Sender's dialer checks again after
// resolution (Guard.Control), on the address actually dialled, so a name
// that resolves differently later (DNS rebinding) gets nowhere. Redirects
// are not followed and no proxy is used, since either would dial an
// address we did not check.
//
// Class sorts addresses by IANA's special-purpose registries; IPv4
// addresses written in IPv6 (IPv4-mapped, IPv4-compatible, NAT64, 6to4)
// are classed by the IPv4 address, and numeric hosts in non-standard
// forms (2852039166, 0xa9fea9fe) are refused outright. Only public
// addresses are reached by default. Two switches open more: AllowLoopback
// for the local server, whose receivers are its own (webhook listen, the
// tests), and AllowPrivate, the deployment's WEBHOOK_INTERNAL_NETWORKS, for
// teams whose receivers live on their own network (private, shared and
// benchmark space). Link-local, unspecified, multicast, reserved and the
// clouds' metadata addresses are refused whatever the switches: nothing a
// tenant may post to lives there, and metadata services hand out the
// function's credentials.
//
// The delivery log, which the tenant reads, says "refused: private
// address" or "connection failed", never the dial error: which addresses
// refuse, time out or answer is a map of our network.
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
