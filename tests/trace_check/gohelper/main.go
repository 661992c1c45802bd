// gohelper: Go's own answers for the trace_check tests. Built with -overlay into
// GOROOT/src/cmd/ so that it may import internal/trace.
//
//	gohelper golden OUTDIR TEST...  for each .test file: write the wire bytes of Go's
//	                                testtrace.ParseFile to OUTDIR/<base>.wire, print
//	                                "<base> <verdict>"
//	gohelper read FILE...           for each binary trace print "<events> <verdict>",
//	                                counting the events Go yields before any error
//	gohelper regexp                 stdin: JSON lines [pattern, text]; stdout per line:
//	                                "match", "nomatch" or "error"
//
// A verdict is SUCCESS or FAILURE followed by the Go-quoted error.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"internal/trace"
	"internal/trace/testtrace"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "golden":
		if len(os.Args) < 3 {
			usage()
		}
		golden(os.Args[2], os.Args[3:])
	case "read":
		for _, path := range os.Args[2:] {
			data, err := os.ReadFile(path)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			n, v := verdict(data)
			fmt.Printf("%d %s\n", n, v)
		}
	case "regexp":
		matchLines()
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: gohelper golden OUTDIR TEST... | read FILE... | regexp")
	os.Exit(2)
}

func golden(out string, paths []string) {
	for _, path := range paths {
		name := filepath.Base(path)
		r, _, _, err := testtrace.ParseFile(path)
		if err != nil {
			fmt.Printf("%s PARSEERROR %q\n", name, err.Error())
			continue
		}
		wire, _ := io.ReadAll(r)
		if err := os.WriteFile(filepath.Join(out, name+".wire"), wire, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		_, v := verdict(wire)
		fmt.Printf("%s %s\n", name, v)
	}
}

func verdict(wire []byte) (int, string) {
	tr, err := trace.NewReader(bytes.NewReader(wire))
	if err != nil {
		return 0, fmt.Sprintf("FAILURE %q", err.Error())
	}
	n := 0
	for {
		_, err := tr.ReadEvent()
		if err == io.EOF {
			return n, "SUCCESS"
		}
		if err != nil {
			return n, fmt.Sprintf("FAILURE %q", err.Error())
		}
		n++
	}
}

func matchLines() {
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<20), 1<<20)
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	for in.Scan() {
		var pair [2]string
		if err := json.Unmarshal(in.Bytes(), &pair); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		re, err := regexp.Compile(pair[0])
		switch {
		case err != nil:
			fmt.Fprintln(out, "error")
		case re.MatchString(pair[1]):
			fmt.Fprintln(out, "match")
		default:
			fmt.Fprintln(out, "nomatch")
		}
	}
}
