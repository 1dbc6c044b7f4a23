package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The client scenarios: the suite starts a scenario server per scenario
// and runs a client against it. The client under test is lro-proxy
// -remote, driven downstream on stdio by testdata/client (the official Go
// SDK's client doing what each scenario asks); the same program connecting
// directly is what it must equal.

// The ways the driver reaches a scenario server: the columns of the table.
const (
	viaDirect = "direct"      // the SDK's client itself, OAuth included
	viaProxy  = "proxy"       // through lro-proxy -remote
	viaToken  = "proxy-token" // through lro-proxy -remote -header-env, a token got by OAuth beforehand (auth/* only)
)

var clientPaths = []struct {
	name, head string
	flags      []string
}{
	{viaDirect, "SDK client directly", nil},
	{viaProxy, "through lro-proxy -remote", []string{"-proxy"}},
	{viaToken, "through lro-proxy -remote -header-env (token by OAuth first)", []string{"-proxy", "-token"}},
}

// clientKnownDifferences are the scenarios that end differently through
// lro-proxy than directly, each with the reason; the test logs an entry
// that did not differ in its run. None today: initialize and sse-retry
// differed until the proxy checked the remote's answer to server/discover
// (issue 42).
var clientKnownDifferences = map[string]string{}

// passesWithoutOAuth are the auth scenarios a client that runs no OAuth
// passes, with the reason: through lro-proxy, which exits on the remote's
// 401 naming -header-env (docs/proxy.md), every other auth scenario fails.
// An OAuth client in the proxy would change this list: the test says so.
var passesWithoutOAuth = map[string]string{
	"auth/resource-mismatch": "it checks that no token is sent to a resource its metadata does not name: a client without OAuth sends none",
}

// tokenLimits are the auth scenarios where the -header-env workaround (a
// token got by OAuth beforehand, then lro-proxy with it) ends otherwise
// than the SDK's OAuth client directly, with the reason.
var tokenLimits = map[string]string{
	"auth/scope-step-up":     "the remote lets initialize through without a token and asks for scopes later (403 insufficient_scope): a token got beforehand cannot know them, and the proxy does not authorize again",
	"auth/scope-retry-limit": "the remote lets initialize through without a token, so no token is got beforehand; the scenario wants a client that stops re-authorizing after a few 403s",
}

// driverLacks are the scenarios the driver fails directly, run once on
// every path (no retries), with the reason.
var driverLacks = map[string]string{
	"auth/client-credentials-jwt":               "the driver runs the authorization-code flow only (the go-sdk lists client credentials as not implemented)",
	"auth/client-credentials-basic":             "the driver runs the authorization-code flow only (the go-sdk lists client credentials as not implemented)",
	"auth/cross-app-access-complete-flow":       "the driver runs the authorization-code flow only, not the jwt-bearer grant",
	"auth/2025-03-26-oauth-metadata-backcompat": "the go-sdk's client checks that the authorization server metadata's issuer is the URL it was fetched for, which this 2025-03-26 server's is not",
}

// proxyNoOAuth is what lro-proxy says when a remote answers 401 (see
// proxy/credentials.go): every auth scenario through the proxy must end
// with it in the client's stderr.
const proxyNoOAuth = "which lro-proxy does not obtain itself"

