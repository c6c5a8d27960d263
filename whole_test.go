// Tests of Whole: every JSON form of a whole number, and what is not one.

package paymock

import (
	"encoding/json"
	"errors"
	"testing"
)

func TestWhole_ReadsEveryFormOfAWholeNumber(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"60", 60, true},
		{"-7", -7, true},
		{"-0", 0, true},
		{"60.0", 60, true},
		{"6e1", 60, true},
		{"6E+1", 60, true},
		{"600e-1", 60, true},
		{"0.6e2", 60, true},
		{"9223372036854775807", 9223372036854775807, true},
		{"-9223372036854775808", -9223372036854775808, true},
		{"9223372036854775808", 0, false},
		{"60.5", 0, false},
		{"60.000000000000001", 0, false},
		{"1e400", 0, false},
		{"1e-400", 0, false},
		{"1e99999999999", 0, false},
		{`"60"`, 0, false},
		{"true", 0, false},
	} {
		t.Run(tc.in, func(t *testing.T) {
			var v struct {
				N Whole `json:"n"`
			}
			err := json.Unmarshal([]byte(`{"n":`+tc.in+`}`), &v)
			if !tc.ok {
				var te *json.UnmarshalTypeError
				if !errors.As(err, &te) || te.Field != "n" {
					t.Fatalf("got %d, %v; want a type error naming n", v.N, err)
				}
				return
			}
			if err != nil || int64(v.N) != tc.want {
				t.Fatalf("got %d, %v; want %d", v.N, err, tc.want)
			}
		})
	}
}
