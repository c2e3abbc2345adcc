// Package secretsim owns a Secrets Manager test server built from AWS's API
// reference: the JSON 1.1 protocol (POST / with X-Amz-Target
// secretsmanager.<Operation>), every request's Signature Version 4 checked
// for real against the credentials it knows, a policy per access key (which
// actions on which secrets), and AWS's error shapes and sentences
// (ResourceNotFoundException, AccessDeniedException,
// UnrecognizedClientException, InvalidSignatureException, …).
//
// Operations served: GetSecretValue, DescribeSecret, PutSecretValue (which
// moves AWSCURRENT to the new version and AWSPREVIOUS to the old one, as
// rotation does). Tests create secrets and identities through its Go API.
//
// Sources: the Secrets Manager API Reference (GetSecretValue,
// DescribeSecret, PutSecretValue, Common Errors) and the IAM User Guide's
// "Create a signed AWS API request" (Signature Version 4).
package secretsim