func TestConformanceClient(t *testing.T) {
	if os.Getenv("LRO_TEST_CONFORMANCE") != "1" {
		t.Skip("the conformance suite takes minutes: LRO_TEST_CONFORMANCE=1 runs it (CI does, on its own)")
	}
	node, cli := suite(t)
	dir := t.TempDir()
	driver, proxyBin := filepath.Join(dir, "client"), filepath.Join(dir, "lro-proxy")
	errs := make(chan error, 2)
	go func() { errs <- goBuild(driver, "", "./testdata/client") }()
	go func() { errs <- goBuild(proxyBin, "", "github.com/mcplro/lro/cmd/lro-proxy") }()
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}

	results := map[string]clientRun{}
	for _, path := range clientPaths {
		t.Run(path.name, func(t *testing.T) {
			args := []string{driver, "-timeout", "80s"}
			for _, f := range path.flags {
				args = append(args, f)
				if f == "-proxy" {
					args = append(args, proxyBin)
				}
			}
			once := func(sc string) bool {
				_, known := clientKnownDifferences[sc]
				_, lacks := driverLacks[sc]
				_, limit := tokenLimits[sc]
				_, passes := passesWithoutOAuth[sc]
				noOAuth := strings.HasPrefix(sc, "auth/") && !passes
				tokenless := !strings.HasPrefix(sc, "auth/") // no token to get: dropped below
				return lacks || (path.name == viaProxy && (known || noOAuth)) || (path.name == viaToken && (limit || tokenless))
			}
			// Run beside the others, lro-proxy passes initialize and
			// sse-retry now and then; alone it fails them as issue 42 says
			// (timing in its upstream negotiation): what is compared
			// is run alone. The OAuth scenarios run in parallel only.
			alone := func(sc string) bool { return path.name != viaToken && !strings.HasPrefix(sc, "auth/") }
			run := runClientSuite(t, node, cli, strings.Join(args, " "), filepath.Join(dir, "out", path.name), alone, once)
			if path.name == viaToken {
				run.keep(func(sc string) bool { return strings.HasPrefix(sc, "auth/") })
			}
			results[path.name] = run
		})
	}
	var heads []string
	var all []map[string]outcome
	for _, path := range clientPaths {
		heads = append(heads, path.head)
		all = append(all, results[path.name].checks)
	}
	logTable(t, "Client scenarios: the official Go SDK's client, directly and through lro-proxy -remote", markdownTable(heads, all, func(col int, sc string) string {
		switch {
		case clientPaths[col].name == viaProxy && clientKnownDifferences[sc] != "":
			return " ‡"
		case clientPaths[col].name == viaToken && tokenLimits[sc] != "":
			return " §"
		}
		return ""
	})+"\n‡ a known difference (clientKnownDifferences); § a limit of the -header-env workaround (tokenLimits); – not run: no token to get\n")

	direct, viaP, viaT := results[viaDirect].checks, results[viaProxy].checks, results[viaToken].checks
	for _, sc := range scenarios(direct) {
		_, lacks := driverLacks[sc]
		switch failed := direct[sc].failed(); {
		case failed && !lacks:
			t.Logf("directly, the SDK's client fails %s: %s (%s): the comparisons of this scenario prove less", sc, direct[sc], direct[sc].why())
		case !failed && lacks:
			t.Logf("%s is in driverLacks but passed directly", sc)
		}
	}
	seen := map[string]bool{}
	if direct != nil && viaP != nil {
		for _, sc := range scenarios(direct, viaP) {
			if strings.HasPrefix(sc, "auth/") {
				continue // below: the proxy runs no OAuth
			}
			if viaP[sc].String() == direct[sc].String() {
				continue
			}
			seen[sc] = true
			what := fmt.Sprintf("%s through lro-proxy: %s, directly: %s (%s)", sc, viaP[sc], direct[sc], viaP[sc].why())
			if reason, ok := clientKnownDifferences[sc]; ok {
				t.Logf("known difference: %s (%s)", what, reason)
				continue
			}
			t.Errorf("%s", what)
		}
		for sc := range clientKnownDifferences {
			if !seen[sc] {
				t.Logf("%s is in clientKnownDifferences but did not differ in this run: remove it once the negotiate branch is in", sc)
			}
		}
	}
	if viaP != nil {
		for _, sc := range scenarios(direct, viaP) {
			if !strings.HasPrefix(sc, "auth/") {
				continue
			}
			o, ok := viaP[sc]
			if !ok {
				t.Errorf("%s did not run through lro-proxy", sc)
				continue
			}
			_, expected := passesWithoutOAuth[sc]
			if o.failed() == expected {
				t.Errorf("%s through lro-proxy: %s; passesWithoutOAuth says it should %s. Has the proxy gained OAuth? Update passesWithoutOAuth and docs/proxy.md (\"A remote that wants OAuth\")", sc, o, map[bool]string{true: "pass", false: "fail"}[expected])
			}
			if !strings.Contains(results[viaProxy].stderr[sc], proxyNoOAuth) {
				t.Errorf("%s through lro-proxy: the client's stderr does not show the proxy's exit on 401 (%q):\n%s", sc, proxyNoOAuth, tail([]byte(results[viaProxy].stderr[sc]), 2048))
			}
		}
	}
	if direct != nil && viaT != nil {
		for _, sc := range scenarios(direct, viaT) {
			if !strings.HasPrefix(sc, "auth/") {
				continue
			}
			_, limit := tokenLimits[sc]
			same := viaT[sc].String() == direct[sc].String()
			switch {
			case same && limit:
				t.Logf("%s is in tokenLimits but ended alike with the token through lro-proxy (%s)", sc, viaT[sc])
			case !same && limit:
				t.Logf("workaround's limit: %s with a token through lro-proxy: %s, directly: %s (%s)", sc, viaT[sc], direct[sc], tokenLimits[sc])
			case !same:
				t.Errorf("%s with a token through lro-proxy (-header-env): %s, directly: %s (%s)", sc, viaT[sc], direct[sc], viaT[sc].why())
			}
		}
	}
}

