package wiring

import (
	"context"
	"testing"
)

func TestLambdaConfigTakesWhatLambdaSets(t *testing.T) {
	lambda := map[string]string{
		"AWS_LAMBDA_FUNCTION_NAME": "get-test-details", "AWS_REGION": "eu-west-1",
		"AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "secret", "AWS_SESSION_TOKEN": "token",
	}
	c, ok := lambdaConfig(func(k string) string { return lambda[k] }, "")
	if !ok || c.Region != "eu-west-1" {
		t.Fatalf("in Lambda: %v, region %q", ok, c.Region)
	}
	creds, err := c.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID != "AKID" || creds.SecretAccessKey != "secret" || creds.SessionToken != "token" {
		t.Errorf("credentials: %+v %v", creds, err)
	}
	if c, _ := lambdaConfig(func(k string) string { return lambda[k] }, "us-east-2"); c.Region != "us-east-2" {
		t.Errorf("a configured region wins: %q", c.Region)
	}
	for _, missing := range []string{"AWS_LAMBDA_FUNCTION_NAME", "AWS_REGION", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"} {
		env := func(k string) string {
			if k == missing {
				return ""
			}
			return lambda[k]
		}
		if _, ok := lambdaConfig(env, ""); ok {
			t.Errorf("without %s the standard chain must be used", missing)
		}
	}
}
