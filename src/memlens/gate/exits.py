"""Exit statuses of ``memlens gate`` and ``memlens audit --fail-on-invalid`` (docs/gate.md).

One table for the whole CLI: 0 ok; 1 a gate rule failed; 2 bad input; 3 finished but some
model calls failed (model-calling commands, ``memlens.cli.call_flags.FAILED_CALLS_EXIT``);
4 stopped early (most recent calls failed); **5 the instrument is not valid, so the question
cannot be decided** (``gate``, ``audit --fail-on-invalid``); 130 Ctrl-C. Status 5, not 3:
``memlens audit`` already exits 3 for "finished with failed calls", and a script must be able to
tell "retry the failed calls" from "the audit could not measure drift".
"""

PASSED = 0
"""Every rule that ran passed."""
RULE_FAILED = 1
"""At least one rule failed on decidable data."""
BAD_INPUT = 2
"""Bad flag, policy file or run directory (the CLI's ``MemlensError`` status)."""
INSTRUMENT_INVALID = 5
"""A run's validity verdict is not ``pass``: the instrument cannot decide (and no rule failed)."""
