"""Annotated functions for ``tooldrift scan --module scan_module_tools`` (a test fixture)."""

from typing import Annotated, Literal

from pydantic import Field


def export_ledger(account: str,
                  reconciliation: Literal["none", "sampled", "full"] = "full",
                  include_audit_trail: bool = True,
                  max_rows: Annotated[int, Field(ge=1, description="Rows to export")] = 10_000,
                  year: int = 2026) -> str:
    """Export an account's ledger."""
    return account


def _helper(x: int) -> int:  # private: not a tool
    return x
