//go:build race

package sim

// raceDetector: the tests were built with -race.
const raceDetector = true
