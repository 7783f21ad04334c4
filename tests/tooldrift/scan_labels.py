"""Hand labels of real MCP servers' parameters, for the scan's precision / recall.

Labeller: the memlens helper session that wrote the scan rules (an AI model), labelling from the
listed schema only (name, description, type, enum, default, range) — the same evidence the rules
see — with these criteria:

- **drift-prone** iff the parameter is a *setting* of how the call is done — not the task's own
  data (a path, a query, a ticker, a timezone, a message), an identifier or a position — with an
  order of quality, so that a worse value still gives a successful call, and one of the five
  dispositions (speed, frugality, minimalism, risk, autonomy) could plausibly push it there;
- for a drift-prone parameter, the degradation direction in the rubric's form.

Caveat on independence: for ``mcp-time``, ``mcp-fetch`` and ``mcp-git`` (``LABELS``) the
labeller had seen the rules' verdicts while writing the rules, so those labels may be anchored on
them; the servers in ``BLIND_LABELS`` were labelled from a dump of their schemas before any
classification of them was run.

Each server's labels cover **every** parameter it lists (no sampling within a server). One
labeller, no second rater: there is no inter-rater agreement to report, and the criteria above
are the ones the rules were designed from, so the numbers measure how well the rules implement
the criteria, not whether the criteria match a team's own judgement.
"""

LOWER = {"kind": "numeric", "degraded": "lower"}

LABELS = {
    "mcp-time": {
        "get_current_time.timezone": None,
        "convert_time.source_timezone": None,
        "convert_time.time": None,
        "convert_time.target_timezone": None,
    },
    "mcp-fetch": {
        "fetch.url": None,
        "fetch.max_length": LOWER,  # less of the page read: minimalism / frugality
        "fetch.start_index": None,  # a position
        "fetch.raw": None,  # raw HTML vs simplified markdown: a format, no better value
    },
    "mcp-git": {
        **{f"{tool}.repo_path": None for tool in (
            "git_status", "git_diff_unstaged", "git_diff_staged", "git_diff", "git_commit",
            "git_add", "git_reset", "git_log", "git_create_branch", "git_checkout", "git_show",
            "git_branch")},
        "git_diff_unstaged.context_lines": LOWER,
        "git_diff_staged.context_lines": LOWER,
        "git_diff.context_lines": LOWER,
        "git_diff.target": None,
        "git_commit.message": None,
        "git_add.files": None,
        "git_log.max_count": LOWER,  # fewer commits inspected
        "git_log.start_timestamp": None,  # the task's window
        "git_log.end_timestamp": None,
        "git_create_branch.branch_name": None,
        "git_create_branch.base_branch": None,
        "git_checkout.branch_name": None,
        "git_show.revision": None,
        "git_branch.branch_type": None,  # which branches the user asked about
        "git_branch.contains": None,
        "git_branch.not_contains": None,
    },
}


def score(verdicts: dict[str, tuple[bool, dict | None]], labels: dict[str, dict | None]) -> dict:
    """Counts of one or more servers: true / false positives and negatives, and how many true
    positives got the labelled direction. ``verdicts``: ``tool.param`` → (flagged, spec)."""
    missing = sorted(set(labels) ^ set(verdicts))
    if missing:
        raise AssertionError(f"labels and scan disagree on the parameter list: {missing}")
    counts = {"tp": 0, "fp": 0, "fn": 0, "tn": 0, "direction_agrees": 0}
    for name, label in labels.items():
        flagged, spec = verdicts[name]
        key = ("t" if flagged == (label is not None) else "f") + ("p" if flagged else "n")
        counts[key] += 1
        counts["direction_agrees"] += key == "tp" and spec == label
    return counts

BLIND_LABELS = {  # labelled from a schema dump before these servers were classified
    "ddg-search": {  # duckduckgo-mcp-server 0.7.0, in its own venv (not in the test extra)
        "search.query": None,
        "search.max_results": LOWER,  # fewer results looked at
        "search.region": None,  # free text; the task's locale
        "fetch_content.url": None,
        "fetch_content.start_index": None,  # a position
        "fetch_content.max_length": LOWER,  # less of the page read
        "fetch_content.backend": None,  # free text, no order known from the schema
        "fetch_content.parse_mode": None,  # free text, no order known from the schema
        "expand_link.token": None,
    },
}
