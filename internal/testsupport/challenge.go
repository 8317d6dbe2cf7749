package testsupport

import "strings"

// ChallengeScopes returns the space-separated scope parameter of a WWW-Authenticate value
// (`Bearer error="insufficient_scope", scope="a b", …`), for tests of step-up challenges.
func ChallengeScopes(www string) []string {
	_, rest, ok := strings.Cut(www, `scope="`)
	if !ok {
		return nil
	}
	v, _, _ := strings.Cut(rest, `"`)
	return strings.Fields(v)
}
