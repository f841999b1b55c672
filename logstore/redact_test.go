package logstore

import "testing"

func TestRedactURI(t *testing.T) {
	for in, want := range map[string]string{
		"s3://user:secret@bucket/t?token=abc#x": "s3://bucket/t",
		"az://c/p?sig=xyz":                      "az://c/p",
		"/local/path?odd":                       "/local/path?odd",
		"gs://b/p":                              "gs://b/p",
		"s3://%zz/bad":                          "(URI withheld)",
	} {
		if got := RedactURI(in); got != want {
			t.Errorf("RedactURI(%q) = %q, want %q", in, got, want)
		}
	}
}
