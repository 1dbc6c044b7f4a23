// Package outputschema widens a tool's output schema so that it admits an
// offload descriptor too (Widen, and Widened, which memoizes it): what an
// adapter lists for a tool whose results lro may offload. The root package
// exports it as lro.WidenOutputSchema and decides which tools are widened
// (Host.ListedOutputSchema).
package outputschema
