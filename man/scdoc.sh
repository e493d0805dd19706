#!/bin/sh
# Usage: scdoc.sh SCDOC IN OUT. scdoc's roff, less the paragraph macros it
# leaves where they do nothing (mandoc -T lint warns of each).
set -eu
# scdoc first, so that its errors fail the build.
"$1" <"$2" >"$3.roff"
awk '
{ line[NR] = $0 }
END {
	last = ""
	for (i = 1; i <= NR; i++) {
		if (line[i] == ".P" &&
		    (last ~ /^\.(TH|SH|SS|P|RS)( |$)/ || i == NR ||
		     line[i + 1] ~ /^\.(SH|SS|P|RE)( |$)/ || line[i + 1] == ""))
			continue
		print line[i]
		last = line[i]
	}
}' "$3.roff" >"$3"
rm -f "$3.roff"
