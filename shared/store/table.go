package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The table's indexes; their key attributes are in doc.go's table.
// template.yaml declares the same (a test compares them), so the deployed
// table, the local server and the tests agree.
const (
	IndexGSI1 = "GSI1"
	IndexGSI2 = "GSI2"
)

// TableSpec is the one definition of the table: keys, indexes, billing.
func TableSpec(name string) *dynamodb.CreateTableInput {
	s := types.ScalarAttributeTypeS
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String(AttrPK), AttributeType: s},
			{AttributeName: aws.String(AttrSK), AttributeType: s},
			{AttributeName: aws.String(AttrGSI1PK), AttributeType: s},
			{AttributeName: aws.String(AttrGSI1SK), AttributeType: s},
			{AttributeName: aws.String(AttrGSI2PK), AttributeType: s},
			{AttributeName: aws.String(AttrGSI2SK), AttributeType: s},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(AttrPK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(AttrSK), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			gsi(IndexGSI1, AttrGSI1PK, AttrGSI1SK),
			gsi(IndexGSI2, AttrGSI2PK, AttrGSI2SK),
		},
	}
}

// gsi is an index with all attributes projected: list reads return whole
// items and need no second read.
func gsi(name, pk, sk string) types.GlobalSecondaryIndex {
	return types.GlobalSecondaryIndex{
		IndexName: aws.String(name),
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		},
		Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
	}
}

// TableAdmin is what creating the table needs of the client.
type TableAdmin interface {
	CreateTable(ctx context.Context, in *dynamodb.CreateTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.CreateTableOutput, error)
	DescribeTable(ctx context.Context, in *dynamodb.DescribeTableInput, opts ...func(*dynamodb.Options)) (*dynamodb.DescribeTableOutput, error)
	UpdateTimeToLive(ctx context.Context, in *dynamodb.UpdateTimeToLiveInput, opts ...func(*dynamodb.Options)) (*dynamodb.UpdateTimeToLiveOutput, error)
}

var _ TableAdmin = (*dynamodb.Client)(nil)

// EnsureTable creates the table when it is missing, waits until it is
// active and turns on its TTL. It reports whether it created the table.
// Deployed, CloudFormation owns the table; this is for the local server,
// the administration program against DynamoDB Local, and tests.
func EnsureTable(ctx context.Context, db TableAdmin, name string) (bool, error) {
	_, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: &name})
	if err == nil {
		return false, nil
	}
	var nf *types.ResourceNotFoundException
	if !errors.As(err, &nf) {
		return false, fmt.Errorf("describe table %s: %w", name, err)
	}
	if _, err := db.CreateTable(ctx, TableSpec(name)); err != nil {
		var inUse *types.ResourceInUseException
		if !errors.As(err, &inUse) { // someone else created it meanwhile
			return false, fmt.Errorf("create table %s: %w", name, err)
		}
	}
	w := dynamodb.NewTableExistsWaiter(db, func(o *dynamodb.TableExistsWaiterOptions) { o.MinDelay = 100 * time.Millisecond })
	if err := w.Wait(ctx, &dynamodb.DescribeTableInput{TableName: &name}, 2*time.Minute); err != nil {
		return false, fmt.Errorf("wait for table %s: %w", name, err)
	}
	_, err = db.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{
		TableName:               &name,
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String(AttrTTL), Enabled: aws.Bool(true)},
	})
	if err != nil {
		return true, fmt.Errorf("enable ttl on %s: %w", name, err)
	}
	return true, nil
}
