package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
	"github.com/mainguard/mainguard/shared/mergequeue"
	"github.com/mainguard/mainguard/shared/repository"
)

// Merge-queue items (contract 3). A queue is one item holding its engine
// snapshot (gzipped JSON: a busy queue's snapshot runs to hundreds of KB of
// JSON, far less compressed), conditionally written on its version. Its
// entries and runs are kept beside it as their own items, so that a PR
// stays readable after the snapshot pruned it and a run's details after it
// ended. Keys:
//
//	queue      PK=ORG#{org}#Q#{repo}#{branch}           SK=QUEUE
//	           GSI1PK=MQ#ACTIVE (only while active)     GSI1SK={org}#{repo}#{branch}
//	           GSI2PK=MQREPO#{owner/name, lower}        GSI2SK={org}#{repo}#{branch}
//	entry      PK=ORG#{org}#Q#{repo}#{branch}#{queueID} SK=PR#{number, 10 digits}
//	           GSI2PK={entry PK}#HEAD#{head ref}        GSI2SK={number, 10 digits}
//	run        PK=ORG#{org}#MQRUN#{run id}              SK=RUN
//	targets    PK={entry PK}#TARGETS#{pr}#{sha}         SK=HEAD, CHUNK#{n}
//	delivery   PK=GHDELIVERY#{id}                       SK=DELIVERY, ttl 3 days
//	command    PK=GHCOMMAND#{repo}#{what}#{id}#{at}     SK=COMMAND, ttl 3 days (a comment command handled)
//	cursor     PK=MQ#SCHEDULER                          SK=CURSOR
//	pr comment PK=ORG#{org}#Q#{repo}#{branch}           SK=PRCOMMENT#{number, 10 digits} (prcomment.go)
//	transition PK={entry PK}#TRANS                      SK={sortable time}#{seq, 20 digits}, ttl 2 hours
//	timeline   PK={entry PK}                            SK=TL#{number, 10 digits}#{seq, 20 digits}, ttl 90 days
//	run hist.  PK={entry PK}                            SK=RH#{run start, sortable}#{run id}, ttl 90 days
//
// Transition items feed GET /getMergeQueueMetrics (contract 3.9): the
// snapshot keeps only the last 200 transitions, which a busy queue passes
// within the hour, so each transition is also its own item, and the last
// hour of a queue is one Query. A conclusion's item carries its episode's
// first PENDING and TESTING times and time in TESTING, which may be older
// than the hour: the queue item keeps them per active entry (Clocks),
// folded forward by Advance with each save.
//
// Timeline items are a PR's own transitions, for its page (the
// http_details_url) once the snapshot and the transition items no longer
// hold them: one Query of the entry's partition. They are written after
// the save, with BatchWriteItem (a write unit each, not a transaction's
// two); one lost to a crash between is still in the snapshot's last 200,
// which the page merges. Run history items (ours) are the same for each
// run that ended (mergequeue.HistoryRunOf: under 1 KB, one write unit):
// with the timeline items they make the queue's history
// (QueueHistory, getQueueHistory), one Query each, page by page.
//
// The active-queue index and the repository index are the two partitions
// not under ORG#: the scheduler and GitHub's webhooks know no organization.
const (
	skQueue          = "QUEUE"
	activeQueuesPK   = "MQ#ACTIVE"
	schedulerPK      = "MQ#SCHEDULER"
	deliveryTTL      = 3 * 24 * time.Hour
	targetsChunkSize = 300 << 10 // compressed bytes per item, under the 400 KB item limit
)

// QueueKey names a queue: the organization, the repository and the target
// branch.
type QueueKey struct {
	Org    string
	Repo   repository.Ref
	Branch string
}

func (k QueueKey) pk() string { return orgPK(k.Org) + "#Q#" + k.Repo.Key() + "#" + k.Branch }

func (k QueueKey) sortKey() string { return k.Org + "#" + k.Repo.Key() + "#" + k.Branch }

// String names the queue in logs: org#host/owner/name#branch.
func (k QueueKey) String() string { return k.sortKey() }

func repoIndexPK(owner, name string) string {
	return "MQREPO#" + strings.ToLower(owner) + "/" + strings.ToLower(name)
}

// QueueRecord is a stored queue.
type QueueRecord struct {
	Key QueueKey
	// ID names this incarnation of the queue: entries of a deleted queue
	// are not those of a new one on the same branch.
	ID        string
	CreatedAt time.Time
	Snapshot  mergequeue.Snapshot
	// Clocks are the metrics' memory of each active entry's episode, by
	// entry id (see Advance); absent for entries that never moved since
	// they were recorded.
	Clocks map[string]mergequeue.EpisodeClock
	// LastCommand is the key of the last client command folded into the
	// snapshot: a new command sorts after it (NewCommandSK).
	LastCommand string
}

// Active reports whether the scheduler must visit the queue
// (mergequeue.Snapshot.Active).
func (r QueueRecord) Active() bool { return r.Snapshot.Active() }

func encodeSnapshot(s mergequeue.Snapshot) ([]byte, error) { return gzipJSON(s) }

func decodeSnapshot(b []byte, s *mergequeue.Snapshot) error {
	if err := gunzipJSON(b, s); err != nil {
		return errs.Wrap(errs.Internal, err, "store failure: queue snapshot")
	}
	return nil
}

