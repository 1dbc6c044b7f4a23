package recipes

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIDName(t *testing.T) {
	for name, want := range map[string]bool{
		"id": true, "ID": true, "key": true, "uuid": true, "user_id": true, "user-key": true, "userId": true, "userID": true, "apiKey": true,
		"valid": false, "VALID": false, "paid": false, "monkey": false, "identity": false, "Id2": false,
	} {
		assert.Equal(t, want, idName(name), name)
	}
}
