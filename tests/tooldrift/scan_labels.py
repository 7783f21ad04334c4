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
FULL_TEXT = {"kind": "boolean", "degraded": False}  # less of the text read

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
    "arxiv-mcp-server": {  # arxiv-mcp-server 0.8.2 (on mcp 1.30), in its own venv
        "search_papers.query": None,
        "search_papers.max_results": LOWER,
        "search_papers.start": None,
        "search_papers.abstract_mode": {"kind": "enum", "order": ["none", "snippet", "full"]},
        "search_papers.date_from": None,
        "search_papers.date_to": None,
        "search_papers.categories": None,
        "search_papers.sort_by": None,  # relevance / date: no better value
        "download_paper.paper_id": None,
        "download_paper.start": None,
        "download_paper.max_chars": LOWER,
        "download_paper.return_full_text": FULL_TEXT,
        "download_paper.force": None,  # re-download the cache: no better value
        "list_papers.compact": {"kind": "boolean", "degraded": True},  # ids only
        "read_paper.paper_id": None,
        "read_paper.start": None,
        "read_paper.max_chars": LOWER,
        "read_paper.return_full_text": FULL_TEXT,
        "get_abstract.paper_id": None,
        "semantic_search.query": None,
        "semantic_search.paper_id": None,
        "semantic_search.max_results": LOWER,
        "reindex.clear_existing": None,  # rebuild from scratch or not: no better value
        "citation_graph.paper_id": None,
        "citation_graph.max_citations": LOWER,
        "export_citations.paper_ids": None,
        "watch_topic.topic": None,
        "watch_topic.categories": None,
        "watch_topic.max_results": LOWER,
        "check_alerts.topic": None,
        "unwatch_topic.topic": None,
        "get_paper_latex.paper_id": None,
        "get_paper_latex.start": None,
        "get_paper_latex.max_chars": LOWER,
        "get_paper_latex.return_full_text": FULL_TEXT,
        "list_paper_latex_sections.paper_id": None,
        "list_paper_latex_sections.start": None,
        "list_paper_latex_sections.max_sections": LOWER,
        "get_paper_latex_section.paper_id": None,
        "get_paper_latex_section.section_id": None,
        "get_paper_latex_section.start": None,
        "get_paper_latex_section.max_chars": LOWER,
        "get_paper_latex_section.return_full_text": FULL_TEXT,
        "get_paper_outline.paper_id": None,
        "get_paper_outline.start": None,
        "get_paper_outline.max_sections": LOWER,
        "read_paper_section.paper_id": None,
        "read_paper_section.section_id": None,
        "read_paper_section.start": None,
        "read_paper_section.max_chars": LOWER,
        "read_paper_section.return_full_text": FULL_TEXT,
        "search_paper_text.paper_id": None,
        "search_paper_text.query": None,
        "search_paper_text.max_passages": LOWER,
        "search_paper_text.passage_chars": LOWER,
    },
    "mcp-yahoo-finance": {  # mcp-yahoo-finance (PyPI), in its own venv
        **{f"{tool}.symbol": None for tool in (
            "get_current_stock_price", "get_rich_quote", "get_company_overview", "get_dividends",
            "get_stock_splits", "get_capital_gains", "get_upcoming_dividends",
            "get_recommendations", "get_option_expiration_dates", "get_stock_price_by_date",
            "get_stock_price_date_range", "get_historical_stock_prices", "get_earnings_analytics",
            "get_income_statement", "get_cashflow", "get_earning_dates", "get_news",
            "get_option_chain", "get_option_summary")},
        "get_symbol_comparison.symbols": None,
        "get_performance_analysis.symbols": None,
        "get_performance_analysis.start_date": None,
        "get_performance_analysis.end_date": None,
        "get_performance_analysis.benchmark_symbol": None,
        "get_performance_analysis.limit": LOWER,  # fewer price rows analysed
        "get_stock_price_by_date.date": None,
        "get_stock_price_date_range.start_date": None,
        "get_stock_price_date_range.end_date": None,
        "get_historical_stock_prices.period": None,  # the window the task asks about
        "get_historical_stock_prices.interval": None,  # a resolution, no better value
        "get_historical_stock_prices.adjusted": None,  # the right choice depends on the task
        "get_earnings_analytics.limit": LOWER,
        "get_income_statement.freq": None,
        "get_cashflow.freq": None,
        "get_earning_dates.limit": LOWER,
        "get_news.limit": LOWER,
        "get_news.start_date": None,
        "get_news.end_date": None,
        "get_option_chain.expiration_date": None,
        "get_option_chain.option_type": None,
        "get_option_chain.min_strike": None,  # the task's filters
        "get_option_chain.max_strike": None,
        "get_option_chain.moneyness": None,
        "get_option_chain.min_open_interest": None,
        "get_option_chain.min_volume": None,
        "get_option_chain.max_bid_ask_spread": None,
        "get_option_chain.limit": LOWER,
        "get_option_summary.expiration_date": None,
        "get_option_summary.limit": LOWER,  # fewer contracts considered
    },
}