// gzip's compressor holds about 800 KB of tables and its decompressor
// tens of KB: made afresh for every snapshot written or read, they were
// most of a queue write's allocation. A Lambda copy serves one request at
// a time, so the pools keep one of each warm.
var (
	gzipWriters sync.Pool // *gzip.Writer
	gzipReaders sync.Pool // *gzip.Reader
)

// gzipJSON is v as gzipped JSON.
func gzipJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	zw, _ := gzipWriters.Get().(*gzip.Writer)
	if zw == nil {
		zw = gzip.NewWriter(&buf)
	} else {
		zw.Reset(&buf)
	}
	if err := json.NewEncoder(zw).Encode(v); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "store failure")
	}
	if err := zw.Close(); err != nil {
		return nil, errs.Wrap(errs.Internal, err, "store failure")
	}
	gzipWriters.Put(zw)
	return buf.Bytes(), nil
}

// gunzipJSON decodes gzipped JSON b into v.
func gunzipJSON(b []byte, v any) error {
	zr, _ := gzipReaders.Get().(*gzip.Reader)
	var err error
	if zr == nil {
		zr, err = gzip.NewReader(bytes.NewReader(b))
	} else {
		err = zr.Reset(bytes.NewReader(b))
	}
	if err != nil {
		return err
	}
	if err := json.NewDecoder(zr).Decode(v); err != nil {
		return err
	}
	// On to the end of the stream, where gzip checks its checksum.
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return err
	}
	gzipReaders.Put(zr)
	return nil
}

func queueItem(r QueueRecord) (map[string]types.AttributeValue, error) {
	snap, err := encodeSnapshot(r.Snapshot)
	if err != nil {
		return nil, err
	}
	item := key(r.Key.pk(), skQueue)
	setQueueKey(item, r.Key)
	item[attrQueueID] = str(r.ID)
	item[attrCreatedAt] = str(r.CreatedAt.UTC().Format(time.RFC3339Nano))
	item[attrVersion] = num64(r.Snapshot.Version)
	item[attrSnapshot] = &types.AttributeValueMemberB{Value: snap}
	if len(r.Clocks) > 0 {
		clocks, err := json.Marshal(r.Clocks)
		if err != nil {
			return nil, errs.Wrap(errs.Internal, err, "store failure")
		}
		item[attrClocks] = str(string(clocks))
	}
	if r.LastCommand != "" {
		item[attrLastCmd] = str(r.LastCommand)
	}
	item[AttrGSI2PK] = str(repoIndexPK(r.Key.Repo.Owner, r.Key.Repo.Name))
	item[AttrGSI2SK] = str(r.Key.sortKey())
	if r.Active() {
		item[AttrGSI1PK] = str(activeQueuesPK)
		item[AttrGSI1SK] = str(r.Key.sortKey())
	}
	return item, nil
}

// setQueueKey writes the parts of k on item: the queue item and its
// commands carry them, for readers that know only the item (the active
// index, the stream, the pending-commands index).
func setQueueKey(item map[string]types.AttributeValue, k QueueKey) {
	item[attrOrg] = str(k.Org)
	item[attrHost], item[attrOwner], item[attrName] = str(k.Repo.Host), str(k.Repo.Owner), str(k.Repo.Name)
	item[attrBranch] = str(k.Branch)
}

// queueKeyOf reads back what setQueueKey wrote; get is an attribute's
// string value ("" when absent).
func queueKeyOf(get func(name string) string) QueueKey {
	return QueueKey{Org: get(attrOrg), Repo: repository.Ref{Host: get(attrHost), Owner: get(attrOwner), Name: get(attrName)}, Branch: get(attrBranch)}
}

// stringsOf is get for queueKeyOf over an item.
func stringsOf(item map[string]types.AttributeValue) func(string) string {
	return func(n string) string { return strAttr(item[n]) }
}

func readQueue(item map[string]types.AttributeValue) (QueueRecord, error) {
	s := stringsOf(item)
	r := QueueRecord{Key: queueKeyOf(s), ID: s(attrQueueID), LastCommand: s(attrLastCmd)}
	r.CreatedAt, _ = time.Parse(time.RFC3339Nano, s(attrCreatedAt))
	b, ok := item[attrSnapshot].(*types.AttributeValueMemberB)
	if !ok {
		return QueueRecord{}, errs.E(errs.Internal, "store failure: queue item without a snapshot")
	}
	if err := decodeSnapshot(b.Value, &r.Snapshot); err != nil {
		return QueueRecord{}, err
	}
	if c := s(attrClocks); c != "" {
		if err := json.Unmarshal([]byte(c), &r.Clocks); err != nil {
			return QueueRecord{}, errs.Wrap(errs.Internal, err, "store failure: queue clocks")
		}
	}
	return r, nil
}

// CreateQueue stores a new queue; errs.Conflict when the branch has one.
func (s *Store) CreateQueue(ctx context.Context, r QueueRecord) error {
	item, err := queueItem(r)
	if err != nil {
		return err
	}
	err = s.putItem(ctx, &dynamodb.PutItemInput{Item: item, ConditionExpression: aws.String(ifItemAbsent)})
	if errs.Is(err, errs.Conflict) {
		return errs.Wrap(errs.Conflict, err, "a queue already exists for branch %s of %s", r.Key.Branch, r.Key.Repo)
	}
	return err
}

