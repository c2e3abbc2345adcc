// Command deliver-webhooks is the Lambda function the table's stream runs
// when an outbox event is written: it delivers that organization's webhooks.
package main

import (
	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/wiring/delivery"
)

func main() { lambdafn.EventMain(delivery.DeliverWebhooks) }
