# Reads `go test -v` output of many packages and prints what a person needs:
# each package's closing line, the whole output of a failing package, and
# every skipped test with its reason (the log line Go prints just before
# "--- SKIP"). Used by `make unit`.
/^=== (RUN|PAUSE|CONT|NAME)/ { buf = buf $0 "\n"; next }
/^(ok|FAIL|\?)[ \t]/ {
	if ($1 == "FAIL") printf "%s", buf
	print
	buf = ""
	next
}
/--- SKIP/ {
	skip = skip $0 "\n"
	if (last != "") skip = skip "  " last "\n"
	nskip++
	buf = buf $0 "\n"
	last = ""
	next
}
/_test\.go:[0-9]+:/ { last = $0 }
/^--- |^    --- / { last = "" }
{ buf = buf $0 "\n" }
END {
	if (buf != "") printf "%s", buf
	if (nskip > 0) {
		printf "\n%d tests skipped (as non-root the end-to-end tests need `sudo make test`; under CI=true a missing prerequisite fails instead):\n%s", nskip, skip
	} else {
		print "\nno test was skipped"
	}
}