// GetQueue reads a queue: one GetItem. errs.NotFound when there is none.
func (s *Store) GetQueue(ctx context.Context, k QueueKey) (QueueRecord, error) {
	item, err := s.getItem(ctx, key(k.pk(), skQueue))
	if err != nil {
		return QueueRecord{}, err
	}
	if item == nil {
		return QueueRecord{}, errs.E(errs.NotFound, "no queue for branch %s of %s", k.Branch, k.Repo)
	}
	return readQueue(item)
}

// snapshotEntry is PR n's entry in the queue's snapshot, if it holds it.
func (r QueueRecord) snapshotEntry(n int) (mergequeue.Entry, bool) {
	for _, e := range r.Snapshot.Entries {
		if e.PRNumber == n {
			return e, true
		}
	}
	return mergequeue.Entry{}, false
}

// overlay puts the snapshot's entry of the same PR, when it holds one, in
// place of a stored entry: the snapshot is the record, and entry items are
// derived copies that may follow it in later writes (SaveQueue), so the
// snapshot's is the freshest.
func (r QueueRecord) overlay(e EntryRecord) EntryRecord {
	if fresh, ok := r.snapshotEntry(e.Entry.PRNumber); ok {
		e.Entry = fresh
	}
	return e
}

// EntryRecord is a stored queue entry: the engine's entry as last saved,
// and the PR's head branch when it was observed.
type EntryRecord struct {
	Entry   mergequeue.Entry `json:"entry"`
	HeadRef string           `json:"head_ref,omitempty"`
}

// RunRecordMQ is a stored test run with what the driver last saw of its
// checks (names, states and links, for the testing details).
type RunRecordMQ struct {
	Key    QueueKey          `json:"-"`
	Run    mergequeue.Run    `json:"run"`
	Checks []RunCheck        `json:"checks,omitempty"`
	Extra  map[string]string `json:"extra,omitempty"`
}

// RunCheck is one status or check run seen on a run's test branch head.
type RunCheck struct {
	Kind       string `json:"kind"` // status or check_run
	Name       string `json:"name"`
	State      string `json:"state,omitempty"`
	Status     string `json:"status,omitempty"`
	Conclusion string `json:"conclusion,omitempty"`
	URL        string `json:"url,omitempty"`
}

// QueueChanges are the items a queue save writes with the snapshot.
type QueueChanges struct {
	Events  []Event
	Entries []mergequeue.Entry
	// HeadRefs are the head branches of PRs, by number, as observed.
	HeadRefs map[int]string
	Runs     []RunRecordMQ
	// Transitions are written as transition items (see Advance), after
	// the entries and runs: within the transaction when it has room, else
	// right after it.
	Transitions []mergequeue.TransitionRecord
	// Folded are the pending commands this save applied: marked in its
	// transaction, so that each is applied once (at most MaxFold of them).
	Folded []QueueCommand
}

func entryPK(k QueueKey, queueID string) string { return k.pk() + "#" + queueID }

func prSK(n int) string { return fmt.Sprintf("PR#%010d", n) }

func (s *Store) entryUpdate(k QueueKey, queueID string, e mergequeue.Entry, headRef string) (*types.Update, error) {
	blob, err := json.Marshal(e)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "store failure")
	}
	set := "SET #e = :e, #st = :st, #at = :at, #n = :n"
	names := map[string]string{"#e": attrEntry, "#st": attrState, "#at": attrChangedAt, "#n": attrNumber}
	vals := map[string]types.AttributeValue{
		":e": str(string(blob)), ":st": str(string(e.State)),
		":at": str(e.StateChangedAt.UTC().Format(SortableTime)), ":n": num(e.PRNumber),
	}
	if headRef != "" {
		set += ", #h = :h, " + AttrGSI2PK + " = :g2pk, " + AttrGSI2SK + " = :g2sk"
		names["#h"] = attrHeadRef
		vals[":h"] = str(headRef)
		vals[":g2pk"] = str(entryPK(k, queueID) + "#HEAD#" + headRef)
		vals[":g2sk"] = str(fmt.Sprintf("%010d", e.PRNumber))
	}
	return &types.Update{
		Key: key(entryPK(k, queueID), prSK(e.PRNumber)), UpdateExpression: aws.String(set),
		ExpressionAttributeNames: names, ExpressionAttributeValues: vals,
	}, nil
}

func runKey(org, id string) map[string]types.AttributeValue {
	return key(orgPK(org)+"#MQRUN#"+id, "RUN")
}

func runPutMQ(k QueueKey, r RunRecordMQ) (*types.Put, error) {
	blob, err := json.Marshal(r)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "store failure")
	}
	item := runKey(k.Org, r.Run.ID)
	item[attrRecord] = str(string(blob))
	item[attrHost], item[attrOwner], item[attrName] = str(k.Repo.Host), str(k.Repo.Owner), str(k.Repo.Name)
	item[attrBranch] = str(k.Branch)
	return &types.Put{Item: item}, nil
}

