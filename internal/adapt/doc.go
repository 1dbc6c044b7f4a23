// Package adapt holds what the host adapters (package mcpgo, package
// gosdk) share that is generic over their SDKs' types: written once here,
// so that an adapter only translates types.
package adapt
