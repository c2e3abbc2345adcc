package store

import (
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/mainguard/mainguard/shared/testhealth"
)

// The counter item's attributes of a test's health beyond its hours
// (attrStreakOpen to attrQuarantineUntil, and attrLastUpload, in doc.go's
// table), each a few bytes: the counter item is what every upload pays
// for.

// episodeCounts are a flaky episode's runs and failures.
type episodeCounts struct{ runs, failures int }

func (c episodeCounts) number() *types.AttributeValueMemberN { return packed(c.failures, c.runs) }

// readHealthAttr reads one of the attributes above into tc; others are
// left alone.
func readHealthAttr(tc *testhealth.TestCase, name string, av types.AttributeValue) {
	switch name {
	case attrStreakOpen:
		tc.StreakOpen = intAttr(av) == 1
	case attrEpisode:
		if c, ok := unpack(av, 2); ok {
			tc.EpisodeRuns, tc.EpisodeFailures = c[0], c[1]
		}
	case attrCleanRuns:
		tc.CleanRuns = intAttr(av)
	case attrLastFailure:
		tc.LastFailure = unixAttr(av)
	case attrBrokenUntil:
		tc.BrokenUntil = unixAttr(av)
	case attrQuarantineUntil:
		tc.QuarantineUntil = unixAttr(av)
	case attrLastUpload:
		readOutcome(av, tc)
	}
}

// copyHealthAttrs copies what readHealthAttr reads from src to dst.
func copyHealthAttrs(dst *testhealth.TestCase, src testhealth.TestCase) {
	dst.StreakOpen = src.StreakOpen
	dst.EpisodeRuns, dst.EpisodeFailures, dst.CleanRuns = src.EpisodeRuns, src.EpisodeFailures, src.CleanRuns
	dst.LastFailure, dst.BrokenUntil = src.LastFailure, src.BrokenUntil
	if !src.QuarantineUntil.IsZero() {
		dst.QuarantineUntil = src.QuarantineUntil
	}
	dst.LastUpload, dst.LastOutcome, dst.LastGuarded = src.LastUpload, src.LastOutcome, src.LastGuarded
}