// SaveQueue writes r's snapshot if the stored version is still prev, with
// the outbox events in the same transaction; entries and runs join it as
// far as DynamoDB's 100 actions allow, the rest follow in further writes
// (they are derived copies: the snapshot is the record). errs.Conflict
// when another writer saved first, or the queue was deleted.
func (s *Store) SaveQueue(ctx context.Context, r QueueRecord, prev int64, ch QueueChanges) error {
	item, err := queueItem(r)
	if err != nil {
		return err
	}
	actions := []types.TransactWriteItem{{Put: &types.Put{
		Item: item, ConditionExpression: aws.String(ifItemExists + " AND " + attrVersion + " = :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num64(prev)},
	}}}
	if len(ch.Folded) > MaxFold {
		return errs.E(errs.Internal, "a save folds at most %d commands, not %d", MaxFold, len(ch.Folded))
	}
	actions = append(actions, commandMarks(r.Key, ch.Folded, r.Snapshot.Version)...)
	for _, ev := range ch.Events {
		p, err := s.eventPut(r.Key.Org, ev)
		if err != nil {
			return err
		}
		actions = append(actions, types.TransactWriteItem{Put: p})
	}
	var rest []types.TransactWriteItem
	for _, e := range ch.Entries {
		u, err := s.entryUpdate(r.Key, r.ID, e, ch.HeadRefs[e.PRNumber])
		if err != nil {
			return err
		}
		rest = append(rest, types.TransactWriteItem{Update: u})
	}
	for _, run := range ch.Runs {
		p, err := runPutMQ(r.Key, run)
		if err != nil {
			return err
		}
		rest = append(rest, types.TransactWriteItem{Put: p})
	}
	for _, t := range ch.Transitions {
		p, err := transitionPut(r, t)
		if err != nil {
			return err
		}
		rest = append(rest, types.TransactWriteItem{Put: p})
	}
	// Only a step touching more than 99 PRs at once has more actions than
	// a transaction takes; those beyond it are written right after it.
	n := max(0, min(len(rest), MaxTransactActions-len(actions)))
	actions = append(actions, rest[:n]...)
	rest = rest[n:]
	if len(actions) > MaxTransactActions {
		actions, rest = actions[:MaxTransactActions], append(actions[MaxTransactActions:], rest...)
	}
	if err := s.transact(ctx, actions...); err != nil {
		return savedConflict(err, len(ch.Folded))
	}
	if err := s.writeEach(ctx, rest); err != nil {
		return err
	}
	return s.writeTimeline(ctx, r, ch.Transitions, ch.Runs)
}

// MaxFold bounds the commands one save folds, leaving the transaction room
// for the events they make.
const MaxFold = 25

// savedConflict is a failed save's error: errs.Conflict when the snapshot
// (action 0) or one of the folded commands (1..folded) failed its
// condition, that is when another writer saved first.
func savedConflict(err error, folded int) error {
	for i := 0; i <= folded; i++ {
		if failedAction(err, i) {
			return errs.Wrap(errs.Conflict, err, "the queue changed meanwhile")
		}
	}
	return err
}

// TimelineTTL is how long a PR's timeline items are kept.
const TimelineTTL = 90 * 24 * time.Hour

// MaxTimeline bounds the transitions a PR's timeline reads: its latest.
const MaxTimeline = 100

func timelineSK(pr int) string { return fmt.Sprintf("TL#%010d#", pr) }

// writeTimeline writes a timeline item per transition of a saved queue,
// and a run history item per run that ended (rewritten, the same key,
// when an ended run changes again).
func (s *Store) writeTimeline(ctx context.Context, r QueueRecord, ts []mergequeue.TransitionRecord, runs []RunRecordMQ) error {
	reqs := make([]types.WriteRequest, 0, len(ts))
	for _, run := range runs {
		if run.Run.Status == mergequeue.RunInProgress {
			continue
		}
		blob, err := json.Marshal(mergequeue.HistoryRunOf(run.Run))
		if err != nil {
			return errs.Wrap(errs.Internal, err, "store failure")
		}
		item := key(entryPK(r.Key, r.ID), runHistorySK(run.Run.CreatedAt, run.Run.ID))
		item[attrHistory] = str(string(blob))
		item[AttrTTL] = num64(run.Run.EndedAt.Add(TimelineTTL).Unix())
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	for _, t := range ts {
		blob, err := json.Marshal(t.Transition)
		if err != nil {
			return errs.Wrap(errs.Internal, err, "store failure")
		}
		item := key(entryPK(r.Key, r.ID), timelineSK(t.Transition.PRNumber)+fmt.Sprintf("%020d", t.Transition.Seq))
		item[attrTransition] = str(string(blob))
		item[AttrTTL] = num64(t.Transition.At.Add(TimelineTTL).Unix())
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: item}})
	}
	return s.writeAll(ctx, reqs)
}

func runHistorySK(start time.Time, id string) string {
	return "RH#" + start.UTC().Format(SortableTime) + "#" + id
}

