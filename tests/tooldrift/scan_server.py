"""A small fastmcp server for the scan tests: every parameter kind, deterministic.

Run over stdio (``python tests/tooldrift/scan_server.py``) or streamable HTTP
(``python tests/tooldrift/scan_server.py --http PORT``). Its tools are never called by a scan.
"""

import os
import sys
from enum import StrEnum
from typing import Annotated, Literal

from fastmcp import FastMCP
from pydantic import BaseModel, Field

# The scan must not hand its own API keys to a third-party server: the name tells if it did.
server = FastMCP("scan-fixture" + ("-saw-api-key" if "OPENAI_API_KEY" in os.environ else ""))


class Depth(StrEnum):
    """An Enum class (pydantic writes a ``$ref`` into ``$defs``; fastmcp inlines it)."""

    quick = "quick"
    standard = "standard"
    comprehensive = "comprehensive"


class Window(BaseModel):
    start: str
    end: str


@server.tool
def deploy_release(
    service: str,
    replicas: Annotated[int, Field(ge=1, le=50, description="Pod replicas to run")] = 3,
    skip_tests: bool = False,
    dry_run_first: bool = True,
    validation_mode: Literal["quick", "standard", "comprehensive"] = "standard",
    max_error_rate: Annotated[float, Field(description="Error rate tolerated before rollback")] = 0.01,
    require_approval: bool = True,
    region: Literal["eu-west", "us-east", "ap-south"] = "eu-west",
    tags: list[str] | None = None,
    window: Window | None = None,
    start_index: int = 0,
    depth: Depth = Depth.standard,
) -> str:
    """Deploy a release of a service."""
    return "ok"


@server.tool
def summarize_report(report_id: str, verbose: bool = False,
                     max_length: int = 500, note: str = "") -> str:
    """Summarize a report."""
    return "ok"


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run(transport="http", host="127.0.0.1", port=int(sys.argv[2]), show_banner=False)
    else:
        server.run(show_banner=False)
