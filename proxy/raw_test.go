package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// rawSeeds are messages of the remote for the raw path's tests: the
// common shape, and the shapes it must leave to encoding/json or mcp-go.
var rawSeeds = []string{
	`{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}`,
	`{"jsonrpc":"2.0","id":"a-1","result":{"content":[{"type":"text","text":"[{\"id\":\"m1\",\"content\":\"\\u003cb\\u003e é \\ud83d\\ude00 \\ud800 x\"}]"}],"structuredContent":{"memories":[{"id":"m1","n":-1.5e+3}],"ok":true,"none":null}}}`,
	`{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"r"},"k":1},"resultType":"complete","content":[{"type":"text","text":"a","annotations":{"audience":["user"],"priority":0.5},"_meta":{"x":1}}],"isError":true,"requestState":"s"}}`,
	`{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"},{"type":"text","text":"t"}]}}`,
	`{"jsonrpc":"2.0","id":4,"result":{"content":[{"type":"resource","resource":{"uri":"file:///a","text":"x"}}]}}`,
	`{"jsonrpc":"2.0","id":5,"result":{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{}}}}}`,
	`{"jsonrpc":"2.0","id":6,"error":{"code":-32000,"message":"no"}}`,
	`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}`,
	`{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{}}`,
	`{"jsonrpc":"2.0","id":8,"result":{}}`,
	`{"jsonrpc":"2.0","id":9,"result":{"content":null}}`,
	`{"jsonrpc":"2.0","id":10,"result":{"content":[],"structuredContent":null}}`,
	`{"ID":11,"RESULT":{"Content":[{"TYPE":"text","Text":"case"}],"isERROR":true}}`,
	`{"id":12,"result":{"content":[{"type":"text","text":"one"}]},"result":{"content":[{"type":"text","text":"two"}],"isError":true}}`,
	`{"id":13,"result":{"content":[{"type":"text","text":"x","text":"y"}]}}`,
	`{"id":14,"result":{"content":[{"type":"text","text":"bad utf8 ` + "\xff\xfe" + ` end"}]}}`,
	`{"id":15,"result":{"content":[{"type":"text","text":1}]}}`,
	`{"id":16,"result":{"content":[{"type":"text"}]}}`,
	`{"id":17,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":{"a":01}}}`,
	`{"id":18,"result":{"content":[{"type":"text","text":"x"}]}} x`,
	`{"id":19,"result":{"content":[{"type":"text","text":"x"}],"isError":"yes"}}`,
	`{"id":null,"result":{"content":[]}}`,
	`{"id":{"a":1},"result":{"content":[]}}`,
	`{"id":20,"error":null,"result":{"content":[{"type":"text","text":"e"}]}}`,
	` {"id" : 21 , "result" : { "content" : [ { "type" : "text" , "text" : "sp" } ] , "structuredContent" : [ 1 , 2.0 , true , false , null ] } } `,
	`{"id":22,"result":{"content":[{"type":"text","text":"\u00e9\"\\\/\b\f\n\r\t"}]}}`,
	`{"id":23,"résult":{"content":[]}}`,
	`{"id":24,"result":{"content":[{"type":"text","text":"x"}],"structuredContent":` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}}`,
}

// FuzzScanRemoteMessage checks the raw path's fast scan against
// encoding/json, and both against mcp-go's own parsing of the result:
// whatever the fast scan takes, encoding/json takes the same way; whatever
// either takes, mcp-go reads as the same result (its structured content
// aside, which mcp-go decodes into a map and the proxy keeps as bytes).
//
//	go test -run '^$' -fuzz FuzzScanRemoteMessage -fuzztime 1m
func FuzzScanRemoteMessage(f *testing.F) {
	for _, s := range rawSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkRawDecode(t, data)
	})
}

func TestRawDecodeSeeds(t *testing.T) {
	taken := 0
	for _, s := range rawSeeds {
		if checkRawDecode(t, []byte(s)) {
			taken++
		}
	}
	if taken < 8 {
		t.Errorf("only %d seeds taken by the raw path", taken)
	}
	// The common shapes take the fast path.
	for _, i := range []int{0, 1, 2, 11, 12, 15, 24, 25, 27} {
		if _, _, ok := scanRemoteMessage([]byte(rawSeeds[i])); !ok {
			t.Errorf("the fast scan does not take %s", rawSeeds[i])
		}
	}
	// Around encoding/json's nesting limit, which jsonscan.Valid does not
	// have: 10,000 levels in all, the message's own included.
	deep := func(d int) string { return strings.Repeat("[", d) + strings.Repeat("]", d) }
	for _, s := range []string{
		`{"id":1,"result":{"content":[],"structuredContent":` + deep(9998) + `}}`,
		`{"id":1,"result":{"content":[],"structuredContent":` + deep(9999) + `}}`,
		`{"x":` + deep(9999) + `,"id":1,"result":{"content":[]}}`,
		`{"x":` + deep(10000) + `,"id":1,"result":{"content":[]}}`,
		`{"id":1,"result":{"content":[{"type":"text","text":"t","_meta":{"a":` + deep(9995) + `}}]}}`,
		`{"id":1,"result":{"content":[{"type":"text","text":"t","_meta":{"a":` + deep(9996) + `}}]}}`,
		`{"id":1,"result":{"content":[{"type":"text","text":"t","x":` + deep(9996) + `}]}}`,
		`{"id":1,"result":{"content":[{"type":"text","text":"t","x":` + deep(9997) + `}]}}`,
	} {
		checkRawDecode(t, []byte(s))
	}
}

// checkRawDecode checks the raw path on data and reports whether it took
// it.
func checkRawDecode(t *testing.T, data []byte) bool {
	t.Helper()
	sid, sres, sok := scanRemoteMessage(data)
	jid, jres, jok := unmarshalRemoteMessage(data)
	if sok {
		if !jok {
			t.Fatalf("the fast scan took what encoding/json does not: %q", data)
		}
		if !bytes.Equal(sid, jid) || !reflect.DeepEqual(sres, jres) {
			t.Fatalf("the fast scan and encoding/json differ on %q:\nscan %#v\njson %#v", data, sres, jres)
		}
	}
	if !jok {
		return false
	}
	var resp struct {
		ID     mcp.RequestId   `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(data, &resp); err != nil {
		t.Fatalf("taken, but mcp-go cannot read the response %q: %v", data, err)
	}
	want, err := mcp.ParseCallToolResult(&resp.Result)
	if err != nil {
		t.Fatalf("taken, but mcp-go fails on the result %q: %v", data, err)
	}
	if !reflect.DeepEqual(want.Content, jres.Content) || want.IsError != jres.IsError || !reflect.DeepEqual(want.Meta, jres.Meta) ||
		want.ResultType != jres.ResultType || want.RequestState != jres.RequestState || !bytes.Equal(want.RawStructuredContent, jres.RawStructuredContent) {
		t.Fatalf("the raw path reads %q otherwise than mcp-go:\nraw    %#v\nmcp-go %#v", data, jres, want)
	}
	// mcp-go reads the stub in its place with the same id.
	var stub struct {
		ID     mcp.RequestId   `json:"id"`
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(stubMessage(jid), &stub); err != nil || stub.ID.String() != resp.ID.String() || !bytes.Equal(stub.Result, rawStub) {
		t.Fatalf("stub of %q: %s (%v)", data, stubMessage(jid), err)
	}
	return true
}

