// Package billing computes what DynamoDB bills, in on-demand request units,
// for each call the store makes. It exists because DynamoDB Local's
// ReturnConsumedCapacity figure is too low to plan costs with: it counts a
// transaction once rather than per item and phase, and leaves out the writes
// that copy an item into its indexes. Here the units are derived from the
// items' sizes by the rules AWS publishes, so a test against DynamoDB Local
// can tell a team what the same calls will cost in production.
//
// The package is pure: it looks at items and returns numbers; it never calls
// DynamoDB.
//
// Sources (AWS documentation, read for these rules; the tests name the
// worked example of each page they check):
//
//   - Item sizes (names, strings, numbers, binaries, booleans, nulls, lists,
//     maps): https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
//   - Units per call (4 KB read and 1 KB write blocks, eventual consistency at
//     half price, BatchGetItem and BatchWriteItem per item, Query and Scan
//     over the sum, missing items, failed conditions):
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/read-write-operations.html
//   - On-demand request units, transactional reads and writes at double price:
//     https://aws.amazon.com/dynamodb/pricing/on-demand/ and
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/HowItWorks.ReadWriteCapacityMode.html
//   - Transactions touch every item twice (prepare, commit):
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-capacity-handling
//   - Index writes (put, delete, key move, projected change), index entry
//     size, eventually consistent index queries:
//     https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/GSI.html#GSI.ThroughputConsiderations
//     and https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/LSI.html#LSI.ThroughputConsiderations
//
// Where the documentation is silent or loose, the choice made is written next
// to the code that makes it.
package billing
