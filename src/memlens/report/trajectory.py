"""The trajectory viewer: a baseline and a perturbed response aligned along the DTW path.

Every string that came from a model (step texts) or from user data (questions, stimuli, labels)
goes through ``memlens.textsafe.escape_html`` (HTML-escaped, bidi / control characters
neutralised); step texts are shortened to ``STEP_CHARS`` each and ``RESPONSE_CHARS`` per response.
The page's small script only toggles visibility.
"""

from __future__ import annotations

from memlens.metrics.path import dtw_path
from memlens.ontology.schema import UNLABELED
from memlens.report.html import RESPONSE_CHARS, STEP_CHARS, shorten
from memlens.textsafe import escape_html as escape

MAX_PAIRS = 400
"""The viewer holds at most this many pairs (whole questions, in question order)."""


def labelled_steps(steps: list[str], labels: list[str]) -> list[tuple[int, str, str]]:
    """(step number, symbol, text) of the steps that carry a symbol, in order.

    >>> labelled_steps(["a", "b", "c"], ["x", "unlabeled", "y"])
    [(1, 'x', 'a'), (3, 'y', 'c')]
    """
    return [(k + 1, label, text) for k, (text, label) in enumerate(zip(steps, labels, strict=False))
            if label != UNLABELED]


def aligned_rows(base: list[tuple[int, str, str]],
                 other: list[tuple[int, str, str]]) -> list[tuple[tuple, tuple, bool, bool]]:
    """Rows (base step, other step, mismatch, repeated) along the DTW path of the symbols."""
    _, path = dtw_path([s for _, s, _ in base], [s for _, s, _ in other])
    rows, previous = [], (-1, -1)
    for i, j in path:
        repeated = (i == previous[0], j == previous[1])
        rows.append((base[i], other[j], base[i][1] != other[j][1], repeated))
        previous = (i, j)
    return rows


def _cell(step: tuple[int, str, str], repeated: bool, budget: list[int]) -> str:
    """One side of a row; ``budget`` holds the characters this response may still show."""
    number, symbol, text = step
    if repeated:
        return f'<td class="num">{number}</td><td class="sym">{escape(symbol)}</td>' \
               '<td class="rep">(same step, aligned again)</td>'
    limit = min(STEP_CHARS, budget[0])
    budget[0] -= min(len(text), limit)
    return (f'<td class="num">{number}</td><td class="sym">{escape(symbol)}</td>'
            f'<td>{escape(shorten(text, limit))}</td>')


def pair_html(drift_row: dict, base_steps: dict, other_steps: dict,
              base_labels: list[str], other_labels: list[str]) -> str:
    """The aligned two-column table of one drift row."""
    base = labelled_steps(base_steps["steps"], base_labels)
    other = labelled_steps(other_steps["steps"], other_labels)
    lines, budgets = [], ([RESPONSE_CHARS], [RESPONSE_CHARS])
    for b, o, mismatch, (rep_b, rep_o) in aligned_rows(base, other):
        klass = ' class="mismatch"' if mismatch else ""
        lines.append(f"<tr{klass}>{_cell(b, rep_b, budgets[0])}{_cell(o, rep_o, budgets[1])}</tr>")
    head = (f'<p class="meta">DTW {drift_row["dtw"]:.3f} · SRI {drift_row["sri"]:.3f} · '
            f'{len(base)} vs {len(other)} labelled steps · memory: '
            f'<q>{escape(other_steps.get("stimulus_text") or "(none)")}</q></p>')
    table = ('<table class="traj"><tr><th colspan="3">baseline (no memory, sample 0)</th>'
             f'<th colspan="3">{escape(drift_row["stimulus_id"])} · sample '
             f'{int(drift_row["sample"])}</th></tr>' + "".join(lines) + "</table>")
    return head + table


def most_drifted_ids(drift_rows: list[dict], per_category: int = 3) -> set[str]:
    """Ids of the ``per_category`` highest-DTW perturbed rows of each category (what the
    report's "what changed" section links to; always kept in the viewer)."""
    by_cat: dict[str, list[dict]] = {}
    for row in drift_rows:
        if row.get("condition_class") != "control":
            by_cat.setdefault(row.get("category", ""), []).append(row)
    return {row["id"] for rows in by_cat.values()
            for row in sorted(rows, key=lambda r: -float(r.get("dtw", 0.0)))[:per_category]}


