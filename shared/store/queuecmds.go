package store

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
)

// Queue commands. A client's submit, cancel or restart is recorded as its
// own item beside the queue item, under a key no other command shares, so
// fifty clients commanding one queue write fifty items without one
// condition between them. The driver folds the pending commands into the
// snapshot in key order; the transaction that saves the snapshot marks
// each folded command with the snapshot's version (on the condition that
// it was not marked yet), so each is applied exactly once, and a later
// fold deletes the marked ones. Keys:
//
//	command PK=ORG#{org}#Q#{repo}#{branch}  SK=QUEUE#CMD#{unix ns, 19 digits}#{random}
//	        GSI1PK=MQ#COMMANDS              GSI1SK={org}#{repo}#{branch}#{SK} (until folded)
//
// The command shares the queue item's partition and sort-key prefix, so
// one Query reads the queue with its commands. A Query is not atomic
// across items: it may read the queue item before a fold's transaction and
// its commands after it. Marking rather than deleting in that transaction
// is what keeps such a read whole: a command marked with a version newer
// than the queue item read is still pending for that reader.
//
// A command's key orders it after every command its writer saw (the view
// it was checked against, and the last command the snapshot folded,
// LastCommand), so one client's commands keep their order whatever the
// clocks of the copies that record them; commands of different clients
// recorded at once are ordered by their writers' clocks.
//
// The index is the scheduler's safety net: a command whose fold was never
// triggered (a process that died, a stream record lost) is found there by
// the next tick; the mark removes it from the index.
const (
	skCommandPrefix   = skQueue + "#CMD#"
	pendingCommandsPK = "MQ#COMMANDS"
)

// Command kinds.
const (
	CommandSubmit  = "submit"
	CommandCancel  = "cancel"
	CommandRestart = "restart"
)

// QueueCommand is a client's command to a queue, as recorded.
type QueueCommand struct {
	// SK is the command's sort key, set when it is recorded (NewCommandSK).
	SK string `json:"-"`
	// QueueID is the queue incarnation it was given to: a command outliving
	// its queue is dropped, not applied to a new queue on the branch.
	QueueID  string `json:"queue_id"`
	Kind     string `json:"kind"`
	PR       int    `json:"pr"`
	Priority *int   `json:"priority,omitempty"`
	NoBatch  *bool  `json:"no_batch,omitempty"`
	// EntryID is the id a submit gives the PR's entry if the queue has
	// none for it when the command is folded.
	EntryID string    `json:"entry_id,omitempty"`
	At      time.Time `json:"at"`
	// FoldedIn is the version of the snapshot that folded the command, 0
	// while it is pending.
	FoldedIn int64 `json:"-"`
}

// Pending reports whether c is still to be applied to a snapshot at
// version: not folded, or folded into a later snapshot than that one.
func (c QueueCommand) Pending(version int64) bool { return c.FoldedIn == 0 || c.FoldedIn > version }

// NewCommandSK is the sort key of a command recorded at now after every
// key in seen: in time order, unique by its random tail.
func NewCommandSK(now time.Time, seen ...string) string {
	at := now.UnixNano()
	for _, sk := range seen {
		if t, ok := commandTime(sk); ok && t >= at {
			at = t + 1
		}
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s%019d#%s", skCommandPrefix, at, hex.EncodeToString(b[:]))
}

// commandTime is the time in a command's key, in unix nanoseconds.
func commandTime(sk string) (int64, bool) {
	rest, ok := strings.CutPrefix(sk, skCommandPrefix)
	if !ok || len(rest) < 19 {
		return 0, false
	}
	t, err := strconv.ParseInt(rest[:19], 10, 64)
	return t, err == nil
}

// PutQueueCommand records c for queue k. It never conflicts with another
// command: its key is its own.
func (s *Store) PutQueueCommand(ctx context.Context, k QueueKey, c QueueCommand) error {
	blob, err := json.Marshal(c)
	if err != nil {
		return errs.Wrap(errs.Internal, err, "store failure")
	}
	item := key(k.pk(), c.SK)
	item[attrCommand] = str(string(blob))
	setQueueKey(item, k)
	item[AttrGSI1PK] = str(pendingCommandsPK)
	item[AttrGSI1SK] = str(k.sortKey() + "#" + c.SK)
	return s.putItem(ctx, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String("attribute_not_exists(" + AttrSK + ")")})
}

