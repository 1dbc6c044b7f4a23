package memstore

// topic ties a tag to the vocabulary that makes a memory about it read
// plausibly and lets keyword searches hit coherent subsets.
type topic struct {
	tag      string
	noun     string // capitalized form used at the start of titles
	subjects []string
	techs    []string
}

var topics = []topic{
	{"architecture", "Architecture", []string{"service boundaries", "module layout", "domain events", "shared libraries"}, []string{"gRPC", "CQRS", "event sourcing"}},
	{"caching", "Caching", []string{"session tokens", "API responses", "user profiles", "search results"}, []string{"Redis", "Memcached", "Varnish"}},
	{"database", "Database", []string{"schema migrations", "read replicas", "connection pools", "order history"}, []string{"PostgreSQL", "MySQL", "SQLite", "DynamoDB"}},
	{"security", "Security", []string{"API keys", "secret rotation", "TLS certificates", "audit logs"}, []string{"Vault", "OPA", "Trivy"}},
	{"performance", "Performance", []string{"tail latency", "hot paths", "query plans", "cold starts"}, []string{"pprof", "k6", "flame graphs"}},
	{"testing", "Testing", []string{"integration tests", "flaky tests", "contract tests", "test fixtures"}, []string{"testify", "Playwright", "Testcontainers"}},
	{"deployment", "Deployment", []string{"canary releases", "rollbacks", "release trains", "blue-green rollouts"}, []string{"Kubernetes", "Helm", "Terraform", "Argo CD"}},
	{"api", "API", []string{"pagination", "rate limits", "versioning", "error envelopes"}, []string{"OpenAPI", "GraphQL", "gRPC"}},
	{"observability", "Observability", []string{"trace sampling", "alert routing", "log retention", "dashboards"}, []string{"Prometheus", "Grafana", "OpenTelemetry"}},
	{"messaging", "Messaging", []string{"event ordering", "dead-letter queues", "consumer lag", "retries"}, []string{"Kafka", "NATS", "RabbitMQ"}},
	{"auth", "Auth", []string{"OAuth scopes", "SSO login", "refresh tokens", "session expiry"}, []string{"Keycloak", "OIDC", "JWT"}},
	{"storage", "Storage", []string{"blob uploads", "backups", "object lifecycle", "snapshots"}, []string{"S3", "MinIO", "Ceph"}},
	{"frontend", "Frontend", []string{"bundle size", "hydration", "form validation", "state management"}, []string{"React", "Vite", "Svelte"}},
	{"networking", "Networking", []string{"DNS resolution", "load balancing", "timeouts", "service mesh"}, []string{"Envoy", "NGINX", "Istio"}},
}

// nsSpec pairs a namespace with the title shapes that make sense in it.
// Placeholders: {N} topic noun, {n} topic tag, {S} subject, {T} tech,
// {C} component, {F} failure, {A} action, {P} pattern, {H} clock time.
type nsSpec struct {
	namespace string
	titles    []string
}

var memoryTypes = []struct {
	name       string
	halfLife   int
	namespaces []nsSpec
}{
	{"semantic", 180, []nsSpec{
		{"_semantic/architecture", []string{"{N} strategy for {S}", "{N} overview: {C}", "How {T} fits the {C}"}},
		{"_semantic/decisions", []string{"Decision: use {T} for {S}", "Why we chose {T}", "Decision: {n} limits for {S}"}},
		{"_semantic/knowledge", []string{"{T} behavior with {S}", "Notes on {S} in the {C}", "{N} facts: {S}"}},
		{"_semantic/preferences", []string{"Preferred {n} style for {S}", "Preference: {T} over alternatives"}},
	}},
	{"episodic", 30, []nsSpec{
		{"_episodic/sessions", []string{"Session: debugging {S}", "Pairing on {n} for {S}"}},
		{"_episodic/incidents", []string{"Incident: {T} {F} at {H}", "Incident: {C} {F} at {H}", "Postmortem: {n} {F}"}},
		{"_episodic/reviews", []string{"Review of {S} changes", "Retro: {n} work on the {C}"}},
	}},
	{"procedural", 90, []nsSpec{
		{"_procedural/runbooks", []string{"Runbook: {A} {T} in the {C}", "Runbook: recover from {T} {F}"}},
		{"_procedural/patterns", []string{"Pattern: {P} for {S}", "{N} pattern: {P}"}},
		{"_procedural/workflows", []string{"How to {A} {S} safely", "Workflow: {n} release checks"}},
	}},
}

var (
	components = []string{"billing service", "checkout API", "auth gateway", "search indexer", "ingest pipeline", "notification worker", "admin dashboard", "mobile backend", "scheduler", "reporting job"}
	failures   = []string{"failover", "timeout storm", "memory leak", "replication lag", "disk exhaustion", "certificate expiry", "deadlock", "connection exhaustion"}
	actions    = []string{"rotate", "upgrade", "restore", "scale", "drain", "migrate", "rebuild", "reindex"}
	patterns   = []string{"circuit breaker", "retry with backoff", "transactional outbox", "read-through cache", "idempotency keys", "bulkhead", "saga", "feature flags"}
	teams      = []string{"platform team", "payments team", "on-call", "security guild", "data team"}

	contentSentences = []string{
		"The {C} uses {T} for {S}.",
		"Latency hit {K} ms under peak {S} load.",
		"Keep {S} behind a flag until the {C} migrates.",
		"{T} cut {S} errors by {Q}% in staging.",
		"Alerts fire after {K}s of degraded {S}.",
		"Drain the {C} before restarting {T}.",
		"Avoid changing {S} during releases.",
		"Root cause: a bad {T} setting for {S}.",
		"The {M} reviews all {S} changes.",
		"Prefer {P} when {S} misbehave.",
	}
	summaries = []string{
		"{N} guidance for {S}.",
		"{T} handles {S} well.",
		"Lessons on {S}.",
		"Caveats for {S} with {T}.",
	}

	relTypes     = []string{"relates_to", "supersedes", "derived_from", "depends_on"}
	trustLevels  = []string{"verified", "inferred", "user_stated"}
	sourceTypes  = []string{"conversation", "document", "tool_output"}
	agents       = []string{"claude-code", "atlatl-cli", "cursor", "codex"}
	priorities   = []string{"low", "normal", "high"}
	citationHost = "https://docs.example.com/"
)
