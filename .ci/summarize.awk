# Reads `go test -v` output of many packages and prints what a person needs:
# each package's closing line, the whole output of a failing package, and
# every skipped test with its reason. Used by `make unit`.
/^=== (RUN|PAUSE|CONT|NAME)/ { buf = buf $0 "\n"; next }
/^(ok|FAIL|\?)[ \t]/ {
	if ($1 == "FAIL") printf "%s", buf
	print
	buf = ""
	next
}
/--- SKIP/ { skip = skip $0 "\n"; want = 1; buf = buf $0 "\n"; next }
want == 1 { skip = skip $0 "\n"; want = 0 }
{ buf = buf $0 "\n" }
END {
	if (buf != "") printf "%s", buf
	n = gsub(/--- SKIP/, "--- SKIP", skip)
	if (n > 0) {
		printf "\n%d tests skipped (as non-root the end-to-end tests need `sudo make test`; under CI=true a missing prerequisite fails instead):\n%s", n, skip
	} else {
		print "\nno test was skipped"
	}
}
