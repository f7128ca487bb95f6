# Reads `go test -v` output of many packages and prints what a person needs:
# each package's closing line; the output of a failing package, with long
# log blocks shortened (a daemon's log to its last lines, the goroutine dump
# a failed namespace test's cleanup asks for with SIGQUIT left out; the
# whole output stays in bin/unit.log); every skipped test with its reason
# (the log line Go prints just before "--- SKIP"); and, last, so that the
# tail of a CI log shows it, each failed test with its short log lines —
# its error messages among them. Used by `make unit`. POSIX awk (mawk).

BEGIN { HEAD = 4; TAIL = 20; MSGMAX = 25 }

# A log block: a line "    name.go:N: text" and the lines after it that
# belong to it (continuations of a multi-line t.Log, a child's output).
function flush(   i, n) {
	if (bn == 0) return
	if (bn <= HEAD + TAIL) {
		for (i = 1; i <= bn; i++) buf = buf bl[i] "\n"
	} else {
		for (i = 1; i <= HEAD; i++) buf = buf bl[i] "\n"
		buf = buf "        [... " (bn - HEAD - TAIL) " lines, in bin/unit.log ...]\n"
		for (i = bn - TAIL + 1; i <= bn; i++) buf = buf bl[i] "\n"
	}
	if (dump > 0) buf = buf "        [goroutine dump after SIGQUIT: " dump " lines, in bin/unit.log]\n"
	# Short blocks are what a test says of itself: errors, figures, notes.
	if (bn <= 3 && btest != "") {
		for (i = 1; i <= bn; i++) msgs[btest] = msgs[btest] bl[i] "\n"
	}
	bn = 0
	dump = 0
}

function add(line) {
	flush()
	buf = buf line "\n"
}

function lastlines(s, k,   a, n, i, out) {
	n = split(s, a, "\n")
	if (a[n] == "") n--
	out = ""
	if (n > k) {
		out = "    [... " (n - k) " earlier lines ...]\n"
	}
	for (i = (n > k ? n - k + 1 : 1); i <= n; i++) out = out a[i] "\n"
	return out
}

/^=== (RUN|PAUSE|CONT|NAME)/ { cur = $3; add($0); next }

/^(ok|FAIL|\?)[ \t]/ {
	flush()
	if ($1 == "FAIL") {
		printf "%s", buf
		for (i = 1; i <= nfailed; i++) {
			name = failed[i]
			fails = fails "--- FAIL: " name "\n"
			if (msgs[name] != "") fails = fails lastlines(msgs[name], MSGMAX)
		}
		if (nfailed == 0) fails = fails $0 " (no failed test named: see its output above)\n"
	}
	print
	buf = ""
	nfailed = 0
	split("", msgs)
	cur = ""
	next
}

/--- SKIP/ {
	skip = skip $0 "\n"
	if (last != "") skip = skip "  " last "\n"
	nskip++
	add($0)
	last = ""
	next
}

/^ *--- FAIL: / {
	failed[++nfailed] = $3
	last = ""
	add($0)
	next
}

/^ *--- / { last = ""; add($0); next }

/^ +[A-Za-z0-9_.-]+\.go:[0-9]+: / {
	flush()
	if ($0 ~ /_test\.go:[0-9]+:/) last = $0
	btest = cur
	bl[bn = 1] = $0
	next
}

bn > 0 {
	if (dump > 0 || $0 ~ /SIGQUIT: quit$/) { dump++; next }
	bl[++bn] = $0
	next
}

{ add($0) }

END {
	flush()
	if (buf != "") printf "%s", buf
	if (nskip > 0) {
		printf "\n%d tests skipped (as non-root the end-to-end tests need `sudo make test`; under CI=true a missing prerequisite fails instead):\n%s", nskip, skip
	} else {
		print "\nno test was skipped"
	}
	if (fails != "") printf "\nFailed tests, each with its short log lines (its errors among them; the whole output is in bin/unit.log):\n%s", fails
}