// QueueHistory is the history of queue r in [since, until): its stored
// transitions (every timeline item: they are kept by PR, not by time;
// with the snapshot's last ones, which a crash may have kept from the
// timeline) and the runs started in the window. Two Queries, page by
// page: a month of a busy queue is a few MB.
func (s *Store) QueueHistory(ctx context.Context, r QueueRecord, since, until time.Time) (mergequeue.History, error) {
	ts := slices.Clone(r.Snapshot.Transitions)
	err := s.queryEach(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String(pkIs + " AND begins_with(" + AttrSK + ", :tl)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(entryPK(r.Key, r.ID)), ":tl": str("TL#"),
		},
	}, func(item map[string]types.AttributeValue) error {
		var t mergequeue.Transition
		if err := json.Unmarshal([]byte(strAttr(item[attrTransition])), &t); err != nil {
			return errs.Wrap(errs.Internal, err, "store failure: timeline")
		}
		ts = append(ts, t)
		return nil
	})
	if err != nil {
		return mergequeue.History{}, err
	}
	var runs []mergequeue.HistoryRun
	err = s.queryEach(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String(pkIs + " AND " + AttrSK + " BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(entryPK(r.Key, r.ID)), ":lo": str(runHistorySK(since, "")), ":hi": str(runHistorySK(until, "")),
		},
	}, func(item map[string]types.AttributeValue) error {
		var h mergequeue.HistoryRun
		if err := json.Unmarshal([]byte(strAttr(item[attrHistory])), &h); err != nil {
			return errs.Wrap(errs.Internal, err, "store failure: run history")
		}
		runs = append(runs, h)
		return nil
	})
	if err != nil {
		return mergequeue.History{}, err
	}
	return mergequeue.BuildHistory(ts, runs, since, until), nil
}

// PRTimeline lists the stored transitions of pull request n in queue r,
// its latest MaxTimeline, oldest first: one Query.
func (s *Store) PRTimeline(ctx context.Context, r QueueRecord, n int) ([]mergequeue.Transition, error) {
	out, err := s.query(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String(pkIs + " AND begins_with(" + AttrSK + ", :tl)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(entryPK(r.Key, r.ID)), ":tl": str(timelineSK(n)),
		},
		ScanIndexForward: aws.Bool(false), Limit: aws.Int32(MaxTimeline),
	})
	if err != nil {
		return nil, err
	}
	ts := make([]mergequeue.Transition, 0, len(out.Items))
	for _, item := range slices.Backward(out.Items) {
		var t mergequeue.Transition
		if err := json.Unmarshal([]byte(strAttr(item[attrTransition])), &t); err != nil {
			return nil, errs.Wrap(errs.Internal, err, "store failure: timeline")
		}
		ts = append(ts, t)
	}
	return ts, nil
}

// DeleteQueue deletes a queue if it is still at version; errs.Conflict when
// it changed meanwhile. Its entry and run items stay (a new queue on the
// branch has another ID) until their retention.
func (s *Store) DeleteQueue(ctx context.Context, k QueueKey, version int64) error {
	err := s.transact(ctx, types.TransactWriteItem{Delete: &types.Delete{
		Key: key(k.pk(), skQueue), ConditionExpression: aws.String(ifItemExists + " AND " + attrVersion + " = :v"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":v": num64(version)},
	}})
	if errs.Is(err, errs.Conflict) {
		return errs.Wrap(errs.Conflict, err, "the queue changed meanwhile")
	}
	return err
}

func readEntry(item map[string]types.AttributeValue) (EntryRecord, error) {
	var rec EntryRecord
	if v, ok := item[attrEntry].(*types.AttributeValueMemberS); ok {
		if err := json.Unmarshal([]byte(v.Value), &rec.Entry); err != nil {
			return rec, errs.Wrap(errs.Internal, err, "store failure: queue entry")
		}
	}
	if v, ok := item[attrHeadRef].(*types.AttributeValueMemberS); ok {
		rec.HeadRef = v.Value
	}
	return rec, nil
}

// QueueEntry is PR n's entry in queue r: the snapshot's when it holds it
// (no read), else the stored item; errs.NotFound when the PR was never
// submitted to it. Every entry read overlays the snapshot (overlay).
func (s *Store) QueueEntry(ctx context.Context, r QueueRecord, n int) (EntryRecord, error) {
	if e, ok := r.snapshotEntry(n); ok {
		return EntryRecord{Entry: e}, nil
	}
	item, err := s.getItem(ctx, key(entryPK(r.Key, r.ID), prSK(n)))
	if err != nil {
		return EntryRecord{}, err
	}
	if item == nil {
		return EntryRecord{}, errs.E(errs.NotFound, "pull request %d was never submitted to this queue", n)
	}
	return readEntry(item)
}

// QueueEntriesByHead lists the stored entries of queue r whose PR head
// branch is ref: one Query on GSI2.
func (s *Store) QueueEntriesByHead(ctx context.Context, r QueueRecord, ref string) ([]EntryRecord, error) {
	var out []EntryRecord
	err := s.queryEach(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(IndexGSI2),
		KeyConditionExpression:    aws.String(gsi2PKIs),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(entryPK(r.Key, r.ID) + "#HEAD#" + ref)},
	}, func(item map[string]types.AttributeValue) error {
		e, err := readEntry(item)
		out = append(out, r.overlay(e))
		return err
	})
	return out, err
}

// EntryPage is one page of a queue's stored entries.
type EntryPage struct {
	Entries []EntryRecord
	Next    string // opaque cursor, "" on the last page
}

