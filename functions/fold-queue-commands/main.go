// Command fold-queue-commands is the Lambda function that folds clients' merge-queue commands into their queues as the table's stream announces them.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/events"

	"github.com/mainguard/mainguard/shared/lambdafn"
	"github.com/mainguard/mainguard/shared/queuesvc"
)

func main() {
	lambdafn.EventMain(func(_ context.Context, b *lambdafn.Base) (func(context.Context, events.DynamoDBEvent) error, error) {
		d, err := queuesvc.New(queuesvc.Setup{Config: b.Config, Store: b.Store, Now: b.Now, Log: b.Log})
		if err != nil {
			return nil, err
		}
		return d.FoldStream, nil
	})
}
