// Package readmetour runs the README's tour, as a newcomer would follow it,
// against a local server: its test extracts the commands from README.md
// itself, so the tour cannot drift from what works.
package readmetour
