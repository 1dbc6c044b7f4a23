// Package scratch makes the private directories of the system's temporary
// directory that the library fills while it serves (lro_extract's local
// copies of a store's files, the spools of an object store), and removes
// those a killed process left.
package scratch
