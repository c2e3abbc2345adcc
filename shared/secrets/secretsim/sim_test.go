package secretsim_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/smithy-go"

	"github.com/mainguard/mainguard/shared/secrets/secretsim"
)

// client is the real SDK client on the server with the given credentials.
func client(endpoint, key, secret, token string) *secretsmanager.Client {
	return secretsmanager.New(secretsmanager.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider(key, secret, token),
	})
}

// code is the AWS error code of err, "" when it has none.
func code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

func TestSDKAgainstTheServer(t *testing.T) {
	t.Parallel()
	s := secretsim.New("")
	url := s.Start(t)
	arn := s.CreateSecret("app/github-app", "the App", `{"app_id":1}`)
	other := s.CreateSecret("app/page-token", "", "k")
	s.AddIdentity(secretsim.Identity{AccessKey: "AKIDFN", SecretKey: "fn-secret", SessionToken: "fn-token",
		Principal: "arn:aws:sts::123456789012:assumed-role/fn-role/fn"})
	s.Allow("AKIDFN", "secretsmanager:GetSecretValue", arn)
	ctx := context.Background()

	c := client(url, "AKIDFN", "fn-secret", "fn-token")
	got, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		t.Fatalf("GetSecretValue by ARN: %v", err)
	}
	if aws.ToString(got.SecretString) != `{"app_id":1}` || aws.ToString(got.Name) != "app/github-app" || got.VersionStages[0] != "AWSCURRENT" || got.CreatedDate == nil {
		t.Errorf("GetSecretValue: %+v", got)
	}
	if _, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("app/github-app")}); err != nil {
		t.Errorf("by name: %v", err)
	}
	if _, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn[:len(arn)-7])}); err != nil {
		t.Errorf("by partial ARN: %v", err)
	}
	if n := s.Calls("AKIDFN", "GetSecretValue"); n != 3 {
		t.Errorf("calls counted %d, want 3", n)
	}

	cases := []struct {
		name   string
		call   func() error
		code   string
		phrase string
	}{
		{"another secret", func() error {
			_, err := c.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(other)})
			return err
		}, "AccessDeniedException", "is not authorized to perform: secretsmanager:GetSecretValue"},
		{"an action not granted", func() error {
			_, err := c.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String(arn)})
			return err
		}, "AccessDeniedException", "secretsmanager:DescribeSecret"},
		{"a wrong secret key", func() error {
			_, err := client(url, "AKIDFN", "not-the-secret", "fn-token").GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
			return err
		}, "InvalidSignatureException", "does not match the signature you provided"},
		{"an unknown key", func() error {
			_, err := client(url, "AKIDNOBODY", "x", "").GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
			return err
		}, "UnrecognizedClientException", "security token included in the request is invalid"},
		{"no session token", func() error {
			_, err := client(url, "AKIDFN", "fn-secret", "").GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
			return err
		}, "UnrecognizedClientException", ""},
	}
	for _, tc := range cases {
		err := tc.call()
		if code(err) != tc.code || !strings.Contains(err.Error(), tc.phrase) {
			t.Errorf("%s: %v, want %s with %q", tc.name, err, tc.code, tc.phrase)
		}
	}

	s.AddIdentity(secretsim.Identity{AccessKey: "AKIDADMIN", SecretKey: "admin-secret"})
	for _, op := range []string{"GetSecretValue", "DescribeSecret", "PutSecretValue"} {
		s.Allow("AKIDADMIN", "secretsmanager:"+op, "*")
	}
	admin := client(url, "AKIDADMIN", "admin-secret", "")
	if _, err := admin.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("nope")}); code(err) != "ResourceNotFoundException" ||
		!strings.Contains(err.Error(), "can't find the specified secret") {
		t.Errorf("a missing secret: %v", err)
	}
	put, err := admin.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(arn), SecretString: aws.String(`{"app_id":2}`)})
	if err != nil {
		t.Fatal(err)
	}
	again, err := admin.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(arn), SecretString: aws.String(`{"app_id":2}`), ClientRequestToken: put.VersionId})
	if err != nil || aws.ToString(again.VersionId) != aws.ToString(put.VersionId) {
		t.Errorf("the same put again: %v %v", again, err)
	}
	if _, err := admin.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: aws.String(arn), SecretString: aws.String("other"), ClientRequestToken: put.VersionId}); code(err) != "ResourceExistsException" {
		t.Errorf("another value under the same token: %v", err)
	}
	d, err := admin.DescribeSecret(ctx, &secretsmanager.DescribeSecretInput{SecretId: aws.String("app/github-app")})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.VersionIdsToStages) != 2 || d.VersionIdsToStages[aws.ToString(put.VersionId)][0] != "AWSCURRENT" || aws.ToString(d.Description) != "the App" {
		t.Errorf("DescribeSecret after a put: %+v", d)
	}
	prev, err := admin.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn), VersionStage: aws.String("AWSPREVIOUS")})
	if err != nil || aws.ToString(prev.SecretString) != `{"app_id":1}` {
		t.Errorf("AWSPREVIOUS: %v %v", prev, err)
	}
}

func TestExpiredSignature(t *testing.T) {
	t.Parallel()
	s := secretsim.New("")
	s.Now = func() time.Time { return time.Now().Add(time.Hour) }
	url := s.Start(t)
	arn := s.CreateSecret("x", "", "v")
	s.AddIdentity(secretsim.Identity{AccessKey: "AKID", SecretKey: "s"})
	s.Allow("AKID", "secretsmanager:GetSecretValue", "*")
	_, err := client(url, "AKID", "s", "").GetSecretValue(context.Background(), &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if code(err) != "InvalidSignatureException" || !strings.Contains(err.Error(), "Signature expired") {
		t.Errorf("an hour-old signature: %v", err)
	}
}

func TestUnsignedRequest(t *testing.T) {
	t.Parallel()
	s := secretsim.New("")
	url := s.Start(t)
	req, _ := http.NewRequest(http.MethodPost, url+"/", strings.NewReader(`{"SecretId":"x"}`))
	req.Header.Set("X-Amz-Target", "secretsmanager.GetSecretValue")
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 400 || resp.Header.Get("X-Amzn-ErrorType") != "MissingAuthenticationTokenException" {
		t.Errorf("unsigned: %d %s", resp.StatusCode, resp.Header.Get("X-Amzn-ErrorType"))
	}
}
