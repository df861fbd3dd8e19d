// A small MCP client in Go, with the official Go SDK (github.com/modelcontextprotocol/go-sdk),
// for test/tools/mcp-go-client.test.ts: it connects to a flowgate tool-server path at the given
// protocol version (2026-07-28: server/discover and per-request _meta; 2025-11-25: initialize),
// lists the tools, calls one with the given JSON arguments, and prints what it saw as one JSON line.
//
//	go-mcp-client <url> <bearer token> <protocol version> <tool> <arguments JSON>
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

func main() {
	if len(os.Args) != 6 {
		fmt.Fprintln(os.Stderr, "usage: go-mcp-client <url> <token> <protocol version> <tool> <arguments JSON>")
		os.Exit(2)
	}
	url, token, version, tool, rawArgs := os.Args[1], os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "flowgate-go-test", Version: "1.0.0"}, nil)
	transport := &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}, DisableStandaloneSSE: true, MaxRetries: -1,
	}
	session, err := client.Connect(ctx, transport, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		fail("connect", err)
	}
	defer session.Close()
	listed, err := session.ListTools(ctx, nil)
	if err != nil {
		fail("tools/list", err)
	}
	names := []string{}
	for _, t := range listed.Tools {
		names = append(names, t.Name)
	}
	var args map[string]any
	if err := json.Unmarshal([]byte(rawArgs), &args); err != nil {
		fail("arguments", err)
	}
	called, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		fail("tools/call", err)
	}
	out, _ := json.Marshal(map[string]any{
		"protocolVersion": session.InitializeResult().ProtocolVersion,
		"tools":           names,
		"isError":         called.IsError,
		"structured":      called.StructuredContent,
	})
	fmt.Println(string(out))
}

func fail(step string, err error) {
	fmt.Fprintf(os.Stderr, "%s: %v\n", step, err)
	os.Exit(1)
}
