// Package ifacetest creates throw-away network namespaces and veth pairs for
// root-only integration tests of gmtun's network code (Linux only).
//
// Everything it creates lives inside namespaces named gmtun-t-<random>, which
// are deleted in t.Cleanup even when the test fails; it never touches the
// namespace the test process started in.
package ifacetest
