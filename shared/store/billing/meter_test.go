package billing_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/store"
	"github.com/mainguard/mainguard/shared/store/billing"
	"github.com/mainguard/mainguard/shared/store/storetest"
)

func TestMain(m *testing.M) { os.Exit(storetest.Main(m)) }

// TestMeterBillsWhatAWSWould: calls made through the meter against
// DynamoDB Local are billed by the rules, index copies and transactions
// included, where DynamoDB Local's own figure counts neither.
func TestMeterBillsWhatAWSWould(t *testing.T) {
	db, table := storetest.NewTable(t)
	m := billing.NewMeter(db, store.TableSpec(table))
	ctx := context.Background()
	pad := strings.Repeat("x", 1500) // items of about 1.5 KB: 2 write units
	item := func(pk string, indexed bool) map[string]types.AttributeValue {
		it := map[string]types.AttributeValue{"PK": s(pk), "SK": s("A"), "pad": s(pad)}
		if indexed {
			it["GSI1PK"], it["GSI1SK"] = s("G"), s(pk)
		}
		return it
	}
	step := func(name string, want billing.Line, call func() error) {
		t.Helper()
		before := m.Bill.Total()
		if err := call(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		got := m.Bill.Total()
		got = billing.Line{Calls: got.Calls - before.Calls, Read: got.Read - before.Read, Write: got.Write - before.Write, IndexWrite: got.IndexWrite - before.IndexWrite}
		if got != want {
			t.Errorf("%s: billed %v, want %v", name, got, want)
		}
	}
	step("put of an unindexed 1.5 KB item", billing.Line{Calls: 1, Write: 2}, func() error {
		_, err := m.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item("a", false)})
		return err
	})
	step("put of an indexed one: its ALL-projected copy too", billing.Line{Calls: 1, Write: 2, IndexWrite: 2}, func() error {
		_, err := m.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item("b", true)})
		return err
	})
	step("update of a non-key attribute of the indexed item", billing.Line{Calls: 1, Write: 2, IndexWrite: 2}, func() error {
		_, err := m.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: &table, Key: map[string]types.AttributeValue{"PK": s("b"), "SK": s("A")},
			UpdateExpression: aws.String("SET n = :n"), ExpressionAttributeValues: map[string]types.AttributeValue{":n": &types.AttributeValueMemberN{Value: "1"}}})
		return err
	})
	step("a refused conditional put is billed", billing.Line{Calls: 1, Write: 2}, func() error {
		_, err := m.PutItem(ctx, &dynamodb.PutItemInput{TableName: &table, Item: item("a", false), ConditionExpression: aws.String("attribute_not_exists(PK)")})
		var cond *types.ConditionalCheckFailedException
		if err == nil || !errors.As(err, &cond) {
			return err
		}
		return nil
	})
	step("a transaction of two: each item twice", billing.Line{Calls: 1, Write: 8}, func() error {
		_, err := m.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
			{Put: &types.Put{TableName: &table, Item: item("c", false)}},
			{Put: &types.Put{TableName: &table, Item: item("d", false)}},
		}})
		return err
	})
	step("a consistent get of a 1.5 KB item, and of a missing one", billing.Line{Calls: 2, Read: 2}, func() error {
		for _, pk := range []string{"a", "nothing"} {
			if _, err := m.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: map[string]types.AttributeValue{"PK": s(pk), "SK": s("A")}, ConsistentRead: aws.Bool(true)}); err != nil {
				return err
			}
		}
		return nil
	})
	step("a query of the index: eventually consistent", billing.Line{Calls: 1, Read: 0.5}, func() error {
		_, err := m.Query(ctx, &dynamodb.QueryInput{TableName: &table, IndexName: aws.String(store.IndexGSI1),
			KeyConditionExpression: aws.String("GSI1PK = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("G")}})
		return err
	})
}
