"""A raw JSON-RPC stdio "MCP server" that misbehaves on purpose (scan error tests).

``python bad_mcp_server.py MODE [ARG]``:

- ``hang PIDFILE``: writes its pid to PIDFILE, then never answers;
- ``crash``: prints a message to stderr and exits 3 at once;
- ``oldproto``: answers ``initialize`` with protocol version 1999-01-01;
- ``tools FILE``: a well-behaved server whose ``tools/list`` returns the tools in FILE (JSON), one
  per page (``nextCursor``), so a malformed schema (a $ref cycle, a huge enum, a non-JSON-schema
  type) reaches the scanner.
"""

import json
import os
import sys
import time


def reply(message_id, result):
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message_id, "result": result}) + "\n")
    sys.stdout.flush()


def main() -> None:
    mode = sys.argv[1]
    if mode == "crash":
        sys.stderr.write("boom: cannot open the tool database\n")
        sys.exit(3)
    if mode == "hang":
        with open(sys.argv[2], "w") as handle:
            handle.write(str(os.getpid()))
        while True:
            time.sleep(1)
    tools = json.load(open(sys.argv[2])) if mode == "tools" else []
    for line in sys.stdin:
        message = json.loads(line)
        if message.get("method") == "initialize":
            version = ("1999-01-01" if mode == "oldproto"
                       else message["params"]["protocolVersion"])
            reply(message["id"], {"protocolVersion": version, "capabilities": {"tools": {}},
                                  "serverInfo": {"name": "bad-fixture", "version": "0"}})
        elif message.get("method") == "tools/list":  # one tool per page
            cursor = int((message.get("params") or {}).get("cursor") or 0)
            page = {"tools": tools[cursor:cursor + 1]}
            if cursor + 1 < len(tools):
                page["nextCursor"] = str(cursor + 1)
            reply(message["id"], page)
        elif "id" in message:
            reply(message["id"], {})


if __name__ == "__main__":
    main()
