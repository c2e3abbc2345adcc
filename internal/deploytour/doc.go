// Package deploytour runs the README's "Deploying" section: every command
// of its `sh deploy` blocks that can run without AWS and GitHub themselves
// runs against their stand-ins (Secrets Manager's, GitHub's, DynamoDB
// Local, the local server for the deployed API), and the test names each
// one it cannot run (sam) with why, so the section cannot drift from what
// works.
package deploytour
