package access

import (
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// HashToken is the stored form of a token: its secret is never kept.
func HashToken(token string) string {
	h := sha256.Sum256([]byte(token))
	return hex.EncodeToString(h[:])
}

// Bucket is a token bucket: Rate tokens a second, holding at most Burst.
type Bucket struct {
	Rate  float64
	Burst int
}

// Lease is the answer of taking tokens from a shared bucket.
type Lease struct {
	Taken bool // the tokens asked for were taken
	// Wait is, when they were not, how long until they are free (unless
	// other copies take them first).
	Wait time.Duration
	// FullAt is when the bucket is full again, as seen: pass it to the
	// next take.
	FullAt time.Time
}
