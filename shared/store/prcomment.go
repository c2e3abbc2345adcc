package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/errs"
)

// The merge queue's one comment on a pull request (commentsEnabled) is
// remembered by a small item beside the queue item, keyed by queue and PR
// (not by the queue's incarnation: a queue deleted and made again on the
// branch keeps editing the same comment):
//
//	pr comment PK=ORG#{org}#Q#{repo}#{branch}  SK=PRCOMMENT#{number, 10 digits}
//	           comment_id (0 until created), claimed_at (unix ns)
//
// Its sort key does not start with QUEUE, so reading a queue with its
// commands never reads it. Before creating the comment a driver claims the
// item (ClaimPRComment): a second driver does not create a second comment
// while the first is at it, and a claim older than a minute (its driver
// died) may be taken over; the comment also carries a marker the next
// claimant finds on GitHub before it creates one (claims.go).

// PRComment is what the store remembers of a PR's queue comment.
type PRComment struct {
	CommentID int64     // GitHub's id; 0 until created
	ClaimedAt time.Time // when a driver last claimed its creation
}

func prCommentKey(k QueueKey, pr int) map[string]types.AttributeValue {
	return key(k.pk(), fmt.Sprintf("PRCOMMENT#%010d", pr))
}

// PRComment reads the comment item of PR pr of queue k; found is false
// when there is none.
func (s *Store) PRComment(ctx context.Context, k QueueKey, pr int) (PRComment, bool, error) {
	id, at, found, err := s.madeOnce(ctx, prCommentKey(k, pr), attrCommentID)
	return PRComment{CommentID: id, ClaimedAt: at}, found, err
}

// ClaimPRComment claims the creation of PR pr's comment at now: it holds
// when no driver claimed it since staleBefore. A fresh claim of another is
// errs.Conflict.
func (s *Store) ClaimPRComment(ctx context.Context, k QueueKey, pr int, now, staleBefore time.Time) error {
	err := s.claimMaking(ctx, prCommentKey(k, pr), now, staleBefore, time.Time{})
	if errs.Is(err, errs.Conflict) {
		return errs.E(errs.Conflict, "another driver is creating the comment of pull request %d", pr)
	}
	return err
}

// SetPRCommentID remembers the id of PR pr's comment.
func (s *Store) SetPRCommentID(ctx context.Context, k QueueKey, pr int, id int64) error {
	return s.setMadeID(ctx, prCommentKey(k, pr), attrCommentID, id)
}