def viewer_html(drift_rows: list[dict], steps_rows: list[dict], label_rows: list[dict]) -> str:
    """The viewer section: selectors (question, category, condition, order) and one hidden
    panel per pair; a link to ``#tv-<response id>`` opens that pair."""
    steps = {row["id"]: row for row in steps_rows}
    labels = {row["id"]: row["labels"] for row in label_rows}
    chosen = sorted(drift_rows, key=lambda r: (r["question_id"], r["stimulus_id"], r["sample"]))
    questions: list[str] = []
    for row in chosen:
        if row["question_id"] not in questions:
            questions.append(row["question_id"])
    keep, count = set(), 0
    for question in questions:
        size = sum(1 for r in chosen if r["question_id"] == question)
        if count + size > MAX_PAIRS and keep:
            break
        keep.add(question)
        count += size
    linked = most_drifted_ids(drift_rows)
    chosen = [r for r in chosen if r["question_id"] in keep or r["id"] in linked]
    panels, options = [], []
    for n, row in enumerate(chosen):
        base, other = steps.get(row["baseline_id"]), steps.get(row["id"])
        if base is None or other is None:
            continue
        body = pair_html(row, base, other, labels.get(row["baseline_id"], []),
                         labels.get(row["id"], []))
        hidden = "" if n == 0 else " hidden"
        panels.append(f'<div class="pair" id="tv-{escape(row["id"])}" '
                      f'data-q="{escape(row["question_id"])}" '
                      f'data-k="{escape(row.get("category", ""))}" data-d="{float(row["dtw"]):.6f}" '
                      f'data-c="{escape(row["stimulus_id"])}|{int(row["sample"])}"{hidden}>'
                      f'<p class="question">{escape(base.get("question_text", ""))}</p>{body}</div>')
        options.append((row["question_id"], f'{row["stimulus_id"]}|{int(row["sample"])}',
                        row.get("category", "")))
    q_opts = "".join(f'<option value="{escape(q)}">{escape(q)}</option>'
                     for q in dict.fromkeys(q for q, _, _ in options))
    c_opts = "".join(f'<option value="{escape(c)}">{escape(c)}</option>'
                     for c in dict.fromkeys(c for _, c, _ in options))
    k_opts = '<option value="">all</option>' + "".join(
        f'<option value="{escape(k)}">{escape(k)}</option>'
        for k in sorted(dict.fromkeys(k for _, _, k in options)))
    note = (f"<p>{len(panels)} pairs from {len(keep)} questions"
            + (f" (the first {len(keep)} of {len(questions)} questions, plus the most drifted "
               "pairs of each category)" if len(keep) < len(questions) else "")
            + ". Rows whose symbols differ are highlighted.</p>")
    return (note + '<p>question <select id="tq">' + q_opts + '</select> category '
            '<select id="tk">' + k_opts + '</select> condition <select id="tc">' + c_opts
            + '</select> order <select id="to"><option value="c">by condition</option>'
            '<option value="d">by drift (DTW, largest first)</option></select> '
            '<span id="tmiss" hidden>no pair for this choice</span></p>'
            + "".join(panels) + VIEWER_SCRIPT)


VIEWER_SCRIPT = """<script>
(function(){var q=document.getElementById('tq'),c=document.getElementById('tc'),
k=document.getElementById('tk'),o=document.getElementById('to');if(!q){return;}
var all=Array.prototype.slice.call(document.querySelectorAll('div.pair'));
function conditions(){var keep=c.value,seen={},list=all.filter(function(d){
return d.dataset.q===q.value&&(!k.value||d.dataset.k===k.value);});
if(o.value==='d'){list.sort(function(a,b){return b.dataset.d-a.dataset.d;});}
while(c.firstChild){c.removeChild(c.firstChild);}
list.forEach(function(d){if(seen[d.dataset.c]){return;}seen[d.dataset.c]=1;
var e=document.createElement('option');e.value=d.dataset.c;
e.textContent=d.dataset.c+(o.value==='d'?' (DTW '+Number(d.dataset.d).toFixed(3)+')':'');
c.appendChild(e);});if(seen[keep]){c.value=keep;}}
function show(){var any=false;all.forEach(function(d){var on=d.dataset.q===q.value&&
d.dataset.c===c.value&&(!k.value||d.dataset.k===k.value);d.hidden=!on;any=any||on;});
document.getElementById('tmiss').hidden=any;}
function refresh(){conditions();show();}
function jump(){if(location.hash.indexOf('#tv-')!==0){return;}
var d=document.getElementById(decodeURIComponent(location.hash.slice(1)));if(!d){return;}
q.value=d.dataset.q;k.value='';conditions();c.value=d.dataset.c;show();d.scrollIntoView();}
q.addEventListener('change',refresh);k.addEventListener('change',refresh);
o.addEventListener('change',refresh);c.addEventListener('change',show);
window.addEventListener('hashchange',jump);refresh();jump();})();
</script>"""