// ListQueueEntries lists up to limit stored entries of queue r in PR
// number order, after cursor, keeping those state accepts (nil: all) and
// changed at or after since. One Query.
func (s *Store) ListQueueEntries(ctx context.Context, r QueueRecord, cursor string, limit int32, state string, since time.Time) (EntryPage, error) {
	in := &dynamodb.QueryInput{
		KeyConditionExpression: aws.String(pkIs + " AND begins_with(" + AttrSK + ", :pr)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(entryPK(r.Key, r.ID)), ":pr": str("PR#"),
		},
		Limit: aws.Int32(limit),
	}
	var filters []string
	if state != "" {
		filters = append(filters, "#st = :st")
		in.ExpressionAttributeValues[":st"] = str(state)
	}
	if !since.IsZero() {
		filters = append(filters, "#at >= :since")
		in.ExpressionAttributeValues[":since"] = str(since.UTC().Format(SortableTime))
	}
	if len(filters) > 0 {
		in.FilterExpression = aws.String(strings.Join(filters, " AND "))
		in.ExpressionAttributeNames = map[string]string{}
		if state != "" {
			in.ExpressionAttributeNames["#st"] = attrState
		}
		if !since.IsZero() {
			in.ExpressionAttributeNames["#at"] = attrChangedAt
		}
	}
	if cursor != "" {
		n, err := decodeEntryCursor(cursor)
		if err != nil {
			return EntryPage{}, err
		}
		in.ExclusiveStartKey = key(entryPK(r.Key, r.ID), prSK(n))
	}
	out, err := s.query(ctx, in)
	if err != nil {
		return EntryPage{}, err
	}
	var page EntryPage
	for _, item := range out.Items {
		e, err := readEntry(item)
		if err != nil {
			return EntryPage{}, err
		}
		page.Entries = append(page.Entries, r.overlay(e))
	}
	if lek := out.LastEvaluatedKey; lek != nil {
		if sk, ok := lek[AttrSK].(*types.AttributeValueMemberS); ok {
			n, _ := strconv.Atoi(strings.TrimPrefix(sk.Value, "PR#"))
			page.Next = base64.RawURLEncoding.EncodeToString([]byte("pr:" + strconv.Itoa(n)))
		}
	}
	return page, nil
}

func decodeEntryCursor(c string) (int, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		if v, ok := strings.CutPrefix(string(b), "pr:"); ok {
			if n, err := strconv.Atoi(v); err == nil && n > 0 {
				return n, nil
			}
		}
	}
	return 0, errs.E(errs.Invalid, "cursor is not one this endpoint returned")
}

// QueueRun reads a stored test run of org; errs.NotFound when unknown.
func (s *Store) QueueRun(ctx context.Context, org, id string) (RunRecordMQ, error) {
	item, err := s.getItem(ctx, runKey(org, id))
	if err != nil {
		return RunRecordMQ{}, err
	}
	if item == nil {
		return RunRecordMQ{}, errs.E(errs.NotFound, "no test run %s", id)
	}
	var rec RunRecordMQ
	if v, ok := item[attrRecord].(*types.AttributeValueMemberS); ok {
		if err := json.Unmarshal([]byte(v.Value), &rec); err != nil {
			return rec, errs.Wrap(errs.Internal, err, "store failure: test run")
		}
	}
	rec.Key = queueKeyOf(stringsOf(item))
	rec.Key.Org = org // a run item names its organization in its key alone
	return rec, nil
}

// ActiveQueues lists up to limit active queues after cursor (from the
// previous page; "" for the first): one Query on GSI1, whose items carry
// the whole snapshot. next is "" on the last page.
func (s *Store) ActiveQueues(ctx context.Context, cursor string, limit int32) (qs []QueueRecord, next string, err error) {
	in := &dynamodb.QueryInput{
		IndexName:                 aws.String(IndexGSI1),
		KeyConditionExpression:    aws.String(gsi1PKIs),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(activeQueuesPK)},
		Limit:                     aws.Int32(limit),
	}
	if cursor != "" {
		// GSI1SK is the queue's sort key, from which its table key follows.
		org, rest, _ := strings.Cut(cursor, "#")
		in.ExclusiveStartKey = map[string]types.AttributeValue{
			AttrGSI1PK: str(activeQueuesPK), AttrGSI1SK: str(cursor),
			AttrPK: str(orgPK(org) + "#Q#" + rest), AttrSK: str(skQueue),
		}
	}
	out, err := s.query(ctx, in)
	if err != nil {
		return nil, "", err
	}
	for _, item := range out.Items {
		r, err := readQueue(item)
		if err != nil {
			return nil, "", err
		}
		qs = append(qs, r)
	}
	if lek := out.LastEvaluatedKey; lek != nil {
		if v, ok := lek[AttrGSI1SK].(*types.AttributeValueMemberS); ok {
			next = v.Value
		}
	}
	return qs, next, nil
}

// SchedulerCursor reads where the scheduler's walk over active queues
// stopped ("" at the start).
func (s *Store) SchedulerCursor(ctx context.Context) (string, error) {
	item, err := s.getItem(ctx, key(schedulerPK, "CURSOR"))
	if err != nil || item == nil {
		return "", err
	}
	v, _ := item[attrCursor].(*types.AttributeValueMemberS)
	if v == nil {
		return "", nil
	}
	return v.Value, nil
}

