// Package app builds the service from its configuration: the DynamoDB
// client, the store, the middleware and the route table that names every
// endpoint and its function. Lambda mains, the local server and end-to-end
// tests all build it here, so what is tested is what ships.
package app