// QueueWithCommands reads queue k and its pending commands, oldest first:
// one consistent Query (more pages only when the commands pass 1 MB).
// errs.NotFound when there is no queue; its commands are then returned
// all the same, for the driver to drop.
func (s *Store) QueueWithCommands(ctx context.Context, k QueueKey) (QueueRecord, []QueueCommand, error) {
	var (
		rec   QueueRecord
		found bool
		cmds  []QueueCommand
	)
	err := s.queryEach(ctx, &dynamodb.QueryInput{
		KeyConditionExpression:    aws.String(pkIs + " AND begins_with(" + AttrSK + ", :q)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(k.pk()), ":q": str(skQueue)},
		ConsistentRead:            aws.Bool(true),
	}, func(item map[string]types.AttributeValue) error {
		sk := strAttr(item[AttrSK])
		if sk == skQueue {
			r, err := readQueue(item)
			rec, found = r, true
			return err
		}
		if !strings.HasPrefix(sk, skCommandPrefix) {
			return nil
		}
		c, err := readCommand(item)
		cmds = append(cmds, c)
		return err
	})
	if err != nil {
		return QueueRecord{}, nil, err
	}
	if !found {
		return QueueRecord{}, cmds, errs.E(errs.NotFound, "no queue for branch %s of %s", k.Branch, k.Repo)
	}
	return rec, cmds, nil
}

func readCommand(item map[string]types.AttributeValue) (QueueCommand, error) {
	var c QueueCommand
	if err := json.Unmarshal([]byte(strAttr(item[attrCommand])), &c); err != nil {
		return c, errs.Wrap(errs.Internal, err, "store failure: queue command")
	}
	c.SK = strAttr(item[AttrSK])
	if v, ok := item[attrFoldedIn].(*types.AttributeValueMemberN); ok {
		c.FoldedIn, _ = strconv.ParseInt(v.Value, 10, 64)
	}
	return c, nil
}

// DropQueueCommands deletes commands that are done: folded into a saved
// snapshot, or of a queue that is gone. Absent ones are fine.
func (s *Store) DropQueueCommands(ctx context.Context, k QueueKey, cmds []QueueCommand) error {
	reqs := make([]types.WriteRequest, len(cmds))
	for i, c := range cmds {
		reqs[i] = types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: key(k.pk(), c.SK)}}
	}
	return s.writeAll(ctx, reqs)
}

// commandMarks are the transaction actions that fold cmds into the
// snapshot at version: each must not be folded yet, so a second driver
// folding the same commands fails.
func commandMarks(k QueueKey, cmds []QueueCommand, version int64) []types.TransactWriteItem {
	out := make([]types.TransactWriteItem, 0, len(cmds))
	for _, c := range cmds {
		out = append(out, types.TransactWriteItem{Update: &types.Update{
			Key:                       key(k.pk(), c.SK),
			UpdateExpression:          aws.String("SET " + attrFoldedIn + " = :v REMOVE " + AttrGSI1PK + ", " + AttrGSI1SK),
			ConditionExpression:       aws.String("attribute_exists(" + AttrSK + ") AND attribute_not_exists(" + attrFoldedIn + ")"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":v": num64(version)},
		}})
	}
	return out
}

// QueuesWithCommands lists up to limit queues that have pending commands,
// oldest command first: one Query on GSI1.
func (s *Store) QueuesWithCommands(ctx context.Context, limit int32) ([]QueueKey, error) {
	out, err := s.query(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(IndexGSI1),
		KeyConditionExpression:    aws.String(gsi1PKIs),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(pendingCommandsPK)},
		Limit:                     aws.Int32(limit),
	})
	if err != nil {
		return nil, err
	}
	var ks []QueueKey
	seen := map[string]bool{}
	for _, item := range out.Items {
		k := queueKeyOf(stringsOf(item))
		if !seen[k.String()] {
			seen[k.String()] = true
			ks = append(ks, k)
		}
	}
	return ks, nil
}
