//go:build race

package queuesim

// raceDetector: the tests were built with -race.
const raceDetector = true
