package blobfs_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestMain gives the drivers their test credentials once, for the whole
// test binary, rather than each test with t.Setenv, which forbids
// t.Parallel: the tests that mostly wait (for an expiry, for Azurite to
// start) run in parallel. The few tests that change a credential
// (t.Setenv) run before the parallel ones, and restore it.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "blobfs-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	env := map[string]string{
		// Azurite's well-known account (see azuriteKey).
		"AZURE_STORAGE_ACCOUNT": "devstoreaccount1",
		"AZURE_STORAGE_KEY":     azuriteKey,
	}
	if os.Getenv(envS3) == "" {
		// The fake's test keys, through the AWS SDK's standard chain,
		// and none of the machine's shared files. With LRO_TEST_S3_URL
		// the real server's come from the environment.
		for k, v := range map[string]string{
			"AWS_ACCESS_KEY_ID":           "test",
			"AWS_SECRET_ACCESS_KEY":       "test",
			"AWS_SESSION_TOKEN":           "",
			"AWS_PROFILE":                 "",
			"AWS_CONFIG_FILE":             filepath.Join(dir, "config"),
			"AWS_SHARED_CREDENTIALS_FILE": filepath.Join(dir, "credentials"),
			"AWS_EC2_METADATA_DISABLED":   "true",
		} {
			env[k] = v
		}
	}
	for k, v := range env {
		os.Setenv(k, v)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}
