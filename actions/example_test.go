package actions_test

import (
	"errors"
	"fmt"

	"github.com/godelta/delta/actions"
	"github.com/godelta/delta/deltaerr"
)

// DecodeCommit reads a commit file line by line. As the protocol asks, fields
// and action kinds this library does not know are skipped, not refused.
func ExampleDecodeCommit() {
	data := []byte(`{"commitInfo":{"operation":"WRITE","timestamp":1700000000000}}
{"add":{"path":"part-0.parquet","partitionValues":{},"size":100,"modificationTime":1,"dataChange":true,"futureField":1}}
{"someFutureAction":{"x":1}}
`)
	acts, err := actions.DecodeCommit("00000000000000000001.json", data)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(acts), "actions")
	for _, a := range acts {
		switch {
		case a.CommitInfo != nil:
			fmt.Println("commitInfo", a.CommitInfo.Operation)
		case a.Add != nil:
			fmt.Println("add", a.Add.Path, a.Add.Size)
		}
	}

	out, _ := actions.EncodeCommit([]actions.Action{{Txn: &actions.Txn{AppID: "ingest", Version: 7}}})
	fmt.Print(string(out))

	_, err = actions.DecodeCommit("00000000000000000002.json", []byte("{\"add\":{\"size\":\"big\"}}\n"))
	fmt.Println(errors.Is(err, deltaerr.ErrCorrupt))
	// Output:
	// 2 actions
	// commitInfo WRITE
	// add part-0.parquet 100
	// {"txn":{"appId":"ingest","version":7}}
	// true
}
