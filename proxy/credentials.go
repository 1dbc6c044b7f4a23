package proxy

import (
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// lro-proxy does not run OAuth (docs/proxy.md, "A remote that wants
// OAuth"): a remote that answers 401 or 403 gets the token an operator
// obtained, by -header-env. What New fails with then says how, and where
// the remote's authorization server is announced when it said so.

// resourceMetadata finds the resource_metadata parameter of a
// WWW-Authenticate challenge (RFC 9728, section 5.1): the URL of the
// remote's protected-resource metadata, which names its authorization
// servers.
var resourceMetadata = regexp.MustCompile(`(?i)\bresource_metadata\s*=\s*"([^"]*)"`)

// credentialsWanted is why the remote refused the first connection with
// he, a 401 or 403; sent is whether an Authorization header went with it.
func credentialsWanted(remote string, he *remoteHTTPError, sent bool) string {
	where := ""
	if m := resourceMetadata.FindStringSubmatch(he.challenge); m != nil {
		where = fmt.Sprintf(" (its authorization server is named in %s)", m[1])
	}
	how := fmt.Sprintf(`get an access token for it with an OAuth client%s and pass it from an environment variable: LRO_REMOTE_AUTH="Bearer $TOKEN" lro-proxy -remote %s -header-env Authorization=LRO_REMOTE_AUTH (Config.Headers; see "A remote that wants OAuth" in docs/proxy.md)`, where, remote)
	status := fmt.Sprintf("HTTP %d %s", he.status, http.StatusText(he.status))
	switch {
	case sent && he.status == http.StatusForbidden:
		return fmt.Sprintf("answered %s to the Authorization header sent: the token lacks a scope or a right the remote wants; %s", status, how)
	case sent:
		return fmt.Sprintf("answered %s to the Authorization header sent: the token was refused (expired, or for another resource?); %s", status, how)
	}
	return fmt.Sprintf("answered %s: it wants credentials, an OAuth access token which lro-proxy does not obtain itself: %s", status, how)
}

// sentAuthorization reports whether the configured headers carry an
// Authorization header.
func (p *Proxy) sentAuthorization() bool {
	for name := range p.cfg.Headers {
		if strings.EqualFold(name, "Authorization") {
			return true
		}
	}
	return false
}