// clientRun is how each scenario's checks ended on one path, and the
// client's stderr (with lro-proxy's) in its last run.
type clientRun struct {
	checks map[string]outcome
	stderr map[string]string
}

// keep drops the scenarios not kept.
func (r clientRun) keep(kept func(scenario string) bool) {
	for sc := range r.checks {
		if !kept(sc) {
			delete(r.checks, sc)
			delete(r.stderr, sc)
		}
	}
}

// runClientSuite runs every client scenario of the suite with command,
// the scenarios in parallel, and again alone those that alone says (their
// run alone counts); then again, alone, each scenario that failed (tries
// in all) unless once says it fails for a known reason: the scenarios
// share a busy machine.
func runClientSuite(t *testing.T, node, cli, command, out string, alone, once func(scenario string) bool) clientRun {
	res := runClientOnce(t, node, cli, command, out, "")
	for sc := range res.checks {
		if alone(sc) {
			again := runClientOnce(t, node, cli, command, out+"-alone-"+strings.ReplaceAll(sc, "/", "-"), sc)
			if again.checks[sc] == nil {
				t.Fatalf("scenario %s did not run alone", sc)
			}
			res.checks[sc], res.stderr[sc] = again.checks[sc], again.stderr[sc]
		}
	}
	for sc, o := range res.checks {
		for try := 2; try <= tries && o.failed() && !once(sc); try++ {
			again := runClientOnce(t, node, cli, command, fmt.Sprintf("%s-retry%d-%s", out, try, strings.ReplaceAll(sc, "/", "-")), sc)
			if again.checks[sc] == nil {
				t.Fatalf("scenario %s did not run again", sc)
			}
			again.checks[sc].setTries(try)
			if !again.checks[sc].failed() || try == tries {
				o = again.checks[sc]
				res.stderr[sc] = again.stderr[sc]
			}
		}
		res.checks[sc] = o
	}
	return res
}

// clientDir is the suite's output directory of one client scenario,
// SCENARIO-TIMESTAMP (auth/NAME-TIMESTAMP for the auth scenarios).
var clientDir = regexp.MustCompile(`^(.+)-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z$`)

// runClientOnce runs one scenario, or with none all of them ("--suite
// all", in parallel), and reads their checks and the client's stderr.
func runClientOnce(t *testing.T, node, cli, command, out, scenario string) clientRun {
	ctx, cancel := context.WithTimeout(context.Background(), suiteTimeout)
	defer cancel()
	// The suite splits the command at spaces: t.TempDir's paths have none.
	args := []string{cli, "client", "--command", command, "--timeout", "90000", "-o", out}
	if scenario != "" {
		args = append(args, "--scenario", scenario)
	} else {
		args = append(args, "--suite", "all")
	}
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	b, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("the suite did not finish in %v with %s:\n%s", suiteTimeout, command, tail(b, 8192))
	}
	res := clientRun{checks: map[string]outcome{}, stderr: map[string]string{}}
	werr := filepath.WalkDir(out, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.Name() != "checks.json" {
			return err
		}
		rel, err := filepath.Rel(out, filepath.Dir(path))
		if err != nil {
			return err
		}
		m := clientDir.FindStringSubmatch(filepath.ToSlash(rel))
		if m == nil {
			return fmt.Errorf("%s: not a scenario's directory", rel)
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var checks []struct{ ID, Status, ErrorMessage string }
		if err := json.Unmarshal(data, &checks); err != nil {
			return fmt.Errorf("%s: %v", path, err)
		}
		o := outcome{}
		for _, c := range checks {
			if c.Status == "INFO" {
				continue // a record of the traffic, not a check
			}
			// A check the scenario repeats (one per request) counts by
			// its worst end.
			if prev, dup := o[c.ID]; dup && prev.Status != "SUCCESS" && prev.Status != "INFO" {
				continue
			}
			o[c.ID] = check{Status: c.Status, ErrorMessage: c.ErrorMessage}
		}
		if _, dup := res.checks[m[1]]; dup {
			return fmt.Errorf("scenario %s ran twice", m[1])
		}
		res.checks[m[1]] = o
		stderr, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "stderr.txt"))
		res.stderr[m[1]] = string(stderr)
		return nil
	})
	if werr != nil || len(res.checks) == 0 {
		t.Fatalf("the suite wrote no results (%v, exit %v):\n%s", werr, err, tail(b, 8192))
	}
	return res
}
