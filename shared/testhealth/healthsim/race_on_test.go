//go:build race

package healthsim

// underRace: the race detector is on; the long histories are left to the
// run without it (make test runs this package so too).
const underRace = true
