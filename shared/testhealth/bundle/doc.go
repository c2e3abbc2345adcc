// Package bundle reads and writes the test-result bundles that CI uploads:
// zstd-compressed tar archives, as produced by the public Trunk analytics
// uploader (trunk-io/analytics-cli), holding a meta.json that says which
// organization, repository, commit and CI run the results belong to, the
// JUnit XML reports renamed junit/0, junit/1, ..., and optionally the
// repository's CODEOWNERS file.
//
// Bundles are untrusted uploads, so Read is a stream reader with hard
// bounds (Limits): it never holds the uncompressed archive, refuses a
// bundle as soon as a declared or decompressed size passes a limit (a
// compression bomb costs the time to decompress the limit, not the bomb),
// keeps the zstd decoder's window bounded, and hands each JUnit report to
// package junit, which parses it without resolving entities. Every refusal
// is an *Error whose Reason is a sentence fit to show the user who
// uploaded the bundle.
//
// Write exists so that tests and tools can produce bundles that are laid
// out exactly as the uploader lays them out, without needing the uploader.
package bundle
