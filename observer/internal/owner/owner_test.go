package owner

import "testing"

func TestDecide_OnlyAnExplicitCronJobClaimStandsTheObserverDown(t *testing.T) {
	cases := []struct {
		name        string
		value       string
		present     bool
		beat, known bool
	}{
		{"no ConfigMap or key", "", false, true, true},
		{"empty value", "", true, true, true},
		{"operator", "operator", true, true, true},
		{"cronjob", "cronjob", true, false, true},
		{"cronjob, any case and spaces", "  CronJob\n", true, false, true},
		{"unknown value is no claim", "cron-job", true, true, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			beat, known := Decide(tc.value, tc.present)
			if beat != tc.beat || known != tc.known {
				t.Fatalf("Decide(%q, %v) = %v, %v; want %v, %v", tc.value, tc.present, beat, known, tc.beat, tc.known)
			}
		})
	}
}
