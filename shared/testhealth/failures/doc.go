// Package failures owns the text of a test failure as the "most common
// failures" view sees it (contract 2.5): which text a JUnit failure
// contributes (Text), the normalised form that groups two runs of the same
// failure into one cluster (Normalize, Key), and the text shown for a
// cluster (Summary).
//
// Normalize replaces what changes from run to run of one failure with
// placeholders, so that the rest (the assertion, the exception, the frames'
// method names) decides the cluster:
//
//	<n>     numbers: 42, -1, 0.25, 1e-9, the 3817263 of TestFoo3817263 and the
//	        100 of 100ms (digit runs inside a word only when 3 long or more,
//	        so python3, x64 and utf8 stay)
//	<hex>   0x1f, and runs of 7+ hex digits mixing letters and digits (git
//	        shas, object ids, test-instance-44d74c74c5)
//	<addr>  memory addresses: 0x with 8 or more hex digits (0xc000123456)
//	<uuid>  8-4-4-4-12 uuids
//	<str>   '…', "…" and `…` quoted strings
//	<pos>   file:line(:col) positions (foo/bar.go:12, File.java:45,
//	        C:\src\a.test.js:10:21, spec.ts:3:5) and "line 3"
//	<time>  dates and timestamps (RFC 3339, 2026-07-23 01:32:50) and times of
//	        day (12:01:02.123, 1:00)
//	<tmp>   paths under a temporary directory (/tmp/…, /var/folders/…,
//	        …\AppData\Local\Temp\…, …/_temp/…)
//
// and folds every run of whitespace into one space. ANSI colour sequences
// are dropped. It is a hand-written single-pass scanner, linear in its
// input, and it reads the first MaxInput bytes only; its result is at most
// MaxInput bytes, and Normalize(Normalize(x)) == Normalize(x).
package failures
