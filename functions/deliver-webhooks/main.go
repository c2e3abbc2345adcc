// Command deliver-webhooks is the Lambda function the table's stream runs
// when an outbox event is written: it delivers that organization's webhooks.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/webhooks"
)

func main() {
	lambdafn.EventMain(func(_ context.Context, b *lambdafn.Base) (func(context.Context, events.DynamoDBEvent) error, error) {
		return webhooks.NewDeliverer(b.Store, b.Now, b.Log, webhooks.Guard{AllowPrivate: b.Config.WebhookInternalNetworks}).DeliverStream, nil
	})
}