// SetSchedulerCursor stores where the next tick continues.
func (s *Store) SetSchedulerCursor(ctx context.Context, cursor string) error {
	item := key(schedulerPK, "CURSOR")
	item[attrCursor] = str(cursor)
	return s.putItem(ctx, &dynamodb.PutItemInput{Item: item})
}

// QueuesOfRepo lists every queue, of any organization and host, on the
// repository owner/name: one Query on GSI2. GitHub's webhooks name only
// the repository.
func (s *Store) QueuesOfRepo(ctx context.Context, owner, name string) ([]QueueRecord, error) {
	var out []QueueRecord
	err := s.queryEach(ctx, &dynamodb.QueryInput{
		IndexName:                 aws.String(IndexGSI2),
		KeyConditionExpression:    aws.String(gsi2PKIs),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": str(repoIndexPK(owner, name))},
	}, func(item map[string]types.AttributeValue) error {
		r, err := readQueue(item)
		out = append(out, r)
		return err
	})
	return out, err
}

// ClaimGitHubDelivery records a GitHub webhook delivery id; false when it
// was seen before (GitHub redelivers, and so do people).
func (s *Store) ClaimGitHubDelivery(ctx context.Context, id string, now time.Time) (bool, error) {
	return s.claimOnce(ctx, key("GHDELIVERY#"+id, "DELIVERY"), now)
}

// ReleaseGitHubDelivery forgets a claimed delivery id whose handling
// failed before it changed anything, so that its redelivery is handled.
func (s *Store) ReleaseGitHubDelivery(ctx context.Context, id string) error {
	return s.transact(ctx, types.TransactWriteItem{Delete: &types.Delete{Key: key("GHDELIVERY#"+id, "DELIVERY")}})
}

// ClaimGitHubCommand records that the command a GitHub event gives (a
// comment, one edit of it, a label added) was handled, whatever delivery
// carried it: key names the command (the repository, the comment id and
// its updated_at). False when it was handled before: a delivery replayed
// under another delivery id runs nothing. One conditional PutItem (1 write
// unit), kept as long as delivery ids are.
func (s *Store) ClaimGitHubCommand(ctx context.Context, key string, now time.Time) (bool, error) {
	return s.claimOnce(ctx, ghCommandKey(key), now)
}

// ReleaseGitHubCommand forgets a claimed command whose handling failed
// before it was recorded, so that GitHub's redelivery runs it.
func (s *Store) ReleaseGitHubCommand(ctx context.Context, key string) error {
	return s.transact(ctx, types.TransactWriteItem{Delete: &types.Delete{Key: ghCommandKey(key)}})
}

func ghCommandKey(k string) map[string]types.AttributeValue { return key("GHCOMMAND#"+k, "COMMAND") }

// claimOnce puts the marker item k unless it exists: true when this call
// put it. It lives deliveryTTL.
func (s *Store) claimOnce(ctx context.Context, k map[string]types.AttributeValue, now time.Time) (bool, error) {
	k[AttrTTL] = num64(now.Add(deliveryTTL).Unix())
	err := s.putItem(ctx, &dynamodb.PutItemInput{Item: k, ConditionExpression: aws.String(ifItemAbsent)})
	if errs.Is(err, errs.Conflict) {
		return false, nil
	}
	return err == nil, err
}

// ImpactedTargets are the targets a PR head impacts (setImpactedTargets).
type ImpactedTargets struct {
	All     bool
	Targets []string
	// Chunks is how many items held the list, as read back (writes ignore it).
	Chunks int
}

func targetsPK(r QueueRecord, pr int, sha string) string {
	return entryPK(r.Key, r.ID) + "#TARGETS#" + strconv.Itoa(pr) + "#" + strings.ToLower(sha)
}

// PutImpactedTargets stores the targets of PR pr at sha in queue r. Up to
// 100,000 targets of 1 KB do not fit one item: the list is gzipped and cut
// into chunk items, written first; the head item, written last, names how
// many chunks make it, so a reader never sees half a list.
func (s *Store) PutImpactedTargets(ctx context.Context, r QueueRecord, pr int, sha string, t ImpactedTargets) error {
	pk := targetsPK(r, pr, sha)
	data, err := gzipJSON(t.Targets)
	if err != nil {
		return err
	}
	var g [8]byte
	_, _ = rand.Read(g[:])
	gen := hex.EncodeToString(g[:]) // chunks of an older write are never mixed in
	chunks := 0
	for len(data) > 0 || chunks == 0 {
		n := min(len(data), targetsChunkSize)
		item := key(pk, "CHUNK#"+gen+"#"+strconv.Itoa(chunks))
		item[attrData] = &types.AttributeValueMemberB{Value: data[:n]}
		if err := s.putItem(ctx, &dynamodb.PutItemInput{Item: item}); err != nil {
			return err
		}
		data = data[n:]
		chunks++
	}
	head := key(pk, "HEAD")
	head[attrAll] = &types.AttributeValueMemberBOOL{Value: t.All}
	head[attrGeneration] = str(gen)
	head[attrChunks] = num(chunks)
	head[attrCount] = num(len(t.Targets))
	return s.putItem(ctx, &dynamodb.PutItemInput{Item: head})
}

// HasImpactedTargets reports whether targets were set for pr at sha: one
// GetItem.
func (s *Store) HasImpactedTargets(ctx context.Context, r QueueRecord, pr int, sha string) (bool, error) {
	item, err := s.getItem(ctx, key(targetsPK(r, pr, sha), "HEAD"))
	return item != nil, err
}

