// Package junit reads JUnit XML reports as a stream of test runs: one Run
// per execution of a test case, retries included, for the test-health
// service to compute pass rates and flakiness from.
//
// It owns the knowledge of how the ~20 common report generators (Surefire,
// Gradle, pytest, jest-junit, go-junit-report, gotestsum, Playwright,
// xcresult converters, gtest, Bazel, nextest, PHPUnit, TestNG, ...) spell
// the same facts, and turns them into one shape:
//
//   - several <testcase> elements of one identity in one file are several
//     runs (retries), numbered by Run.Attempt;
//   - Surefire's <flakyFailure>/<flakyError> are failed runs before the
//     final pass, <rerunFailure>/<rerunError> failed runs after the final
//     failure;
//   - <error> stays distinct from <failure> (Errored vs Failed);
//   - <skipped> and the gtest/Bazel status="notrun" / result="skipped"
//     attributes mean Skipped;
//   - an <error> or <failure> directly inside a <testsuite> is a suite
//     failure, counted in Summary.SuiteErrors, never a run.
//
// Reports are untrusted uploads, so Parse is defensive: it streams tokens
// with encoding/xml instead of building a tree, bounds nesting depth, run
// count and the size of any single text or tag (Limits), refuses any
// <!DOCTYPE> instead of resolving entities, and never fails a report
// because of an odd duration or timestamp. Its errors are sentences that
// can be shown to the user who uploaded the report.
package junit
