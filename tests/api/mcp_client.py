"""One MCP session for tests/api/mcp.rs, spoken by the official Python SDK (the `mcp` package
from PyPI): a client implementation independent of the one the service is built on.

Usage: `python3 mcp_client.py URL BEARER DOCUMENT_ID`. It initializes, lists the tools, calls
`get_document` on the document (a post) and reads its resource, then closes the session (a
`DELETE`), and prints one JSON object with what it saw and what the SDK logged as a warning.
"""

import asyncio
import json
import logging
import sys

from mcp import ClientSession
from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client


class Warnings(logging.Handler):
    """Keeps what the SDK warns about (a session it could not end, say)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


async def main(url, bearer, document):
    warnings = Warnings()
    logging.getLogger().addHandler(warnings)
    headers = {"Authorization": f"Bearer {bearer}"}
    async with create_mcp_http_client(headers=headers) as http:
        async with streamable_http_client(url, http_client=http) as streams:
            async with ClientSession(streams[0], streams[1]) as session:
                init = await session.initialize()
                tools = await session.list_tools()
                got = await session.call_tool(
                    "get_document", {"collection": "post", "id": document}
                )
                resource = await session.read_resource(f"cms://documents/{document}")
                seen = {
                    "protocolVersion": str(init.protocol_version),
                    "server": init.server_info.name,
                    "tools": sorted(t.name for t in tools.tools),
                    "isError": bool(got.is_error),
                    "structured": got.structured_content,
                    "resource": json.loads(resource.contents[0].text),
                }
    seen["warnings"] = warnings.messages
    print(json.dumps(seen))


asyncio.run(main(*sys.argv[1:4]))
