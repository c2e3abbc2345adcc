package queuesim

// The sweep's grid: the bad probabilities and concurrencies at which the
// engine is held to the model.
var (
	sweepBadRates      = []float64{0.02, 0.05, 0.10, 0.20}
	sweepConcurrencies = []int{1, 5, 10}
)

// Sweep is base at every point of the grid p ∈ {2, 5, 10, 20}%,
// C ∈ {1, 5, 10}: its bad probability and concurrency replaced, the rest
// kept.
func Sweep(base Config) []Config {
	var out []Config
	for _, p := range sweepBadRates {
		for _, c := range sweepConcurrencies {
			cfg := base
			cfg.BadRate = p
			cfg.Queue.Concurrency = &c
			out = append(out, cfg)
		}
	}
	return out
}
