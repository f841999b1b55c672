package write

import (
	"encoding/json"
	"fmt"

	"github.com/godelta/delta/deltaerr"
	"github.com/godelta/delta/expr"
	"github.com/godelta/delta/schema"
)

// colDefault is the default value of a top-level column, given to new
// rows that have none (PROTOCOL.md "Default Columns").
type colDefault struct {
	idx   int
	value schema.Value
}

// columnDefaults returns the defaults of sch's top-level columns (their
// CURRENT_DEFAULT metadata), evaluated: see parseDefault.
func columnDefaults(sch *schema.StructType) ([]colDefault, error) {
	var out []colDefault
	for i := range sch.Fields {
		f := &sch.Fields[i]
		raw, ok := f.Metadata.Get(schema.MetadataCurrentDefault)
		if !ok {
			continue
		}
		v, err := parseDefault(f, raw)
		if err != nil {
			return nil, err
		}
		out = append(out, colDefault{idx: i, value: v})
	}
	return out, nil
}

// parseDefault reads the CURRENT_DEFAULT metadata value of f, a JSON
// string of SQL, and returns the value it gives, of f's type. Only a
// literal is taken: a number (with a sign), a string, true or false, NULL,
// DATE '...', TIMESTAMP '...', and CAST of one of these; such a value is
// the same for every row, so it is computed once. Another expression
// (current_timestamp(), an arithmetic of literals) is refused with a
// *deltaerr.FeatureError (deltaerr.ErrUnsupportedFeature) rather than
// guessed at; a literal that does not convert to f's type, or a
// metadata value that is not a JSON string, with ErrInvalidSpec.
func parseDefault(f *schema.StructField, raw json.RawMessage) (schema.Value, error) {
	var text string
	if err := json.Unmarshal(raw, &text); err != nil {
		return schema.Value{}, specErr("column %s: %s is not a JSON string", f.Name, schema.MetadataCurrentDefault)
	}
	e, err := expr.Parse(text)
	if err != nil || !isLiteral(e) {
		return schema.Value{}, &deltaerr.FeatureError{Feature: fmt.Sprintf("column default %q of column %s (only literal defaults are written)", text, f.Name), Op: "write"}
	}
	none := expr.RowResolver(&schema.StructType{})
	v, err := expr.Compile(expr.Cast{Value: e, To: f.Type}, none).Value(nil)
	if err != nil {
		return schema.Value{}, specErr("column %s: default %s: %v", f.Name, text, err)
	}
	if v.IsNull() {
		// A cast that gives null for a value ('abc' to INT) is refused,
		// as Spark's ANSI casts refuse it.
		if lit, err := expr.Compile(e, none).Value(nil); err != nil || !lit.IsNull() {
			return schema.Value{}, specErr("column %s: default %s is not a value of type %s", f.Name, text, f.Type)
		}
	}
	if f.Type == schema.Variant && !v.IsNull() {
		// PROTOCOL.md: all columns of variant type must default to null.
		return schema.Value{}, specErr("column %s: a variant column can only default to NULL", f.Name)
	}
	return v, nil
}

// isLiteral reports whether e is a constant parseDefault takes.
func isLiteral(e expr.Expr) bool {
	switch e := e.(type) {
	case expr.Literal:
		return true
	case expr.Neg:
		return isLiteral(e.Value)
	case expr.Cast:
		return isLiteral(e.Value)
	}
	return false
}