// GetImpactedTargets reads the targets of pr at sha; found is false when
// none were set.
func (s *Store) GetImpactedTargets(ctx context.Context, r QueueRecord, pr int, sha string) (t ImpactedTargets, found bool, err error) {
	pk := targetsPK(r, pr, sha)
	head, err := s.getItem(ctx, key(pk, "HEAD"))
	if err != nil || head == nil {
		return t, false, err
	}
	if v, ok := head[attrAll].(*types.AttributeValueMemberBOOL); ok {
		t.All = v.Value
	}
	gen, _ := head[attrGeneration].(*types.AttributeValueMemberS)
	cn, _ := head[attrChunks].(*types.AttributeValueMemberN)
	if gen == nil || cn == nil {
		return t, true, nil
	}
	n, _ := strconv.Atoi(cn.Value)
	t.Chunks = n
	keys := make([]map[string]types.AttributeValue, n)
	for i := range keys {
		keys[i] = key(pk, "CHUNK#"+gen.Value+"#"+strconv.Itoa(i))
	}
	items, err := s.batchGet(ctx, keys)
	if err != nil {
		return t, false, err
	}
	parts := make([][]byte, n)
	for _, it := range items {
		sk := it[AttrSK].(*types.AttributeValueMemberS).Value
		i, _ := strconv.Atoi(sk[strings.LastIndex(sk, "#")+1:])
		if b, ok := it[attrData].(*types.AttributeValueMemberB); ok && i < n {
			parts[i] = b.Value
		}
	}
	if err := gunzipJSON(bytes.Join(parts, nil), &t.Targets); err != nil {
		return t, false, errs.Wrap(errs.Internal, err, "store failure: impacted targets")
	}
	return t, true, nil
}

// TransitionTTL is how long a transition item is kept: the metrics read
// the last hour; the second hour is slack for DynamoDB's lazy TTL and
// clock differences.
const TransitionTTL = 2 * time.Hour

// Advance returns r moved on to snapshot s by the transitions ts (in the
// order they happened), with its Clocks folded forward by the engine
// (mergequeue.FoldEpisodes), and the records of ts for
// QueueChanges.Transitions. r is left as it was.
func (r QueueRecord) Advance(s mergequeue.Snapshot, ts []mergequeue.Transition) (QueueRecord, []mergequeue.TransitionRecord) {
	next := r
	next.Snapshot = s
	var recs []mergequeue.TransitionRecord
	next.Clocks, recs = mergequeue.FoldEpisodes(r.Clocks, s, ts)
	return next, recs
}

func transitionPK(r QueueRecord) string { return entryPK(r.Key, r.ID) + "#TRANS" }

func transitionPut(r QueueRecord, t mergequeue.TransitionRecord) (*types.Put, error) {
	blob, err := json.Marshal(t)
	if err != nil {
		return nil, errs.Wrap(errs.Internal, err, "store failure")
	}
	item := key(transitionPK(r), t.Transition.At.UTC().Format(SortableTime)+fmt.Sprintf("#%020d", t.Transition.Seq))
	item[attrRecord] = str(string(blob))
	item[AttrTTL] = num64(t.Transition.At.Add(TransitionTTL).Unix())
	return &types.Put{Item: item}, nil
}

// QueueTransitions lists the stored transitions of queue r made at or
// after since, oldest first: one Query per 1 MB of them (an hour of a busy
// queue is a few hundred items of a few hundred bytes: one page).
func (s *Store) QueueTransitions(ctx context.Context, r QueueRecord, since time.Time) ([]mergequeue.TransitionRecord, error) {
	var out []mergequeue.TransitionRecord
	err := s.queryEach(ctx, &dynamodb.QueryInput{
		KeyConditionExpression: aws.String(pkIs + " AND " + AttrSK + " >= :since"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(transitionPK(r)), ":since": str(since.UTC().Format(SortableTime)),
		},
		ProjectionExpression:     aws.String("#rec"),
		ExpressionAttributeNames: map[string]string{"#rec": attrRecord},
	}, func(item map[string]types.AttributeValue) error {
		var t mergequeue.TransitionRecord
		if v, ok := item[attrRecord].(*types.AttributeValueMemberS); ok {
			if err := json.Unmarshal([]byte(v.Value), &t); err != nil {
				return errs.Wrap(errs.Internal, err, "store failure: queue transition")
			}
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// OrgQueuesOfRepo lists the queues of org on repository ref (every
// branch): one Query on GSI2, whose items carry the snapshots.
func (s *Store) OrgQueuesOfRepo(ctx context.Context, org string, ref repository.Ref) ([]QueueRecord, error) {
	var out []QueueRecord
	err := s.queryEach(ctx, &dynamodb.QueryInput{
		IndexName:              aws.String(IndexGSI2),
		KeyConditionExpression: aws.String(gsi2PKIs + " AND begins_with(" + AttrGSI2SK + ", :org)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": str(repoIndexPK(ref.Owner, ref.Name)), ":org": str(org + "#" + ref.Key() + "#"),
		},
	}, func(item map[string]types.AttributeValue) error {
		r, err := readQueue(item)
		out = append(out, r)
		return err
	})
	return out, err
}
