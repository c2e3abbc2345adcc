// Command dynamodbfn is an aws-lambda-go function that builds a DynamoDB
// client and does nothing else: the second baseline of BenchmarkColdStart,
// the floor every function of the service stands on, since each one reads
// or writes the table. The SDK's DynamoDB package initialises its
// serialisation schemas when the process starts, whatever a function
// does, so the distance from this floor is what a function adds of its
// own. It lives under testdata so `go build ./...` skips it.
package main

import (
	"context"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func main() {
	db := dynamodb.NewFromConfig(aws.Config{
		Region:      os.Getenv("AWS_REGION"),
		Credentials: credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")),
	})
	lambda.Start(func(ctx context.Context) error { _ = db; return nil })
}