// FuzzDescriptorKeyScan checks that the scan lookalikeJSON runs first
// never misses a descriptor look-alike that decoding finds.
func FuzzDescriptorKeyScan(f *testing.F) {
	for _, s := range []string{
		`{"offloaded":true}`, `{"OFFLOADED":1}`, `{"offl\u006faded":1}`, `{"a":{"offloaded":1},"b":[{"file_path":1}]}`,
		`{"file_path":"/x","jq_recipes":[]}`, `{"fıle_path":"/x","guidance":"g"}`, `{"x":"\"offloaded\":1","offloaded":0}`,
		`{"a":[1,{"b":"}"}],"Offloaded":null}`, ` { "k" : "v" , "file_PATH" : 1 , "line_schema" : {} } `,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var p descriptorProbe
		if json.Unmarshal(b, &p) != nil {
			return
		}
		if (p.Offloaded != nil || p.FilePath != nil) && !mayHaveDescriptorKey(b) {
			t.Fatalf("the key scan misses a descriptor key in %q", b)
		}
	})
}

func TestDescriptorKeyScan(t *testing.T) {
	for s, want := range map[string]bool{
		`{"offloaded":true}`:                      true,
		`{"OffLoaded":true}`:                      true,
		`{"offl\u006faded":1}`:                    true, // escaped: decoded to know
		`{"fıle_path":1}`:                         true, // not ASCII: decoded to know
		`{"a":{"offloaded":1}}`:                   false,
		`{"a":"offloaded","b":["file_path"]}`:     false,
		`{"a":"{\"offloaded\":1}"}`:               false,
		`{"records":[{"file_path":"x"}],"n":1}`:   false,
		`{"n":1, "file_path":"x"}`:                true,
		`{"memories":[{"id":"m1","text":"a}b"}]}`: false,
	} {
		if got := mayHaveDescriptorKey([]byte(s)); got != want {
			t.Errorf("mayHaveDescriptorKey(%s) = %v, want %v", s, got, want)
		}
	}
}

// BenchmarkDecodeRemoteMessage times the raw path's decoding of a result
// of 2 and of 200 memories, as text and as structured content: the fast
// scan, and encoding/json for reference.
//
//	go test -run '^$' -bench DecodeRemoteMessage -count 5
func BenchmarkDecodeRemoteMessage(b *testing.B) {
	for _, n := range []int{2, 200} {
		data := rawBenchMessage(b, n)
		for _, d := range []struct {
			name   string
			decode func([]byte) (json.RawMessage, *mcp.CallToolResult, bool)
		}{{"scan", scanRemoteMessage}, {"json", unmarshalRemoteMessage}} {
			b.Run(fmt.Sprintf("%d/%s", n, d.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(data)))
				for b.Loop() {
					if _, _, ok := d.decode(data); !ok {
						b.Fatal("not taken")
					}
				}
			})
		}
	}
}

// rawBenchMessage is a response of the remote with n memories, as text
// and as structured content.
func rawBenchMessage(b *testing.B, n int) []byte {
	memories := make([]map[string]any, n)
	for i := range memories {
		memories[i] = map[string]any{
			"id": fmt.Sprintf("m%d", i), "score": 0.5, "tags": []string{"cache", "é"},
			"content": strings.Repeat("<cache> line of a memory, é ", 12),
		}
	}
	text, err := json.Marshal(memories)
	if err != nil {
		b.Fatal(err)
	}
	data, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": map[string]any{
		"content":           []map[string]any{{"type": "text", "text": string(text)}},
		"structuredContent": map[string]any{"memories": memories},
	}})
	if err != nil {
		b.Fatal(err)
	}
	return data
}
