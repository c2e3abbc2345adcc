//go:build !race

package healthsim

// underRace: the race detector is on (race_on_test.go).
const underRace = false
