package variant_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/godelta/delta/schema/variant"
)

// TestAppendJSON: each type renders as the package doc of AppendJSON
// says, and every rendering is valid JSON.
func TestAppendJSON(t *testing.T) {
	meta := variant.AppendMetadata(nil, []string{"a", "b", "key"})
	u := [16]byte{0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef}
	for _, c := range []struct {
		name  string
		value []byte
		want  string
	}{
		{"null", variant.AppendNull(nil), `null`},
		{"true", variant.AppendBool(nil, true), `true`},
		{"int8", variant.AppendInt(nil, variant.TypeInt8, -5), `-5`},
		{"int64", variant.AppendInt(nil, variant.TypeInt64, math.MinInt64), `-9223372036854775808`},
		{"double", variant.AppendDouble(nil, 0.1), `0.1`},
		{"float", variant.AppendFloat(nil, 1.5), `1.5`},
		{"NaN", variant.AppendDouble(nil, math.NaN()), `"NaN"`},
		{"-Inf", variant.AppendFloat(nil, float32(math.Inf(-1))), `"-Infinity"`},
		{"decimal4", dec(t, variant.TypeDecimal4, "-150", 2), `-1.50`},
		{"decimal8 small", dec(t, variant.TypeDecimal8, "5", 3), `0.005`},
		{"decimal16", dec(t, variant.TypeDecimal16, "-123456789012345678901234567890", 10), `-12345678901234567890.1234567890`},
		{"date", variant.AppendInt(nil, variant.TypeDate, 19753), `"2024-01-31"`},
		{"date before 1970", variant.AppendInt(nil, variant.TypeDate, -1), `"1969-12-31"`},
		{"timestamp", variant.AppendInt(nil, variant.TypeTimestamp, 1706695200123456), `"2024-01-31T10:00:00.123456Z"`},
		{"timestamp ntz", variant.AppendInt(nil, variant.TypeTimestampNTZ, 0), `"1970-01-01T00:00:00.000000"`},
		{"timestamp nanos", variant.AppendInt(nil, variant.TypeTimestampNanos, 1), `"1970-01-01T00:00:00.000000001Z"`},
		{"time", variant.AppendInt(nil, variant.TypeTime, 3661000001), `"01:01:01.000001"`},
		{"short string", variant.AppendString(nil, `say "hi"`+"\n\x01"), `"say \"hi\"\n\u0001"`},
		{"long string", variant.AppendString(nil, string(make([]byte, 70))), `"` + repeat(`\u0000`, 70) + `"`},
		{"not UTF-8", variant.AppendString(nil, "a\xffb"), `"a` + "\uFFFD" + `b"`},
		{"binary", variant.AppendBinary(nil, "\x00\x01\x02"), `"AAEC"`},
		{"uuid", variant.AppendUUID(nil, u), `"12345678-9abc-def0-0123-456789abcdef"`},
		{"array", variant.AppendArray(nil, [][]byte{variant.AppendInt(nil, variant.TypeInt8, 1), variant.AppendNull(nil), variant.AppendString(nil, "x")}), `[1,null,"x"]`},
		{"empty array", variant.AppendArray(nil, nil), `[]`},
		{"object", obj(t, variant.Field{Name: "key", ID: 2, Value: variant.AppendInt(nil, variant.TypeInt8, 0)}, variant.Field{Name: "a", ID: 0, Value: variant.AppendArray(nil, [][]byte{variant.AppendBool(nil, false)})}), `{"a":[false],"key":0}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := variant.AppendJSON([]byte("x"), meta, c.value)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != "x"+c.want {
				t.Fatalf("got %s, want %s", got[1:], c.want)
			}
			if !json.Valid(got[1:]) {
				t.Fatalf("%s is not valid JSON", got[1:])
			}
		})
	}
}

func repeat(s string, n int) string {
	out := ""
	for range n {
		out += s
	}
	return out
}

// TestAppendJSONMalformed: bytes from a file that are not a variant give
// ErrMalformed, never a panic: truncations and corruptions of valid
// values, random bytes, a field id past the metadata, and nesting past
// MaxJSONDepth.
func TestAppendJSONMalformed(t *testing.T) {
	meta := variant.AppendMetadata(nil, []string{"a"})
	good := obj(t, variant.Field{Name: "a", ID: 0, Value: variant.AppendArray(nil, [][]byte{variant.AppendString(nil, "some text"), dec(t, variant.TypeDecimal16, "7", 2)})})
	if _, err := variant.AppendJSON(nil, meta, good); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		v := append([]byte(nil), good...)
		switch i % 3 {
		case 0:
			v = v[:rng.IntN(len(v))]
		case 1:
			v[rng.IntN(len(v))] ^= byte(1 + rng.IntN(255))
		default:
			v = make([]byte, rng.IntN(40))
			for j := range v {
				v[j] = byte(rng.Uint32())
			}
		}
		out, err := variant.AppendJSON(nil, meta, v)
		if err != nil && !errors.Is(err, variant.ErrMalformed) {
			t.Fatalf("%x: %v, not ErrMalformed", v, err)
		}
		if err == nil && !json.Valid(out) {
			t.Fatalf("%x renders as invalid JSON %s", v, out)
		}
	}
	if _, err := variant.AppendJSON(nil, variant.AppendMetadata(nil, nil), obj(t, variant.Field{Name: "a", ID: 0, Value: variant.AppendNull(nil)})); !errors.Is(err, variant.ErrMalformed) {
		t.Fatalf("field id past the metadata: %v", err)
	}
	deep := variant.AppendNull(nil)
	for range variant.MaxJSONDepth + 1 {
		deep = variant.AppendArray(nil, [][]byte{deep})
	}
	if _, err := variant.AppendJSON(nil, meta, deep); !errors.Is(err, variant.ErrMalformed) {
		t.Fatalf("nesting past the bound: %v", err)
	}
}
