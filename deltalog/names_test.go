package deltalog

import "testing"

func TestParseName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
		want LogFile
	}{
		{"00000000000000000000.json", true, LogFile{Kind: Commit, Version: 0}},
		{"00000000000000000123.json", true, LogFile{Kind: Commit, Version: 123}},
		{"00000000000000000010.checkpoint.parquet", true, LogFile{Kind: ClassicCheckpoint, Version: 10, Ext: "parquet"}},
		{"00000000000000000010.checkpoint.0000000002.0000000003.parquet", true, LogFile{Kind: MultiPartCheckpoint, Version: 10, Part: 2, NumParts: 3, Ext: "parquet"}},
		{"00000000000000000002.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json", true, LogFile{Kind: UUIDCheckpoint, Version: 2, UUID: "80a083e8-7026-4e79-81be-64bd76c43a11", Ext: "json"}},
		{"00000000000000000002.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.parquet", true, LogFile{Kind: UUIDCheckpoint, Version: 2, UUID: "80a083e8-7026-4e79-81be-64bd76c43a11", Ext: "parquet"}},
		{"00000000000000000004.00000000000000000006.compacted.json", true, LogFile{Kind: Compacted, Version: 4, EndVersion: 6}},
		{"00000000000000000007.crc", true, LogFile{Kind: CRC, Version: 7}},
		// Not log files.
		{"_last_checkpoint", false, LogFile{}},
		{".00000000000000000000.json.crc", false, LogFile{}},
		{"0000000000000000000.json", false, LogFile{}},                                      // 19 digits
		{"00000000000000000000.json.tmp", false, LogFile{}},                                 // temp
		{"0000000000000000000a.json", false, LogFile{}},                                     // not a number
		{"00000000000000000010.checkpoint.0000000004.0000000003.parquet", false, LogFile{}}, // part > parts
		{"00000000000000000010.checkpoint.0000000000.0000000003.parquet", false, LogFile{}}, // part 0
		{"00000000000000000010.checkpoint.not-a-uuid.json", false, LogFile{}},
		{"00000000000000000006.00000000000000000004.compacted.json", false, LogFile{}}, // end < start
		{"00000000000000000000.parquet", false, LogFile{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ParseName(LogDir + tt.name)
			if ok != tt.ok {
				t.Fatalf("ParseName(%q) ok = %v, want %v", tt.name, ok, tt.ok)
			}
			if !ok {
				return
			}
			tt.want.Key = LogDir + tt.name
			if got != tt.want {
				t.Errorf("ParseName(%q) = %+v, want %+v", tt.name, got, tt.want)
			}
		})
	}
}

func TestKeysRoundTrip(t *testing.T) {
	for _, key := range []string{
		CommitKey(42), CRCKey(42), ClassicCheckpointKey(42), MultiPartCheckpointKey(42, 1, 2),
		UUIDCheckpointKey(42, "80a083e8-7026-4e79-81be-64bd76c43a11", "parquet"),
	} {
		f, ok := ParseName(key)
		if !ok || f.Version != 42 {
			t.Errorf("ParseName(%q) = %+v, %v; want version 42", key, f, ok)
		}
	}
}
